import { z } from 'zod';
import type { Db } from '../../storage';
import type { Authorizer } from '../acl/authorizer';
import { CHECK_STATUSES } from '../checks';
import { readNamespace } from '../namespaces';
import { CheckRow, NodeRow, renderCheck, renderNode } from '../nodes';
import { blockingQuery, listFilter, NodeMetaQuery, nodeMetaMatches, ok } from '../query';
import { actorOf, badRequest, CatalogContext, catalogRoute, CommonQuery } from '../route';
import { renderService, ServiceRow } from '../services';
import { hasTags } from './catalog-nodes';

const ListQuery = CommonQuery.extend({ 'node-meta': NodeMetaQuery });
const ServiceQuery = ListQuery.extend({ tag: z.union([z.string(), z.array(z.string())]).optional(), passing: z.string().optional() });
/** A node's name is the rest of the path (names with '/'). */
const NodePath = z.object({ '*': z.string().min(1) });
const ServiceParam = z.object({ service: z.string().min(1) });
const StateParam = z.object({ state: z.string() });

/** The checks of some nodes (all without a list), each with its service's tags. */
async function checksOf(db: Db, where: string, params: string[]): Promise<{ row: CheckRow; rendered: Record<string, unknown> }[]> {
  const rows = await db.all<CheckRow & { tags: string | null }>(
    `SELECT c.*, s.tags AS tags FROM catalog_checks c LEFT JOIN catalog_services s ON s.node = c.node AND s.ns = c.ns AND s.id = c.service_id
      ${where} ORDER BY c.node, c.check_id`,
    params,
  );
  return rows.map((row) => ({ row, rendered: renderCheck(row, row.tags ? (JSON.parse(row.tags) as string[]) : []) }));
}

/** A check is visible with node:read on its node, and service:read on its service when it has one. */
function mayReadCheck(authz: Authorizer, row: CheckRow): boolean {
  return authz.allowed('node', 'read', row.node) && (!row.service_id || authz.allowed('service', 'read', row.service_name, row.ns));
}

/** Whether a check is in the namespace a read looks in (`?ns=*`: any). */
function namespaceTest(ctx: CatalogContext, query: CommonQuery): (row: { ns: string }) => boolean {
  const ns = readNamespace(ctx, query);
  return (row) => ns === undefined || row.ns === ns;
}

/** /v1/health/*: checks by node, service and state, and service instances with their health. */
export const healthRoutes = [
  catalogRoute({
    method: 'GET',
    path: '/v1/health/node/*',
    params: NodePath,
    query: CommonQuery,
    permission: 'node:read (checks filtered by service:read)',
    transaction: 'read',
    handler: async ({ params, query }, ctx) => {
      const authz = actorOf(ctx).authz;
      const filter = listFilter(query.filter);
      const inNs = namespaceTest(ctx, query);
      return blockingQuery(ctx, query, ['nodes'], async (db) => {
        const checks = await checksOf(db, 'WHERE c.node = ?', [params['*']]);
        return ok(filter(checks.filter((c) => inNs(c.row) && mayReadCheck(authz, c.row)).map((c) => c.rendered)));
      });
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/health/checks/:service',
    params: ServiceParam,
    query: ListQuery,
    permission: 'service:read (filtered by node:read)',
    transaction: 'read',
    handler: async ({ params, query }, ctx) => {
      const authz = actorOf(ctx).authz;
      const filter = listFilter(query.filter);
      const inNs = namespaceTest(ctx, query);
      return blockingQuery(ctx, query, ['nodes'], async (db) => {
        const checks = await checksOf(db, 'WHERE c.service_name = ?', [params.service]);
        const metaOk = await nodeMetaFilter(db, query['node-meta']);
        return ok(filter(checks.filter((c) => mayReadCheck(authz, c.row) && inNs(c.row) && metaOk(c.row.node)).map((c) => c.rendered)));
      });
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/health/state/:state',
    params: StateParam,
    query: ListQuery,
    permission: 'node:read and service:read (filtered)',
    transaction: 'read',
    handler: async ({ params, query }, ctx) => {
      const { state } = params;
      if (state !== 'any' && !(CHECK_STATUSES as readonly string[]).includes(state)) throw badRequest(`Invalid state: ${JSON.stringify(state)}`);
      const authz = actorOf(ctx).authz;
      const filter = listFilter(query.filter);
      const inNs = namespaceTest(ctx, query);
      return blockingQuery(ctx, query, ['nodes'], async (db) => {
        const checks = state === 'any' ? await checksOf(db, '', []) : await checksOf(db, 'WHERE c.status = ?', [state]);
        const metaOk = await nodeMetaFilter(db, query['node-meta']);
        return ok(filter(checks.filter((c) => mayReadCheck(authz, c.row) && inNs(c.row) && metaOk(c.row.node)).map((c) => c.rendered)));
      });
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/health/service/:service',
    params: ServiceParam,
    query: ServiceQuery,
    permission: 'service:read and node:read (filtered)',
    transaction: 'read',
    handler: async ({ params, query }, ctx) => {
      const authz = actorOf(ctx).authz;
      const filter = listFilter(query.filter);
      // `?passing` (any value but "false" or "0") keeps instances whose checks all pass (warning counts as failing).
      const passingOnly = query.passing !== undefined && !['false', '0'].includes(query.passing);
      const inNs = namespaceTest(ctx, query);
      return blockingQuery(ctx, query, ['nodes'], async (db) => {
        const services = await db.all<ServiceRow>('SELECT * FROM catalog_services WHERE name = ? ORDER BY node, id', [params.service]);
        const out = [];
        for (const service of services) {
          if (!inNs(service) || !authz.allowed('service', 'read', service.name, service.ns) || !authz.allowed('node', 'read', service.node)) continue;
          if (!hasTags(JSON.parse(service.tags) as string[], query.tag)) continue;
          const node = (await db.get<NodeRow>('SELECT * FROM catalog_nodes WHERE name = ?', [service.node]))!;
          if (!nodeMetaMatches(node.meta, query['node-meta'])) continue;
          // The node's own checks and the instance's.
          const checks = (await checksOf(db, "WHERE c.node = ? AND (c.service_id = '' OR (c.ns = ? AND c.service_id = ?))", [service.node, service.ns, service.id]))
            .map((c) => c.row);
          if (passingOnly && checks.some((c) => c.status !== 'passing')) continue;
          const tags = JSON.parse(service.tags) as string[];
          out.push({ Node: renderNode(node), Service: renderService(service), Checks: checks.map((c) => renderCheck(c, tags)) });
        }
        return ok(filter(out));
      });
    },
  }),
];

/** A test of a node's name against `node-meta` pairs (true for every node without pairs). */
async function nodeMetaFilter(db: Db, pairs: readonly string[][] | undefined): Promise<(node: string) => boolean> {
  if (!pairs?.length) return () => true;
  const rows = await db.all<NodeRow>('SELECT * FROM catalog_nodes');
  const matching = new Set(rows.filter((r) => nodeMetaMatches(r.meta, pairs)).map((r) => r.name));
  return (node) => matching.has(node);
}
