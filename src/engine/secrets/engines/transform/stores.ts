import { createHash } from 'node:crypto';
import { Client, Pool } from 'pg';
import { z } from 'zod';
import { allObjects, listRoute, objectRoute, resolve, writableName } from './objects';
import type { TokenRecord } from './tokenization';
import { commaList, duration, flexibleInt } from '../../core/durations';
import { badInput } from '../../core/request';
import { EngineRoute, MountEntry, SecretsRequest } from '../../core/types';

/** An external tokenization store: a PostgreSQL database reached with a SELECT/INSERT/UPDATE user. */
export interface Store {
  readonly type: 'sql';
  readonly driver: 'postgres';
  readonly supported_transformations: string[];
  readonly connection_string: string;
  readonly username: string;
  readonly password: string;
  readonly schema: string;
  readonly max_open_connections: number;
  readonly max_idle_connections: number;
  /** Seconds; 0 is unlimited. */
  readonly max_connection_lifetime: number;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const TABLE = 'tokenization_state';
const count = flexibleInt.pipe(z.number().int().min(0, 'must be 0 or more').max(1000, 'must be at most 1000'));

const StoreBody = z.object({
  type: z.string().nullish(),
  driver: z.string().nullish(),
  supported_transformations: commaList.nullish(),
  connection_string: z.string().max(4096).nullish(),
  username: z.string().max(256).nullish(),
  password: z.string().max(1024).nullish(),
  schema: z.string().nullish(),
  max_open_connections: count.nullish(),
  max_idle_connections: count.nullish(),
  max_connection_lifetime: duration().nullish(),
});

const SchemaBody = z.object({
  username: z.string().max(256).nullish(),
  password: z.string().max(1024).nullish(),
  transformation_type: z.string().nullish(),
});

/** The connection string with its `{{username}}`/`{{password}}` slots filled (URL-encoded). */
function connectionString(store: Pick<Store, 'connection_string'>, username: string, password: string): string {
  return store.connection_string.replaceAll('{{username}}', encodeURIComponent(username)).replaceAll('{{password}}', encodeURIComponent(password));
}

const quoted = (ident: string) => `"${ident}"`;
const table = (store: Store) => `${quoted(store.schema)}.${TABLE}`;

/** One pool per mount, store and configuration: a changed store gets a fresh pool. */
const pools = new Map<string, Pool>();

function poolFor(mount: MountEntry, name: string, store: Store): Pool {
  const id = `${mount.uuid}\0${name}\0${createHash('sha256').update(JSON.stringify(store)).digest('hex')}`;
  let pool = pools.get(id);
  if (!pool) {
    pool = new Pool({
      connectionString: connectionString(store, store.username, store.password),
      max: store.max_open_connections || 4,
      // Connections above the idle limit close soon after use; the rest after a minute idle.
      idleTimeoutMillis: store.max_idle_connections > 0 ? 60_000 : 1_000,
      maxLifetimeSeconds: store.max_connection_lifetime || 0,
      connectionTimeoutMillis: 10_000,
      allowExitOnIdle: true,
    });
    pool.on('error', () => undefined);
    pools.set(id, pool);
  }
  return pool;
}

/** Closes the pools of a store (changed or deleted). */
function dropPools(mount: MountEntry, name: string): void {
  const prefix = `${mount.uuid}\0${name}\0`;
  for (const [id, pool] of pools) {
    if (id.startsWith(prefix)) {
      pools.delete(id);
      void pool.end().catch(() => undefined);
    }
  }
}

/** A database error as a 400 naming the store; a password the driver might echo is blanked. */
function storeError(name: string, e: unknown, ...passwords: string[]): Error {
  let message = (e as Error).message ?? String(e);
  for (const p of passwords) if (p) message = message.replaceAll(p, '***').replaceAll(encodeURIComponent(p), '***');
  const hint = /does not exist/.test(message) ? ' (run the store\'s schema operation first)' : '';
  return badInput(`store "${name}": ${message}${hint}`);
}

export async function sqlPut(mount: MountEntry, name: string, store: Store, transformation: string, records: readonly TokenRecord[]): Promise<void> {
  if (records.length === 0) return;
  // A convergent token encoded again replaces its row (its metadata may have changed); random tokens never meet.
  // One statement of five parameters whatever the batch: the columns travel as arrays (a parameter per
  // row and column would grow with the batch towards PostgreSQL's 65,535).
  const params = [transformation, records.map((r) => r.hash), records.map((r) => r.ciphertext), records.map((r) => r.expireAt || null), Date.now()];
  try {
    await poolFor(mount, name, store).query(
      `INSERT INTO ${table(store)} (transformation, token_hash, ciphertext, expire_at, created_at)
       SELECT $1, r.token_hash, r.ciphertext, r.expire_at, $5 FROM unnest($2::text[], $3::text[], $4::bigint[]) AS r(token_hash, ciphertext, expire_at)
       ON CONFLICT (transformation, token_hash) DO UPDATE SET ciphertext = EXCLUDED.ciphertext, expire_at = EXCLUDED.expire_at`,
      params,
    );
  } catch (e) {
    throw storeError(name, e, store.password);
  }
}

export async function sqlGet(mount: MountEntry, name: string, store: Store, transformation: string, hash: string): Promise<TokenRecord | undefined> {
  try {
    const { rows } = await poolFor(mount, name, store).query<{ ciphertext: string; expire_at: string | null }>(
      `SELECT ciphertext, expire_at FROM ${table(store)} WHERE transformation = $1 AND token_hash = $2`,
      [transformation, hash],
    );
    return rows[0] && { hash, ciphertext: rows[0].ciphertext, expireAt: Number(rows[0].expire_at ?? 0) };
  } catch (e) {
    throw storeError(name, e, store.password);
  }
}

async function writeStore(req: SecretsRequest<z.infer<typeof StoreBody>>): Promise<undefined> {
  const name = writableName('store', req.params.name);
  const b = req.body;
  const old = await req.store.get<Store>(`store/${name}`);
  const type = b.type ?? old?.type;
  if (!type) throw badInput('type is required: only "sql" is supported');
  if (type !== 'sql') throw badInput(`type: "${type}" is not supported: only "sql"`);
  const driver = b.driver ?? old?.driver ?? 'postgres';
  if (driver !== 'postgres') throw badInput(`driver: "${driver}" is not supported: only "postgres"`);
  const supported = b.supported_transformations ?? old?.supported_transformations ?? ['tokenization'];
  for (const s of supported) if (s !== 'tokenization') throw badInput(`supported_transformations: "${s}" is not supported: only "tokenization"`);
  const next: Store = {
    type,
    driver,
    supported_transformations: supported,
    connection_string: b.connection_string ?? old?.connection_string ?? '',
    username: b.username ?? old?.username ?? '',
    password: b.password ?? old?.password ?? '',
    schema: b.schema ?? old?.schema ?? 'public',
    max_open_connections: b.max_open_connections ?? old?.max_open_connections ?? 4,
    max_idle_connections: b.max_idle_connections ?? old?.max_idle_connections ?? 4,
    max_connection_lifetime: b.max_connection_lifetime ?? old?.max_connection_lifetime ?? 0,
  };
  if (!next.connection_string) throw badInput('connection_string is required: e.g. postgresql://{{username}}:{{password}}@host:5432/db');
  if (!/^postgres(ql)?:\/\//.test(next.connection_string)) throw badInput('connection_string: must be a postgresql:// URL with {{username}} and {{password}} slots');
  if (!next.username) throw badInput('username is required');
  if (!next.password) throw badInput('password is required');
  if (!IDENT.test(next.schema)) throw badInput(`schema: "${next.schema}" is not a plain SQL identifier (letters, digits, "_")`);
  if (next.max_open_connections < 1) throw badInput('max_open_connections: must be at least 1');
  await req.store.put(`store/${name}`, next);
  const mount = req.mount;
  req.afterCommit(async () => dropPools(mount, name));
  return undefined;
}

/**
 * `store/:name/schema`: creates the schema and table with a separately supplied privileged user
 * (used for this call only) and grants the store's runtime user exactly SELECT, INSERT, UPDATE.
 */
async function writeSchema(req: SecretsRequest<z.infer<typeof SchemaBody>>): Promise<undefined> {
  const name = writableName('store', req.params.name);
  const b = req.body;
  if (!b.username) throw badInput('username is required: a user that may create the schema and tables');
  if (!b.password) throw badInput('password is required');
  const type = b.transformation_type ?? 'tokenization';
  if (type !== 'tokenization') throw badInput(`transformation_type: "${type}" is not supported: only "tokenization"`);
  const store = await req.core.context(req.mount).tx((s) => resolve<Store>(s, 'store', name, 'name'));
  const client = new Client({ connectionString: connectionString(store, b.username, b.password), connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const runtime = quoted(store.username.replaceAll('"', '""'));
    await client.query('BEGIN');
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted(store.schema)}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${table(store)} (transformation TEXT NOT NULL, token_hash TEXT NOT NULL, ciphertext TEXT NOT NULL, expire_at BIGINT, created_at BIGINT NOT NULL, PRIMARY KEY (transformation, token_hash))`,
    );
    if (store.username !== b.username) {
      await client.query(`GRANT USAGE ON SCHEMA ${quoted(store.schema)} TO ${runtime}`);
      await client.query(`GRANT SELECT, INSERT, UPDATE ON ${table(store)} TO ${runtime}`);
    }
    await client.query('COMMIT');
  } catch (e) {
    throw storeError(name, e, b.password, store.password);
  } finally {
    await client.end().catch(() => undefined);
  }
  return undefined;
}

export const storeRoutes: EngineRoute[] = [
  listRoute('store'),
  { pattern: 'store/:name/schema', body: SchemaBody, ownTransactions: ['create', 'update'], write: writeSchema },
  objectRoute<Store>({
    kind: 'store',
    pattern: 'store/:name',
    body: StoreBody,
    // Never the username or password.
    show: (s) => ({
      type: s.type,
      driver: s.driver,
      connection_string: s.connection_string,
      supported_transformations: s.supported_transformations,
      schema: s.schema,
      max_open_connections: s.max_open_connections,
      max_idle_connections: s.max_idle_connections,
      max_connection_lifetime: s.max_connection_lifetime,
    }),
    write: writeStore,
    inUse: async (req, name) => {
      const users = (await allObjects<{ stores?: string[] }>(req.store, 'transformation')).filter(([, t]) => t.stores?.includes(name));
      return users.length ? `transformation ${users.map(([n]) => `"${n}"`).join(', ')}` : undefined;
    },
    cleanup: async (req, name) => {
      const mount = req.mount;
      req.afterCommit(async () => dropPools(mount, name));
    },
  }),
];
