import { z } from 'zod';
import type { Db } from '../../storage';
import { checkStatus, checkTypeOf, DefinitionBody, definitionOf } from '../checks';
import { readNamespace, requestNamespace, requireLiveNamespace } from '../namespaces';
import { deregister, getNode, nodeNamed, NodeRow, renderNode, renderServiceNode, upsertCheck, upsertNode } from '../nodes';
import { blockingQuery, listFilter, NodeMetaQuery, nodeMetaMatches, ok } from '../query';
import {
  actorOf, badRequest, CatalogContext, catalogRoute, CommonQuery, consulObject, ignored, LOCAL_DATACENTER, READ_ONLY_FIELDS, requirePermission, UUID,
} from '../route';
import { requestWrites } from '../runtime';
import { getService, renderService, SERVICE_FIELDS, ServiceRow, upsertService, validateMetadata, validateService } from '../services';

const StringMap = z.record(z.string(), z.string()).optional();

/** A health check as the public service decodes it (structs.HealthCheck; the Go client's HealthCheck and AgentCheck). */
const CheckBody = consulObject({
  Node: z.string().optional(),
  CheckID: z.string().optional(),
  Name: z.string().optional(),
  // Empty is "not given": critical, as the public service registers it.
  Status: z.string().optional(),
  Notes: z.string().optional(),
  Output: z.string().optional(),
  ServiceID: z.string().optional(),
  ServiceName: z.string().optional(),
  Namespace: z.string().optional(),
  Type: z.string().max(64).optional(),
  Interval: z.string().max(64).optional(),
  Timeout: z.string().max(64).optional(),
  ExposedPort: z.number().int().min(0).max(65535).optional(),
  Definition: DefinitionBody.optional(),
  // Known to the public service, computed by it: accepted and ignored.
  ServiceTags: ignored,
  PeerName: ignored,
  ...READ_ONLY_FIELDS,
});

/** A service as the public service decodes it (structs.NodeService; the Go client's AgentService). */
const ServiceBody = consulObject({
  Service: z.string(),
  ...SERVICE_FIELDS,
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

/** A node's name is the rest of the path: names with '/' are read as the public service reads them. */
const NodePath = z.object({ '*': z.string() });
const ServiceParam = z.object({ service: z.string().min(1) });
const ListQuery = CommonQuery.extend({ 'node-meta': NodeMetaQuery });
const ServiceQuery = ListQuery.extend({ tag: z.union([z.string(), z.array(z.string())]).optional() });

/** Whether a service's tags include every `?tag=` asked for. */
export function hasTags(tags: readonly string[], wanted: string | readonly string[] | undefined): boolean {
  return wanted === undefined || (Array.isArray(wanted) ? wanted : [wanted]).every((t) => tags.includes(t));
}

/**
 * Service instances (one service, or all) with their nodes, in the request's namespace, that the
 * caller may read (service:read on the service, node:read on the node) and whose node has the
 * `node-meta` asked for.
 */
async function serviceNodes(ctx: CatalogContext, db: Db, query: z.infer<typeof ListQuery>, service?: string) {
  const authz = actorOf(ctx).authz;
  const ns = readNamespace(ctx, query);
  const rows = await db.all<ServiceRow & { node_id: string; node_address: string; node_tagged: string; node_meta: string }>(
    `SELECT s.*, n.id AS node_id, n.address AS node_address, n.tagged_addresses AS node_tagged, n.meta AS node_meta
       FROM catalog_services s JOIN catalog_nodes n ON n.name = s.node ${service === undefined ? '' : 'WHERE s.name = ?'} ORDER BY s.node, s.id`,
    service === undefined ? [] : [service],
  );
  return rows
    .filter((r) => (ns === undefined || r.ns === ns) && authz.allowed('service', 'read', r.name, r.ns) && authz.allowed('node', 'read', r.node)
      && nodeMetaMatches(r.node_meta, query['node-meta']))
    .map((r) => {
      const node = { name: r.node, id: r.node_id, address: r.node_address, tagged_addresses: r.node_tagged, meta: r.node_meta };
      return renderServiceNode({ ...node, create_index: 0, modify_index: 0 }, r);
    });
}

function checkDatacenter(dc: string | undefined): void {
  if (dc && dc !== LOCAL_DATACENTER) throw badRequest(`No path to datacenter ${JSON.stringify(dc)}`);
}

/** The public service's answer for a bad node ID (a UUID, when given). */
function checkNodeId(id: string | undefined): void {
  if (id && !UUID.test(id)) throw badRequest('Bad node ID: uuid string is wrong length');
}

/** A node and its services in the request's namespace that the caller may read; undefined when the node is not visible. */
async function nodeServices(ctx: CatalogContext, db: Db, query: CommonQuery, name: string) {
  const authz = actorOf(ctx).authz;
  const node = await getNode(db, name);
  if (!node || !authz.allowed('node', 'read', node.name)) return undefined;
  const ns = readNamespace(ctx, query);
  const services = await db.all<ServiceRow>('SELECT * FROM catalog_services WHERE node = ? ORDER BY id', [node.name]);
  return { node, services: services.filter((s) => (ns === undefined || s.ns === ns) && authz.allowed('service', 'read', s.name, s.ns)) };
}

/** /v1/catalog/*: nodes, their services and checks. */
export const catalogNodeRoutes = [
  catalogRoute({
    method: 'PUT',
    path: '/v1/catalog/register',
    query: CommonQuery,
    body: RegisterBody,
    permission: 'node:write (service:write for a service)',
    handler: async ({ body, query }, ctx) => {
      checkDatacenter(body.Datacenter);
      if (!body.Node) throw badRequest('Missing node name');
      if (!body.Address && !body.SkipNodeUpdate) throw badRequest('Missing node address');
      checkNodeId(body.ID);
      validateMetadata('Invalid node metadata', body.NodeMeta, true);
      const ns = requestNamespace(ctx, query, body.Namespace);
      const service = body.Service;
      const serviceNs = service?.Namespace || ns;
      requirePermission(ctx, 'node', 'write', body.Node);
      if (service) {
        validateService(service, false);
        requirePermission(ctx, 'service', 'write', service.Service, serviceNs);
      }
      const checks = [...(body.Check ? [body.Check] : []), ...(body.Checks ?? [])].map((check) => {
        if (check.Node && check.Node !== body.Node) throw badRequest(`Check node ${JSON.stringify(check.Node)} does not match ${JSON.stringify(body.Node)}`);
        const checkId = check.CheckID || check.Name;
        if (!checkId) throw badRequest('Missing check ID');
        return { ...check, checkId, ns: check.Namespace || (check.ServiceID ? serviceNs : ns), status: checkStatus(check.Status) };
      });
      const writes = requestWrites(ctx);
      await writes.lock();
      for (const namespace of new Set([ns, serviceNs, ...checks.map((c) => c.ns)])) await requireLiveNamespace(ctx.db, namespace);
      if (body.SkipNodeUpdate && !(await nodeNamed(ctx.db, body.Node))) throw badRequest(`Node ${JSON.stringify(body.Node)} is not registered`);
      await upsertNode(writes, {
        name: body.Node,
        id: body.ID,
        address: body.Address ?? '',
        taggedAddresses: body.TaggedAddresses,
        meta: body.NodeMeta,
        skipNodeUpdate: body.SkipNodeUpdate,
      });
      if (service) await upsertService(writes, body.Node, serviceNs, service.Service, service);
      for (const check of checks) {
        let serviceName = check.ServiceName ?? '';
        if (check.ServiceID) {
          const owner = await getService(ctx.db, body.Node, check.ns, check.ServiceID);
          if (!owner) throw badRequest(`Unknown service ID '${check.ServiceID}' for check ID '${check.checkId}'`);
          serviceName = owner.name;
        }
        const definition = definitionOf(check.Definition ?? {});
        await upsertCheck(
          writes,
          body.Node,
          {
            checkId: check.checkId,
            ns: check.ns,
            name: check.Name ?? check.checkId,
            status: check.status,
            notes: check.Notes ?? '',
            output: check.Output ?? '',
            serviceId: check.ServiceID ?? '',
            serviceName,
            type: check.Type || checkTypeOf(definition),
            interval: check.Interval,
            timeout: check.Timeout,
            exposedPort: check.ExposedPort,
            definition,
          },
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
    handler: async ({ body, query }, ctx) => {
      checkDatacenter(body.Datacenter);
      if (!body.Node) throw badRequest('Missing node name');
      requirePermission(ctx, 'node', 'write', body.Node);
      if (await getNode(ctx.db, body.Node)) {
        // The Go client sends "" for the IDs it has no value for: empty is "not given".
        const what = { ns: requestNamespace(ctx, query, body.Namespace), checkId: body.CheckID || undefined, serviceId: body.ServiceID || undefined };
        await deregister(requestWrites(ctx), body.Node, what, ctx.now);
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
    path: '/v1/catalog/node/*',
    params: NodePath,
    query: CommonQuery,
    permission: 'node:read',
    transaction: 'read',
    handler: async ({ params, query }, ctx) => {
      if (!params['*']) throw badRequest('Missing node name');
      return blockingQuery(ctx, query, ['nodes'], async (db) => {
        const found = await nodeServices(ctx, db, query, params['*']);
        if (!found) return ok(null);
        return ok({ Node: renderNode(found.node), Services: Object.fromEntries(found.services.map((s) => [s.id, renderService(s)])) });
      });
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/catalog/node-services/*',
    params: NodePath,
    query: CommonQuery,
    permission: 'node:read',
    transaction: 'read',
    handler: async ({ params, query }, ctx) => {
      if (!params['*']) throw badRequest('Missing node name');
      const filter = listFilter(query.filter);
      // structs.NodeServiceList (1.7+): the services as a list; a node that is not there is null.
      return blockingQuery(ctx, query, ['nodes'], async (db) => {
        const found = await nodeServices(ctx, db, query, params['*']);
        if (!found) return ok({ Node: null, Services: [] });
        return ok({ Node: renderNode(found.node), Services: filter(found.services.map(renderService)) });
      });
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/catalog/datacenters',
    query: CommonQuery,
    permission: 'public',
    transaction: 'read',
    handler: async () => [LOCAL_DATACENTER],
  }),
];
