import { z } from 'zod';
import { HangarError } from '../../http/errors';
import type { Need } from '../acl/authorizer';
import { deleteKv, getKv, KvRow, listKv, putKv, renderKv } from '../kv';
import { requestNamespace, requireLiveNamespace } from '../namespaces';
import { actorOf, CatalogContext, catalogRoute, CommonQuery, consulObject, ignored, toUint64, UUID } from '../route';
import { requestWrites } from '../runtime';
import { getSession } from '../sessions';

/** The public service's limit on operations in one transaction. */
const MAX_OPS = 128;
const MAX_VALUE_BYTES = 512 * 1024;

const VERBS = ['set', 'cas', 'lock', 'unlock', 'get', 'get-tree', 'check-index', 'check-session', 'check-not-exists', 'delete', 'delete-tree', 'delete-cas'] as const;
type Verb = (typeof VERBS)[number];

/** api.TxnKVOp / structs.TxnKVOp: Value is base64 (Go []byte), Flags a uint64 (kept exact by the JSON decoder). */
const KvOp = consulObject({
  Verb: z.string(),
  Key: z.string(),
  Value: z.string().optional(),
  Flags: z.union([z.number(), z.bigint()]).optional(),
  Index: z.number().int().min(0).optional(),
  Session: z.string().optional(),
  Namespace: z.string().optional(),
  Partition: ignored,
});
/** Node, Service, Check and Session operations exist in the public service; Hangar runs KV operations only. */
const TxnOp = consulObject({ KV: KvOp.optional(), Node: ignored, Service: ignored, Check: ignored, Session: ignored });
const TxnBody = z.array(TxnOp);

/**
 * A refused transaction: 409 with the public service's `{"Results": null, "Errors": [{OpIndex, What}]}`.
 * Thrown, so that the request's transaction rolls back and nothing is written.
 */
export class TxnRolledBack extends HangarError {
  constructor(readonly errors: { OpIndex: number; What: string }[]) {
    super(409, errors.map((e) => `op ${e.OpIndex}: ${e.What}`));
  }
}

class OpError extends Error {}

const need = (verb: Verb): Need => (verb === 'get' || verb === 'get-tree' || verb.startsWith('check-') ? 'read' : 'write');

/** One KV operation; answers its results (entries; values only for reads), or throws OpError. */
async function runKvOp(ctx: CatalogContext, op: z.infer<typeof KvOp>, defaultNs: string): Promise<Record<string, unknown>[]> {
  if (!(VERBS as readonly string[]).includes(op.Verb)) throw new OpError(`unknown KV verb ${JSON.stringify(op.Verb)}`);
  const verb = op.Verb as Verb;
  const ns = op.Namespace || defaultNs;
  const key = op.Key;
  const authz = actorOf(ctx).authz;
  const tree = verb === 'get-tree' || verb === 'delete-tree';
  const allowed = tree && verb === 'delete-tree' ? authz.allowedPrefixWrite('key', key, ns) : tree || authz.allowed('key', need(verb), key, ns);
  if (!allowed) throw new OpError('Permission denied');
  if (!tree && !key) throw new OpError('Missing key name');
  const db = ctx.db;
  const writes = requestWrites(ctx);
  const entry = async (withValue: boolean) => {
    const row = await getKv(db, ns, key);
    return row ? [strip(row, withValue)] : [];
  };
  switch (verb) {
    case 'get': {
      const found = await entry(true);
      if (found.length === 0) throw new OpError(`key ${JSON.stringify(key)} doesn't exist`);
      return found;
    }
    case 'get-tree':
      return (await listKv(db, ns, key)).filter((r) => authz.allowed('key', 'read', r.key, ns)).map((r) => strip(r, true));
    case 'check-not-exists':
      if (await getKv(db, ns, key)) throw new OpError(`key ${JSON.stringify(key)} exists`);
      return [];
    case 'check-index':
    case 'check-session': {
      const row = await getKv(db, ns, key);
      if (!row) throw new OpError(`key ${JSON.stringify(key)} doesn't exist`);
      if (verb === 'check-index' && Number(row.modify_index) !== (op.Index ?? 0)) {
        throw new OpError(`current modify index ${row.modify_index} != ${op.Index ?? 0}`);
      }
      if (verb === 'check-session' && (row.session ?? '') !== (op.Session ?? '')) {
        throw new OpError(`current session ${JSON.stringify(row.session ?? '')} != ${JSON.stringify(op.Session ?? '')}`);
      }
      return [strip(row, false)];
    }
    case 'delete':
    case 'delete-tree':
    case 'delete-cas': {
      await requireLiveNamespace(db, ns);
      const done = await deleteKv(writes, ns, key, { recurse: verb === 'delete-tree', cas: verb === 'delete-cas' ? (op.Index ?? 0) : undefined });
      if (!done) throw new OpError(`failed to delete key ${JSON.stringify(key)}, index is stale`);
      return [];
    }
    default: {
      await requireLiveNamespace(db, ns);
      const flags = toUint64(op.Flags ?? 0);
      if (flags === undefined) throw new OpError('Flags must be an unsigned 64-bit integer');
      const value = op.Value ?? null;
      if (value !== null && (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || Buffer.from(value, 'base64').length > MAX_VALUE_BYTES)) {
        throw new OpError(`Value of key ${JSON.stringify(key)} must be base64 of at most ${MAX_VALUE_BYTES} bytes`);
      }
      const session = verb === 'lock' || verb === 'unlock' ? (op.Session ?? '') : undefined;
      if (session !== undefined) {
        if (!UUID.test(session) || !(await getSession(db, session))) throw new OpError(`invalid session ${JSON.stringify(session)}`);
      }
      const done = await putKv(
        writes,
        {
          ns,
          key,
          value: value === '' ? null : value,
          flags,
          cas: verb === 'cas' ? (op.Index ?? 0) : undefined,
          acquire: verb === 'lock' ? session : undefined,
          release: verb === 'unlock' ? session : undefined,
        },
        ctx.now,
      );
      if (!done) {
        const why = verb === 'cas' ? 'index is stale' : verb === 'lock' ? 'lock is already held' : "lock isn't held, or is held by another session";
        throw new OpError(`failed to ${verb === 'cas' ? 'set' : verb} key ${JSON.stringify(key)}, ${why}`);
      }
      return entry(false);
    }
  }
}

/** An entry as a transaction answers it: writes and checks leave the value out, as the public service does. */
function strip(row: KvRow, withValue: boolean): Record<string, unknown> {
  return { ...renderKv(row), Value: withValue ? row.value : null };
}

/** /v1/txn: KV operations applied all or nothing, in one storage transaction. */
export const txnRoutes = [
  catalogRoute({
    method: 'PUT',
    path: '/v1/txn',
    query: CommonQuery,
    body: TxnBody,
    permission: 'key:read / key:write per operation',
    handler: async ({ query, body }, ctx) => {
      if (body.length > MAX_OPS) throw new HangarError(413, [`Transaction contains too many operations (${body.length} > ${MAX_OPS})`]);
      const ns = requestNamespace(ctx, query);
      const results: { KV: Record<string, unknown> }[] = [];
      const errors: { OpIndex: number; What: string }[] = [];
      for (const [index, op] of body.entries()) {
        if (!op.KV) {
          errors.push({ OpIndex: index, What: 'only KV operations are supported' });
          continue;
        }
        try {
          for (const kv of await runKvOp(ctx, op.KV, ns)) results.push({ KV: kv });
        } catch (err) {
          if (!(err instanceof OpError) && !(err instanceof HangarError)) throw err;
          errors.push({ OpIndex: index, What: err instanceof HangarError ? err.messages.join('; ') : err.message });
        }
      }
      if (errors.length > 0) throw new TxnRolledBack(errors);
      return { Results: results, Errors: null };
    },
  }),
];

