import { z } from 'zod';
import { HangarError } from '../../http/errors';
import { Reply } from '../../http/routes';
import { deleteKv, getKv, keysOf, listKv, putKv, renderKv } from '../kv';
import { requestNamespace, requireLiveNamespace } from '../namespaces';
import { blockingQuery, ok } from '../query';
import { actorOf, badRequest, CatalogContext, catalogRoute, CommonQuery, permissionDenied, requirePermission, toUint64, UUID } from '../route';
import { requestWrites } from '../runtime';
import { getSession } from '../sessions';

const MAX_VALUE_BYTES = 512 * 1024;

const Key = z.object({ '*': z.string() });
const flag = z.string().optional();
const uint = (name: string) =>
  z
    .string()
    .regex(/^\d+$/, `Invalid ${name} value: must be an unsigned integer`)
    .transform(Number)
    .optional();

const GetQuery = CommonQuery.extend({ recurse: flag, keys: flag, raw: flag, separator: z.string().optional() });
const Flags = z
  .string()
  .transform((text, ctx) => toUint64(text) ?? (ctx.addIssue({ code: 'custom', message: 'Invalid flags value: must be an unsigned 64-bit integer' }), z.NEVER))
  .optional();
const PutQuery = CommonQuery.extend({ flags: Flags, cas: uint('cas'), acquire: z.string().optional(), release: z.string().optional() });
const DeleteQuery = CommonQuery.extend({ recurse: flag, cas: uint('cas') });

const notFound = { status: 404, body: undefined };

/** The key from the raw URL: the router drops a trailing slash, which matters for prefixes ("app/"). */
function keyOf(ctx: CatalogContext): string {
  const path = ctx.request.url.split('?')[0].slice('/v1/kv/'.length);
  try {
    return decodeURIComponent(path);
  } catch {
    throw badRequest('Invalid key: malformed percent-encoding');
  }
}

/** /v1/kv/*: the key/value store, with session locks. */
/** `?raw`: a found key is answered with its value's bytes themselves. */
function rawValue(reply: Reply): Reply {
  if (reply.status !== 200) return reply;
  const headers = { ...reply.headers, 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' };
  return new Reply(200, Buffer.from(reply.body as string, 'base64'), headers);
}

export const kvRoutes = [
  catalogRoute({
    method: 'GET',
    path: '/v1/kv/*',
    params: Key,
    query: GetQuery,
    permission: 'key:read (entries filtered by key:read)',
    transaction: 'read',
    handler: async ({ query }, ctx) => {
      const key = keyOf(ctx);
      const ns = requestNamespace(ctx, query);
      const authz = actorOf(ctx).authz;
      if (query.keys !== undefined) {
        return blockingQuery(ctx, query, ['kvs'], async (db) => {
          const rows = (await listKv(db, ns, key)).filter((r) => authz.allowed('key', 'list', r.key, ns));
          const keys = keysOf(rows, key, query.separator);
          return keys.length === 0 && key !== '' ? notFound : ok(keys);
        });
      }
      if (query.recurse !== undefined) {
        return blockingQuery(ctx, query, ['kvs'], async (db) => {
          const rows = (await listKv(db, ns, key)).filter((r) => authz.allowed('key', 'read', r.key, ns));
          return rows.length === 0 ? notFound : ok(rows.map(renderKv));
        });
      }
      requirePermission(ctx, 'key', 'read', key, ns);
      return blockingQuery(
        ctx,
        query,
        ['kvs'],
        async (db) => {
          const row = await getKv(db, ns, key);
          if (!row) return notFound;
          return ok(query.raw !== undefined ? (row.value ?? '') : [renderKv(row)]);
        },
        query.raw === undefined ? undefined : rawValue,
      );
    },
  }),
  catalogRoute({
    method: 'PUT',
    path: '/v1/kv/*',
    params: Key,
    query: PutQuery,
    permission: 'key:write',
    handler: async ({ query, body }, ctx) => {
      const key = keyOf(ctx);
      if (!key) throw badRequest('Missing key name');
      if (query.acquire !== undefined && query.release !== undefined) throw badRequest('Conflicting flags: acquire and release');
      const ns = requestNamespace(ctx, query);
      requirePermission(ctx, 'key', 'write', key, ns);
      await requireLiveNamespace(ctx.db, ns);
      const bytes = Buffer.isBuffer(body) ? body : Buffer.alloc(0);
      if (bytes.length > MAX_VALUE_BYTES) {
        throw new HangarError(413, [`Request body(${bytes.length} bytes) too large, max size: ${MAX_VALUE_BYTES} bytes.`]);
      }
      const sessionId = query.acquire ?? query.release;
      if (sessionId !== undefined) {
        if (!UUID.test(sessionId)) throw badRequest(`Invalid session ${JSON.stringify(sessionId)}: not a UUID`);
        const session = await getSession(ctx.db, sessionId);
        if (!session || session.ns !== ns) throw badRequest(`invalid session ${JSON.stringify(sessionId)}`);
      }
      return putKv(
        requestWrites(ctx),
        {
          ns,
          key,
          value: bytes.length > 0 ? bytes.toString('base64') : null,
          flags: query.flags ?? '0',
          cas: query.cas,
          acquire: query.acquire,
          release: query.release,
        },
        ctx.now,
      );
    },
  }),
  catalogRoute({
    method: 'DELETE',
    path: '/v1/kv/*',
    params: Key,
    query: DeleteQuery,
    permission: 'key:write (recursive: on everything under the prefix)',
    handler: async ({ query }, ctx) => {
      const key = keyOf(ctx);
      const ns = requestNamespace(ctx, query);
      const recurse = query.recurse !== undefined;
      if (recurse && !actorOf(ctx).authz.allowedPrefixWrite('key', key, ns)) throw permissionDenied(actorOf(ctx), 'key', 'write', key);
      if (!recurse) {
        if (!key) throw badRequest('Missing key name');
        requirePermission(ctx, 'key', 'write', key, ns);
      }
      return deleteKv(requestWrites(ctx), ns, key, { recurse, cas: query.cas });
    },
  }),
];
