import { createHash } from 'node:crypto';
import { z } from 'zod';
import { notFound } from '../../http/errors';
import { Reply } from '../../http/routes';
import {
  AGENT_SERVICES_WHERE,
  agentCheckOf,
  agentNode,
  agentService,
  healthCode,
  renderAgentService,
  serviceHealth,
  setMaintenance,
  storeAgentCheck,
} from '../agent';
import { AgentCheckBody, SERVICE_MAINTENANCE_PREFIX } from '../checks';
import { readNamespace, requestNamespace, requireLiveNamespace } from '../namespaces';
import { deregister } from '../nodes';
import { listFilter } from '../query';
import { actorOf, badRequest, CatalogContext, catalogRoute, CommonQuery, consulObject, ignored, requirePermission } from '../route';
import { requestWrites } from '../runtime';
import { ensureServerNode } from '../servers';
import { getService, SERVICE_FIELDS, ServiceRow, upsertService, validateService } from '../services';

/** structs.ServiceDefinition (the Go client's AgentServiceRegistration): the service, with its checks. */
const ServiceDefinitionBody = consulObject({
  Name: z.string().optional(),
  ...SERVICE_FIELDS,
  Check: AgentCheckBody.optional(),
  Checks: z.array(AgentCheckBody).optional(),
  Token: ignored,
  Partition: ignored,
}, { snakeCase: true });

/** The rest of the path: service IDs may contain '/'. */
const IdPath = z.object({ '*': z.string() });
const RegisterQuery = CommonQuery.extend({ 'replace-existing-checks': z.string().optional() });
const MaintenanceQuery = CommonQuery.extend({ enable: z.string().optional(), reason: z.string().max(4096).optional() });
const HealthQuery = CommonQuery.extend({ format: z.string().optional() });

/** A check with no field set is "no check" (the Go client's zero-valued AgentServiceCheck). */
const isEmptyCheck = (check: AgentCheckBody) => Object.values(check).every((v) => v === undefined || v === '' || v === false || v === 0);

/** `?enable=` as Go's strconv.ParseBool reads it, the public service's 400s otherwise. */
export function parseEnable(value: string | undefined): boolean {
  if (value === undefined || value === '') throw badRequest('Missing value for enable');
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  throw badRequest(`Invalid value for enable: ${JSON.stringify(value)}`);
}

/**
 * The agent's services in the request's namespace that the caller may read (not the server's `consul`
 * service: AGENT_SERVICES_WHERE).
 */
async function visibleServices(ctx: CatalogContext, query: CommonQuery): Promise<ServiceRow[]> {
  const authz = actorOf(ctx).authz;
  const ns = readNamespace(ctx, query);
  const rows = await ctx.db.all<ServiceRow>(`SELECT * FROM catalog_services s WHERE ${AGENT_SERVICES_WHERE} ORDER BY id`, [agentNode(ctx.engine)]);
  return rows.filter((r) => (ns === undefined || r.ns === ns) && authz.allowed('service', 'read', r.name, r.ns));
}

/** An agent health answer: the aggregated status as text (`?format=text`) or the JSON, with the public service's code. */
function healthReply(status: string, body: unknown, format: string | undefined): Reply {
  const code = healthCode(status);
  return format === 'text' ? new Reply(code, status, { 'content-type': 'text/plain; charset=utf-8' }) : new Reply(code, body);
}

/** /v1/agent/service*: services registered through this server's agent, on its node. */
export const agentServiceRoutes = [
  catalogRoute({
    method: 'PUT',
    path: '/v1/agent/service/register',
    query: RegisterQuery,
    body: ServiceDefinitionBody,
    permission: 'service:write',
    handler: async ({ body, query }, ctx) => {
      const name = body.Name;
      if (!name) throw badRequest('Missing service name');
      validateService(body, true);
      const ns = requestNamespace(ctx, query, body.Namespace);
      requirePermission(ctx, 'service', 'write', name, ns);
      const id = body.ID || name;
      const bodies = [...(body.Check && !isEmptyCheck(body.Check) ? [body.Check] : []), ...(body.Checks ?? [])];
      const checks = bodies.map((c, i) => agentCheckOf(c, `service:${id}${bodies.length > 1 ? `:${i + 1}` : ''}`, `Service '${name}' check`));
      const node = agentNode(ctx.engine);
      const writes = requestWrites(ctx);
      await writes.lock();
      await requireLiveNamespace(ctx.db, ns);
      await ensureServerNode(writes, ctx.engine);
      await upsertService(writes, node, ns, name, body);
      const service = (await getService(ctx.db, node, ns, id))!;
      if (query['replace-existing-checks'] !== undefined) {
        // The service's other checks go; its maintenance check stays (it is not a registered check).
        const keep = new Set([...checks.map((c) => c.checkId), `${SERVICE_MAINTENANCE_PREFIX}${id}`]);
        const old = await ctx.db.all<{ check_id: string }>('SELECT check_id FROM catalog_checks WHERE node = ? AND ns = ? AND service_id = ?', [node, ns, id]);
        for (const { check_id: checkId } of old) if (!keep.has(checkId)) await deregister(writes, node, { ns, checkId }, ctx.now);
      }
      for (const check of checks) await storeAgentCheck(writes, node, ns, check, service, ctx.now);
      return new Reply(200);
    },
  }),
  catalogRoute({
    method: 'PUT',
    path: '/v1/agent/service/deregister/*',
    params: IdPath,
    query: CommonQuery,
    permission: 'service:write',
    handler: async ({ params, query }, ctx) => {
      const ns = requestNamespace(ctx, query);
      const node = agentNode(ctx.engine);
      const service = await agentService(ctx.db, node, ns, params['*']);
      requirePermission(ctx, 'service', 'write', service.name, ns);
      await deregister(requestWrites(ctx), node, { ns, serviceId: service.id }, ctx.now);
      return new Reply(200);
    },
  }),
  catalogRoute({
    method: 'PUT',
    path: '/v1/agent/service/maintenance/*',
    params: IdPath,
    query: MaintenanceQuery,
    permission: 'service:write',
    handler: async ({ params, query }, ctx) => {
      const enable = parseEnable(query.enable);
      const ns = requestNamespace(ctx, query);
      const node = agentNode(ctx.engine);
      const service = await agentService(ctx.db, node, ns, params['*']);
      requirePermission(ctx, 'service', 'write', service.name, ns);
      await setMaintenance(ctx.engine, requestWrites(ctx), node, ns, service, enable, query.reason ?? '', ctx.now);
      return new Reply(200);
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/agent/services',
    query: CommonQuery,
    permission: 'service:read (filtered)',
    transaction: 'read',
    handler: async ({ query }, ctx) => {
      const filter = listFilter(query.filter);
      const services = filter((await visibleServices(ctx, query)).map(renderAgentService));
      return Object.fromEntries(services.map((s) => [s.ID as string, s]));
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/agent/service/*',
    params: IdPath,
    query: CommonQuery,
    permission: 'service:read',
    transaction: 'read',
    handler: async ({ params, query }, ctx) => {
      const ns = requestNamespace(ctx, query);
      const row = await getService(ctx.db, agentNode(ctx.engine), ns, params['*']);
      if (!row) throw notFound(`unknown service ID: ${params['*']}`);
      requirePermission(ctx, 'service', 'read', row.name, ns);
      const service = renderAgentService(row);
      // A hash of what the agent holds, as the public service answers it (clients compare it to see a change).
      const hash = createHash('sha256').update(JSON.stringify(service)).digest('hex').slice(0, 16);
      return new Reply(200, { ...service, ContentHash: hash }, { 'x-consul-contenthash': hash });
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/agent/health/service/id/*',
    params: IdPath,
    query: HealthQuery,
    permission: 'service:read',
    transaction: 'read',
    handler: async ({ params, query }, ctx) => {
      const ns = requestNamespace(ctx, query);
      const row = await getService(ctx.db, agentNode(ctx.engine), ns, params['*']);
      if (!row) throw notFound(`ServiceId ${params['*']} not found`);
      requirePermission(ctx, 'service', 'read', row.name, ns);
      const { status, body } = await serviceHealth(ctx.db, row);
      return healthReply(status, body, query.format);
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/agent/health/service/name/*',
    params: IdPath,
    query: HealthQuery,
    permission: 'service:read',
    transaction: 'read',
    handler: async ({ params, query }, ctx) => {
      const name = params['*'];
      const ns = requestNamespace(ctx, query);
      requirePermission(ctx, 'service', 'read', name, ns);
      const rows = await ctx.db.all<ServiceRow>(
        'SELECT * FROM catalog_services WHERE node = ? AND ns = ? AND name = ? ORDER BY id', [agentNode(ctx.engine), ns, name],
      );
      if (rows.length === 0) throw notFound(`ServiceName ${name} Not Found`);
      const infos = await Promise.all(rows.map((row) => serviceHealth(ctx.db, row)));
      // The worst code of the instances: 503 before 429 before 200.
      const worst = infos.map((i) => i.status).sort((a, b) => healthCode(b) - healthCode(a))[0];
      return healthReply(worst, infos.map((i) => i.body), query.format);
    },
  }),
];
