import { z } from 'zod';
import type { Db } from '../../storage';
import {
  CHECK_STATUSES,
  deregister,
  getNode,
  nodeNamed,
  NodeRow,
  renderNode,
  renderService,
  renderServiceNode,
  ServiceRow,
  upsertCheck,
  upsertNode,
} from '../nodes';
import { blockingQuery, listFilter, NodeMetaQuery, nodeMetaMatches, ok } from '../query';
import { actorOf, badRequest, CatalogContext, catalogRoute, CommonQuery, consulObject, ignored, LOCAL_DATACENTER, READ_ONLY_FIELDS, requirePermission } from '../route';
import { requestWrites } from '../runtime';

const StringMap = z.record(z.string(), z.string()).optional();

/** A health check as the public service decodes it (structs.HealthCheck; the Go client's HealthCheck and AgentCheck). */
const CheckBody = consulObject({
  Node: z.string().optional(),
  CheckID: z.string().optional(),
  Name: z.string().optional(),
  Status: z.enum(CHECK_STATUSES).optional(),
  Notes: z.string().optional(),
  Output: z.string().optional(),
  ServiceID: z.string().optional(),
  ServiceName: z.string().optional(),
  Namespace: z.string().optional(),
  // Known to the public service, not used by Hangar (it runs no checks): accepted and ignored.
  ServiceTags: ignored,
  Type: ignored,
  Interval: ignored,
  Timeout: ignored,
  ExposedPort: ignored,
  Definition: ignored,
  PeerName: ignored,
  ...READ_ONLY_FIELDS,
});

/** A service as the public service decodes it (structs.NodeService; the Go client's AgentService). */
const ServiceBody = consulObject({
  ID: z.string().optional(),
  Service: z.string(),
  Tags: z.array(z.string()).optional(),
  Address: z.string().optional(),
  Port: z.number().int().min(0).max(65535).optional(),
  Meta: StringMap,
  Namespace: z.string().optional(),
  // Known to the public service, not used by Hangar: accepted and ignored.
  Kind: ignored,
  TaggedAddresses: ignored,
  Weights: ignored,
  EnableTagOverride: ignored,
  Ports: ignored,
  SocketPath: ignored,
  Proxy: ignored,
  Connect: ignored,
  PeerName: ignored,
  Locality: ignored,
  ContentHash: ignored,
  Datacenter: ignored,
  AI: ignored,
  ...READ_ONLY_FIELDS,
});

/** structs.RegisterRequest (the Go client's CatalogRegistration). */
const RegisterBody = consulObject({
  ID: z.string().optional(),
  Node: z.string().optional(),
  Address: z.string().optional(),
  Datacenter: z.string().optional(),
  TaggedAddresses: StringMap,
  NodeMeta: StringMap,
  Service: ServiceBody.optional(),
  Check: CheckBody.optional(),
  Checks: z.array(CheckBody).optional(),
  SkipNodeUpdate: z.boolean().optional(),
  Namespace: z.string().optional(),
  Partition: ignored,
  PeerName: ignored,
  Locality: ignored,
  // structs.WriteRequest, which py-consul sends as an object of its own.
  Token: ignored,
  WriteRequest: ignored,
});

/** structs.DeregisterRequest (the Go client's CatalogDeregistration). */
const DeregisterBody = consulObject({
  Node: z.string().optional(),
  Datacenter: z.string().optional(),
  CheckID: z.string().optional(),
  ServiceID: z.string().optional(),
  Namespace: z.string().optional(),
  Address: ignored,
  Partition: ignored,
  PeerName: ignored,
  Token: ignored,
  WriteRequest: ignored,
});

const NodeParam = z.object({ node: z.string().min(1) });
const ServiceParam = z.object({ service: z.string().min(1) });
const ListQuery = CommonQuery.extend({ 'node-meta': NodeMetaQuery });
const ServiceQuery = ListQuery.extend({ tag: z.union([z.string(), z.array(z.string())]).optional() });

/** Whether a service's tags include every `?tag=` asked for. */
export function hasTags(tags: readonly string[], wanted: string | readonly string[] | undefined): boolean {
  return wanted === undefined || (Array.isArray(wanted) ? wanted : [wanted]).every((t) => tags.includes(t));
}

/**
 * Service instances (one service, or all) with their nodes, that the caller may read (service:read
 * on the service, node:read on the node) and whose node has the `node-meta` asked for.
 */
async function serviceNodes(ctx: CatalogContext, db: Db, query: z.infer<typeof ListQuery>, service?: string) {
  const authz = actorOf(ctx).authz;
  const rows = await db.all<ServiceRow & { node_id: string; node_address: string; node_tagged: string; node_meta: string }>(
    `SELECT s.*, n.id AS node_id, n.address AS node_address, n.tagged_addresses AS node_tagged, n.meta AS node_meta
       FROM catalog_services s JOIN catalog_nodes n ON n.name = s.node ${service === undefined ? '' : 'WHERE s.name = ?'} ORDER BY s.node, s.id`,
    service === undefined ? [] : [service],
  );
  return rows
    .filter((r) => authz.allowed('service', 'read', r.name) && authz.allowed('node', 'read', r.node) && nodeMetaMatches(r.node_meta, query['node-meta']))
    .map((r) => {
      const node = { name: r.node, id: r.node_id, address: r.node_address, tagged_addresses: r.node_tagged, meta: r.node_meta };
      return renderServiceNode({ ...node, create_index: 0, modify_index: 0 }, r);
    });
}

function checkDatacenter(dc: string | undefined): void {
  if (dc && dc !== LOCAL_DATACENTER) throw badRequest(`No path to datacenter ${JSON.stringify(dc)}`);
}

/** /v1/catalog/*: nodes, their services and checks. */
export const catalogNodeRoutes = [
  catalogRoute({
    method: 'PUT',
    path: '/v1/catalog/register',
    query: CommonQuery,
    body: RegisterBody,
    permission: 'node:write (service:write for a service)',
    handler: async ({ body }, ctx) => {
      checkDatacenter(body.Datacenter);
      if (!body.Node) throw badRequest('Missing node name');
      if (!body.Address && !body.SkipNodeUpdate) throw badRequest('Missing node address');
      requirePermission(ctx, 'node', 'write', body.Node);
      if (body.Service) requirePermission(ctx, 'service', 'write', body.Service.Service);
      const writes = requestWrites(ctx);
      await writes.lock();
      if (body.SkipNodeUpdate && !(await nodeNamed(ctx.db, body.Node))) throw badRequest(`Node ${JSON.stringify(body.Node)} is not registered`);
      await upsertNode(writes, {
        name: body.Node,
        id: body.ID,
        address: body.Address ?? '',
        taggedAddresses: body.TaggedAddresses,
        meta: body.NodeMeta,
        skipNodeUpdate: body.SkipNodeUpdate,
      });
      if (body.Service) {
        const s = body.Service;
        const id = s.ID || s.Service;
        const index = await writes.next('nodes');
        await ctx.db.run(
          `INSERT INTO catalog_services (node, id, name, tags, address, port, meta, create_index, modify_index) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (node, id) DO UPDATE SET name = excluded.name, tags = excluded.tags, address = excluded.address,
             port = excluded.port, meta = excluded.meta, modify_index = excluded.modify_index`,
          [body.Node, id, s.Service, JSON.stringify(s.Tags ?? []), s.Address ?? '', s.Port ?? 0, JSON.stringify(s.Meta ?? {}), index, index],
        );
      }
      for (const check of [...(body.Check ? [body.Check] : []), ...(body.Checks ?? [])]) {
        if (check.Node && check.Node !== body.Node) throw badRequest(`Check node ${JSON.stringify(check.Node)} does not match ${JSON.stringify(body.Node)}`);
        const checkId = check.CheckID || check.Name;
        if (!checkId) throw badRequest('Missing check ID');
        let serviceName = check.ServiceName ?? '';
        if (check.ServiceID) {
          const service = await ctx.db.get<ServiceRow>('SELECT * FROM catalog_services WHERE node = ? AND id = ?', [body.Node, check.ServiceID]);
          if (!service) throw badRequest(`Unknown service ID ${JSON.stringify(check.ServiceID)} for check ${JSON.stringify(checkId)}`);
          serviceName = service.name;
        }
        await upsertCheck(
          writes,
          body.Node,
          { checkId, name: check.Name ?? checkId, status: check.Status ?? 'critical', notes: check.Notes ?? '', output: check.Output ?? '', serviceId: check.ServiceID ?? '', serviceName },
          ctx.now,
        );
      }
      return true;
    },
  }),
  catalogRoute({
    method: 'PUT',
    path: '/v1/catalog/deregister',
    query: CommonQuery,
    body: DeregisterBody,
    permission: 'node:write',
    handler: async ({ body }, ctx) => {
      checkDatacenter(body.Datacenter);
      if (!body.Node) throw badRequest('Missing node name');
      requirePermission(ctx, 'node', 'write', body.Node);
      if (await getNode(ctx.db, body.Node)) {
        // The Go client sends "" for the IDs it has no value for: empty is "not given".
        await deregister(requestWrites(ctx), body.Node, { checkId: body.CheckID || undefined, serviceId: body.ServiceID || undefined }, ctx.now);
      }
      return true;
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/catalog/nodes',
    query: ListQuery,
    permission: 'node:read (filtered)',
    transaction: 'read',
    handler: async ({ query }, ctx) => {
      const authz = actorOf(ctx).authz;
      const filter = listFilter(query.filter);
      return blockingQuery(ctx, query, ['nodes'], async (db) => {
        const rows = await db.all<NodeRow>('SELECT * FROM catalog_nodes ORDER BY name');
        const visible = rows.filter((r) => authz.allowed('node', 'read', r.name) && nodeMetaMatches(r.meta, query['node-meta']));
        return ok(filter(visible.map(renderNode)));
      });
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/catalog/services',
    query: ListQuery,
    permission: 'service:read (filtered)',
    transaction: 'read',
    handler: async ({ query }, ctx) => {
      const filter = listFilter(query.filter);
      return blockingQuery(ctx, query, ['nodes'], async (db) => {
        // Service names with the union of their instances' tags (the filter sees each instance).
        const out: Record<string, string[]> = {};
        for (const instance of filter(await serviceNodes(ctx, db, query))) {
          const tags = (out[instance.ServiceName as string] ??= []);
          for (const tag of instance.ServiceTags as string[]) if (!tags.includes(tag)) tags.push(tag);
        }
        return ok(out);
      });
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/catalog/service/:service',
    params: ServiceParam,
    query: ServiceQuery,
    permission: 'service:read and node:read (filtered)',
    transaction: 'read',
    handler: async ({ params, query }, ctx) => {
      const filter = listFilter(query.filter);
      return blockingQuery(ctx, query, ['nodes'], async (db) => {
        const instances = await serviceNodes(ctx, db, query, params.service);
        return ok(filter(instances.filter((i) => hasTags(i.ServiceTags as string[], query.tag))));
      });
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/catalog/node/:node',
    params: NodeParam,
    query: CommonQuery,
    permission: 'node:read',
    transaction: 'read',
    handler: async ({ params, query }, ctx) => {
      const authz = actorOf(ctx).authz;
      return blockingQuery(ctx, query, ['nodes'], async (db) => {
        const node = await getNode(db, params.node);
        if (!node || !authz.allowed('node', 'read', node.name)) return ok(null);
        const services = await db.all<ServiceRow>('SELECT * FROM catalog_services WHERE node = ? ORDER BY id', [node.name]);
        const visible = services.filter((s) => authz.allowed('service', 'read', s.name));
        return ok({ Node: renderNode(node), Services: Object.fromEntries(visible.map((s) => [s.id, renderService(s)])) });
      });
    },
  }),
];
