import { z } from 'zod';
import { HangarError } from '../../http/errors';
import { AfterCommit } from '../../http/routes';
import { agentNode } from '../agent';
import { requestNamespace, requireLiveNamespace } from '../namespaces';
import { getNode } from '../nodes';
import { blockingQuery, ok } from '../query';
import { actorOf, badRequest, CatalogContext, catalogRoute, CommonQuery, consulObject, READ_ONLY_FIELDS, requirePermission, UUID } from '../route';
import { requestWrites } from '../runtime';
import { ensureServerNode } from '../servers';
import {
  createSession, getSession, invalidateSessions, parseLockDelay, renderSession, renewedExpiry, renewSession, SERF_HEALTH, SessionRow,
} from '../sessions';

const CreateBody = consulObject({
  LockDelay: z.union([z.string(), z.number()]).optional(),
  Node: z.string().optional(),
  Name: z.string().optional(),
  Checks: z.array(z.string()).optional(),
  NodeChecks: z.array(z.string()).optional(),
  ServiceChecks: z.array(consulObject({ ID: z.string(), Namespace: z.string().optional() })).optional(),
  Behavior: z.string().optional(),
  TTL: z.string().optional(),
  Namespace: z.string().optional(),
  ID: z.string().optional(),
  // structs.Session's computed fields: accepted and ignored.
  ...READ_ONLY_FIELDS,
});

const Uuid = z.object({ uuid: z.string() });
const NodeParam = z.object({ node: z.string().min(1) });

/** The session in the path: a malformed UUID is an error, an unknown one is "not there". */
function sessionId(uuid: string): string {
  if (!UUID.test(uuid)) throw badRequest(`Session ID ${JSON.stringify(uuid)} is not a valid UUID`);
  return uuid.toLowerCase();
}

/** Sessions the caller may read: session:read on the session's node. */
function visible(ctx: CatalogContext, rows: SessionRow[]): Record<string, unknown>[] {
  const authz = actorOf(ctx).authz;
  return rows.filter((r) => authz.allowed('session', 'read', r.node, r.ns)).map(renderSession);
}

/** A session list in one namespace, or in all (`ns=*`). */
function nsFilter(ctx: CatalogContext, query: CommonQuery): { sql: string; params: string[] } {
  if (query.ns === '*') return { sql: '1 = 1', params: [] };
  return { sql: 'ns = ?', params: [requestNamespace(ctx, query)] };
}

/** /v1/session/*: sessions, the leases that hold locks in the KV store. */
export const sessionRoutes = [
  catalogRoute({
    method: 'PUT',
    path: '/v1/session/create',
    query: CommonQuery,
    body: CreateBody,
    permission: 'session:write (on the session\'s node)',
    handler: async ({ query, body }, ctx) => {
      if (body.ID) throw badRequest('Cannot specify the ID when creating a session');
      const ns = requestNamespace(ctx, query, body.Namespace);
      const node = body.Node || agentNode(ctx.engine);
      requirePermission(ctx, 'session', 'write', node, ns);
      await requireLiveNamespace(ctx.db, ns);
      const behavior = body.Behavior || 'release';
      if (behavior !== 'release' && behavior !== 'delete') throw badRequest(`Invalid Behavior setting '${behavior}': use "release" or "delete"`);
      const writes = requestWrites(ctx);
      // Checks is the pre-1.7 name of NodeChecks; without either the node's serfHealth check applies.
      const nodeChecks =
        body.NodeChecks == null && body.Checks == null ? [SERF_HEALTH] : [...new Set([...(body.NodeChecks ?? []), ...(body.Checks ?? [])])];
      const session = await createSession(
        writes,
        {
          ns,
          name: body.Name ?? '',
          node,
          lockDelayNs: body.LockDelay === undefined ? 15e9 : parseLockDelay(body.LockDelay),
          behavior,
          ttl: body.TTL ?? '',
          nodeChecks,
          serviceChecks: body.ServiceChecks?.map((c) => ({ ID: c.ID, Namespace: c.Namespace ?? ns })) ?? null,
        },
        ctx.now,
        node === agentNode(ctx.engine) ? () => ensureServerNode(writes, ctx.engine) : undefined,
      );
      return { ID: session.id };
    },
  }),
  catalogRoute({
    method: 'PUT',
    path: '/v1/session/destroy/:uuid',
    params: Uuid,
    query: CommonQuery,
    permission: 'session:write',
    handler: async ({ params, query }, ctx) => {
      const id = sessionId(params.uuid);
      const session = await getSession(ctx.db, id);
      if (!session || (query.ns !== undefined && session.ns !== requestNamespace(ctx, query))) return true;
      requirePermission(ctx, 'session', 'write', session.node, session.ns);
      await invalidateSessions(requestWrites(ctx), [session], ctx.now);
      return true;
    },
  }),
  catalogRoute({
    method: 'PUT',
    path: '/v1/session/renew/:uuid',
    params: Uuid,
    query: CommonQuery,
    permission: 'session:write',
    // Read-only: most renewals write nothing (a client renewing every TTL/2, as the official
    // clients do, writes on one call in three), and those that must write do it in a transaction
    // of their own, where the session may be gone already.
    transaction: 'read',
    handler: async ({ params }, ctx) => {
      const id = sessionId(params.uuid);
      const existing = await getSession(ctx.db, id);
      if (!existing) throw sessionNotFound(id);
      requirePermission(ctx, 'session', 'write', existing.node, existing.ns);
      if (renewedExpiry(existing, ctx.now) === undefined) return [renderSession(existing)];
      return new AfterCommit(() =>
        ctx.engine.storage.tx(async (db) => {
          const current = await getSession(db, id);
          if (!current) throw sessionNotFound(id);
          return [renderSession(await renewSession(db, current, ctx.now))];
        }),
      );
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/session/info/:uuid',
    params: Uuid,
    query: CommonQuery,
    permission: 'session:read',
    transaction: 'read',
    handler: async ({ params, query }, ctx) => {
      const id = sessionId(params.uuid);
      return blockingQuery(ctx, query, ['sessions'], async (db) => {
        const row = await getSession(db, id);
        return ok(row ? visible(ctx, [row]) : []);
      });
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/session/node/:node',
    params: NodeParam,
    query: CommonQuery,
    permission: 'session:read',
    transaction: 'read',
    handler: async ({ params, query }, ctx) => {
      const filter = nsFilter(ctx, query);
      return blockingQuery(ctx, query, ['sessions', 'nodes'], async (db) => {
        const node = (await getNode(db, params.node))?.name ?? params.node;
        const rows = await db.all<SessionRow>(`SELECT * FROM catalog_sessions WHERE node = ? AND ${filter.sql} ORDER BY create_index`, [node, ...filter.params]);
        return ok(visible(ctx, rows));
      });
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/session/list',
    query: CommonQuery,
    permission: 'session:read',
    transaction: 'read',
    handler: async ({ query }, ctx) => {
      const filter = nsFilter(ctx, query);
      return blockingQuery(ctx, query, ['sessions'], async (db) => {
        const rows = await db.all<SessionRow>(`SELECT * FROM catalog_sessions WHERE ${filter.sql} ORDER BY create_index`, filter.params);
        return ok(visible(ctx, rows));
      });
    },
  }),
];

const sessionNotFound = (id: string) => new HangarError(404, [`Session id '${id}' not found`]);
