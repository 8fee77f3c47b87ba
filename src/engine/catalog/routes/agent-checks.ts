import { z } from 'zod';
import { Reply } from '../../http/routes';
import { AGENT_CHECKS_WHERE, AGENT_STATUSES, agentCheck, agentCheckOf, agentNode, storeAgentCheck, updateTtlCheck } from '../agent';
import { AgentCheckBody } from '../checks';
import { readNamespace, requestNamespace, requireLiveNamespace } from '../namespaces';
import { CheckRow, deregister, renderCheck } from '../nodes';
import { listFilter } from '../query';
import { actorOf, badRequest, CatalogContext, catalogRoute, CommonQuery, consulObject, requirePermission } from '../route';
import { requestWrites } from '../runtime';
import { ensureServerNode } from '../servers';
import { getService } from '../services';

const IdPath = z.object({ '*': z.string() });
const NoteQuery = CommonQuery.extend({ note: z.string().optional() });
/** structs.checkUpdate: the status and output of a TTL check. */
const UpdateBody = consulObject({ Status: z.string().optional(), Output: z.string().optional() });

/** A check's write permission: service:write on its service, node:write on the node for a node check. */
function requireCheckWrite(ctx: CatalogContext, check: { node: string; ns: string; service_id: string; service_name: string }): void {
  if (check.service_id) requirePermission(ctx, 'service', 'write', check.service_name, check.ns);
  else requirePermission(ctx, 'node', 'write', check.node);
}

/** pass, warn and fail: a TTL check's status, with `?note=` as its output. */
function ttlRoute(verb: 'pass' | 'warn' | 'fail', status: string) {
  return catalogRoute({
    method: 'PUT',
    path: `/v1/agent/check/${verb}/*`,
    params: IdPath,
    query: NoteQuery,
    permission: 'service:write (node:write for a node check)',
    handler: async ({ params, query }, ctx) => {
      const check = await agentCheck(ctx.db, agentNode(ctx.engine), requestNamespace(ctx, query), params['*']);
      requireCheckWrite(ctx, check);
      await updateTtlCheck(requestWrites(ctx), check, status, query.note ?? '', ctx.now);
      return new Reply(200);
    },
  });
}

/** /v1/agent/check*: checks registered through this server's agent, on its node. */
export const agentCheckRoutes = [
  catalogRoute({
    method: 'GET',
    path: '/v1/agent/checks',
    query: CommonQuery,
    permission: 'node:read / service:read (filtered)',
    transaction: 'read',
    handler: async ({ query }, ctx) => {
      const authz = actorOf(ctx).authz;
      const ns = readNamespace(ctx, query);
      const filter = listFilter(query.filter);
      const rows = await ctx.db.all<CheckRow & { tags: string | null }>(
        `SELECT c.*, s.tags AS tags FROM catalog_checks c LEFT JOIN catalog_services s ON s.node = c.node AND s.ns = c.ns AND s.id = c.service_id
          WHERE ${AGENT_CHECKS_WHERE} ORDER BY c.check_id`,
        [agentNode(ctx.engine)],
      );
      const visible = rows.filter((r) => (ns === undefined || r.ns === ns)
        && (r.service_id ? authz.allowed('service', 'read', r.service_name, r.ns) : authz.allowed('node', 'read', r.node)));
      const checks = filter(visible.map((r) => renderCheck(r, r.tags ? (JSON.parse(r.tags) as string[]) : [])));
      return Object.fromEntries(checks.map((c) => [c.CheckID as string, c]));
    },
  }),
  catalogRoute({
    method: 'PUT',
    path: '/v1/agent/check/register',
    query: CommonQuery,
    body: AgentCheckBody,
    permission: 'service:write (node:write for a node check)',
    handler: async ({ body, query }, ctx) => {
      if (!body.Name) throw badRequest('Missing check name');
      const check = agentCheckOf(body);
      const ns = requestNamespace(ctx, query, body.Namespace);
      const node = agentNode(ctx.engine);
      const service = body.ServiceID ? await getService(ctx.db, node, ns, body.ServiceID) : undefined;
      if (body.ServiceID && !service) throw badRequest(`ServiceID ${JSON.stringify(body.ServiceID)} does not exist`);
      if (service) requirePermission(ctx, 'service', 'write', service.name, ns);
      else requirePermission(ctx, 'node', 'write', node);
      const writes = requestWrites(ctx);
      await writes.lock();
      await requireLiveNamespace(ctx.db, ns);
      await ensureServerNode(writes, ctx.engine);
      await storeAgentCheck(writes, node, ns, check, service, ctx.now);
      return new Reply(200);
    },
  }),
  catalogRoute({
    method: 'PUT',
    path: '/v1/agent/check/deregister/*',
    params: IdPath,
    query: CommonQuery,
    permission: 'service:write (node:write for a node check)',
    handler: async ({ params, query }, ctx) => {
      const check = await agentCheck(ctx.db, agentNode(ctx.engine), requestNamespace(ctx, query), params['*']);
      requireCheckWrite(ctx, check);
      await deregister(requestWrites(ctx), check.node, { ns: check.ns, checkId: check.check_id }, ctx.now);
      return new Reply(200);
    },
  }),
  ttlRoute('pass', 'passing'),
  ttlRoute('warn', 'warning'),
  ttlRoute('fail', 'critical'),
  catalogRoute({
    method: 'PUT',
    path: '/v1/agent/check/update/*',
    params: IdPath,
    query: CommonQuery,
    body: UpdateBody,
    permission: 'service:write (node:write for a node check)',
    handler: async ({ params, query, body }, ctx) => {
      const status = body.Status ?? '';
      if (!(AGENT_STATUSES as readonly string[]).includes(status)) throw badRequest(`Invalid check status: '${status}'`);
      const check = await agentCheck(ctx.db, agentNode(ctx.engine), requestNamespace(ctx, query), params['*']);
      requireCheckWrite(ctx, check);
      await updateTtlCheck(requestWrites(ctx), check, status, body.Output ?? '', ctx.now);
      return new Reply(200);
    },
  }),
];
