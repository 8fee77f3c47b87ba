import { z } from 'zod';
import {
  CheckRow,
  CHECK_STATUSES,
  deregister,
  getNode,
  NodeRow,
  renderCheck,
  renderNode,
  renderService,
  ServiceRow,
  upsertCheck,
  upsertNode,
} from '../nodes';
import { blockingQuery, ok } from '../query';
import { actorOf, badRequest, catalogRoute, CommonQuery, consulObject, LOCAL_DATACENTER, requirePermission } from '../route';
import { requestWrites } from '../runtime';

const StringMap = z.record(z.string(), z.string()).nullish();

const CheckBody = consulObject({
  Node: z.string().optional(),
  CheckID: z.string().optional(),
  Name: z.string().optional(),
  Status: z.enum(CHECK_STATUSES).optional(),
  Notes: z.string().optional(),
  Output: z.string().optional(),
  ServiceID: z.string().optional(),
  ServiceName: z.string().optional(),
  ServiceTags: z.array(z.string()).nullish(),
  Type: z.string().optional(),
  Definition: z.record(z.string(), z.unknown()).nullish(),
  Namespace: z.string().optional(),
  Partition: z.string().optional(),
  CreateIndex: z.number().optional(),
  ModifyIndex: z.number().optional(),
});

const ServiceBody = consulObject({
  ID: z.string().optional(),
  Service: z.string(),
  Tags: z.array(z.string()).nullish(),
  Address: z.string().optional(),
  Port: z.number().int().min(0).max(65535).optional(),
  Meta: StringMap,
  TaggedAddresses: z.record(z.string(), z.unknown()).nullish(),
  Weights: z.record(z.string(), z.unknown()).nullish(),
  EnableTagOverride: z.boolean().optional(),
  Kind: z.string().optional(),
  Namespace: z.string().optional(),
  Partition: z.string().optional(),
});

const RegisterBody = consulObject({
  ID: z.string().optional(),
  Node: z.string().optional(),
  Address: z.string().optional(),
  Datacenter: z.string().optional(),
  TaggedAddresses: StringMap,
  NodeMeta: StringMap,
  Service: ServiceBody.nullish(),
  Check: CheckBody.nullish(),
  Checks: z.array(CheckBody).nullish(),
  SkipNodeUpdate: z.boolean().optional(),
  Namespace: z.string().optional(),
  Partition: z.string().optional(),
});

const DeregisterBody = consulObject({
  Node: z.string().optional(),
  Datacenter: z.string().optional(),
  CheckID: z.string().optional(),
  ServiceID: z.string().optional(),
  Namespace: z.string().optional(),
  Partition: z.string().optional(),
});

const NodeParam = z.object({ node: z.string().min(1) });

function checkDatacenter(dc: string | undefined): void {
  if (dc && dc !== LOCAL_DATACENTER) throw badRequest(`No path to datacenter ${JSON.stringify(dc)}`);
}

/** /v1/catalog/* and /v1/health/node: nodes, their services and checks. */
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
      if (body.SkipNodeUpdate && !(await getNode(ctx.db, body.Node))) throw badRequest(`Node ${JSON.stringify(body.Node)} is not registered`);
      await upsertNode(writes, {
        name: body.Node,
        id: body.ID,
        address: body.Address ?? '',
        taggedAddresses: body.TaggedAddresses ?? undefined,
        meta: body.NodeMeta ?? undefined,
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
        await deregister(requestWrites(ctx), body.Node, { checkId: body.CheckID, serviceId: body.ServiceID }, ctx.now);
      }
      return true;
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/catalog/nodes',
    query: CommonQuery,
    permission: 'node:read (filtered)',
    transaction: 'none',
    handler: async ({ query }, ctx) => {
      const authz = actorOf(ctx).authz;
      return blockingQuery(ctx, query, ['nodes'], async (db) => {
        const rows = await db.all<NodeRow>('SELECT * FROM catalog_nodes ORDER BY name');
        return ok(rows.filter((r) => authz.allowed('node', 'read', r.name)).map(renderNode));
      });
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/catalog/node/:node',
    params: NodeParam,
    query: CommonQuery,
    permission: 'node:read',
    transaction: 'none',
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
  catalogRoute({
    method: 'GET',
    path: '/v1/health/node/:node',
    params: NodeParam,
    query: CommonQuery,
    permission: 'node:read',
    transaction: 'none',
    handler: async ({ params, query }, ctx) => {
      const authz = actorOf(ctx).authz;
      return blockingQuery(ctx, query, ['nodes'], async (db) => {
        if (!authz.allowed('node', 'read', params.node)) return ok([]);
        const rows = await db.all<CheckRow>('SELECT * FROM catalog_checks WHERE node = ? ORDER BY check_id', [params.node]);
        return ok(rows.map(renderCheck));
      });
    },
  }),
];
