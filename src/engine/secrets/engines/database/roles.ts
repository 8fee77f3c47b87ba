import { z } from 'zod';
import { connectionForRole, databaseError, nameOf, passwordIn, pluginOf, readConnection, sessionFor, statements, StoredConnection } from './store';
import { renderUsername } from './template';
import { duration } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { MountStore, SealedMemo } from '../../core/store';
import { SYSTEM_MAX_TTL } from '../../core/tokens';
import { EngineContext, EngineRoute, LeaseRecord, SecretsRequest, SecretsResponse } from '../../core/types';

const RoleBody = z.object({
  db_name: z.string().nullish(),
  default_ttl: duration().nullish(),
  max_ttl: duration().nullish(),
  creation_statements: statements.nullish(),
  revocation_statements: statements.nullish(),
  rollback_statements: statements.nullish(),
  renew_statements: statements.nullish(),
  credential_type: z.literal('password', { message: 'only "password" is supported' }).nullish(),
});
type RoleBody = z.infer<typeof RoleBody>;

/** A dynamic role (`roles/:name`). */
export interface DynamicRole {
  readonly db_name: string;
  readonly default_ttl: number;
  readonly max_ttl: number;
  readonly creation_statements: readonly string[];
  readonly revocation_statements: readonly string[];
  readonly rollback_statements: readonly string[];
  readonly renew_statements: readonly string[];
}

/** What a credential's lease carries (sealed) for its revocation and renewal. */
interface CredsLease {
  readonly db_name: string;
  readonly role: string;
  readonly username: string;
  readonly revocation_statements: readonly string[];
  readonly renew_statements: readonly string[];
}

export const roleKey = (name: string) => `role/${name}`;
export const staticRoleKey = (name: string) => `static-role/${name}`;

// Opened once per process while unchanged (MountStore.getMemo): every credential reads its role.
const roles = new SealedMemo<DynamicRole>(1024);

export const readRole = (store: MountStore, name: string) => store.getMemo(roleKey(name), roles);

function merge(req: SecretsRequest, existing: DynamicRole | undefined, b: RoleBody): DynamicRole {
  const role: DynamicRole = {
    db_name: b.db_name ?? existing?.db_name ?? '',
    default_ttl: b.default_ttl ?? existing?.default_ttl ?? 0,
    max_ttl: b.max_ttl ?? existing?.max_ttl ?? 0,
    creation_statements: b.creation_statements ?? existing?.creation_statements ?? [],
    revocation_statements: b.revocation_statements ?? existing?.revocation_statements ?? [],
    rollback_statements: b.rollback_statements ?? existing?.rollback_statements ?? [],
    renew_statements: b.renew_statements ?? existing?.renew_statements ?? [],
  };
  if (!role.db_name) throw badInput('db_name is required: the connection (config/:name) the role uses');
  if (!role.creation_statements.length) throw badInput('creation_statements is required: the SQL that creates the user');
  if (role.max_ttl > 0 && role.default_ttl > role.max_ttl) throw badInput('default_ttl cannot be greater than max_ttl');
  const mountMax = req.mount.maxLeaseTtl || SYSTEM_MAX_TTL;
  if (role.max_ttl > mountMax) throw badInput(`max_ttl: ${role.max_ttl} is greater than the mount's maximum TTL (${mountMax})`);
  return role;
}

/** The statements of a list, else the plugin's defaults. */
const orDefault = (own: readonly string[], fallback: readonly string[]) => (own.length ? own : fallback);

async function issue(req: SecretsRequest): Promise<SecretsResponse> {
  const name = nameOf(req, 'role');
  const ctx = req.core.context(req.mount);
  const { role, conn, password } = await ctx.tx(async (store, db) => {
    const r = await readRole(store, name);
    if (!r) throw badInput(`unknown role: ${name}`);
    const c = await connectionForRole(store, r.db_name, name);
    return { role: r, conn: c, password: await passwordIn(ctx.core, db, c) };
  });
  const plugin = pluginOf(conn);
  const username = renderUsername(conn.username_template || plugin.defaultUsernameTemplate, req, name);
  const mountMax = req.mount.maxLeaseTtl || SYSTEM_MAX_TTL;
  const max = Math.min(role.max_ttl || mountMax, mountMax);
  const ttl = Math.min(role.default_ttl || req.mount.defaultLeaseTtl || SYSTEM_MAX_TTL, max);
  const values = { name: username, username, password, expiration: plugin.expiration(req.now + ttl * 1000) };
  const session = sessionFor(req.mount, role.db_name, conn);
  try {
    await session.exec(role.creation_statements, values);
  } catch (err) {
    // The transaction rolled back; statements that commit implicitly (MySQL's DDL) are undone by the rollback statements.
    if (role.rollback_statements.length) await session.exec(role.rollback_statements, values).catch(() => undefined);
    throw databaseError('failed to create the database user', err);
  }
  const internal: CredsLease = {
    db_name: role.db_name,
    role: name,
    username,
    revocation_statements: role.revocation_statements,
    renew_statements: role.renew_statements,
  };
  return { data: { username, password }, lease: { ttl, maxTtl: max, renewable: true, internal } };
}

/** What revocation and renewal read: the lease's connection and its role as it is now (its statements may have changed). */
interface LeaseContext {
  readonly internal: CredsLease;
  readonly conn: StoredConnection;
  readonly role: DynamicRole | undefined;
}

/** The lease's context, read in a transaction (undefined when the connection is gone). */
async function readLeaseContext(lease: LeaseRecord, store: MountStore): Promise<LeaseContext | undefined> {
  const internal = lease.internal as CredsLease;
  const conn = await readConnection(store, internal.db_name);
  return conn && { internal, conn, role: await readRole(store, internal.role) };
}

/** The lease's context in a transaction of its own. */
async function leaseContext(lease: LeaseRecord, ctx: EngineContext): Promise<LeaseContext> {
  const found = await ctx.tx((store) => readLeaseContext(lease, store));
  if (!found) throw new Error(`connection "${(lease.internal as CredsLease).db_name}" no longer exists`);
  return found;
}

/** `sys/leases/revoke` reads the context in the transaction that marks the lease (see revokeCreds). */
export const prepareRevokeCreds = (lease: LeaseRecord, ctx: EngineContext): Promise<LeaseContext | undefined> =>
  ctx.tx((store) => readLeaseContext(lease, store));

/** Lease expiry or revocation: the user's revocation statements (or the plugin's own drop). */
export async function revokeCreds(lease: LeaseRecord, ctx: EngineContext, prepared?: unknown): Promise<void> {
  const { internal, conn, role } = (prepared as LeaseContext | undefined) ?? (await leaseContext(lease, ctx));
  const plugin = pluginOf(conn);
  const session = sessionFor(ctx.mount, internal.db_name, conn);
  const stmts = orDefault(role?.revocation_statements ?? internal.revocation_statements, plugin.defaultRevocation);
  if (stmts.length) await session.exec(stmts, { name: internal.username, username: internal.username });
  else await session.dropUser?.(internal.username);
}

/** Renewal: the renew statements move the user's expiry in the database to the lease's limit. */
export async function renewCreds(lease: LeaseRecord, ctx: EngineContext): Promise<void> {
  const { internal, conn, role } = await leaseContext(lease, ctx);
  const plugin = pluginOf(conn);
  const stmts = orDefault(role?.renew_statements ?? internal.renew_statements, plugin.defaultRenew);
  if (!stmts.length) return;
  await sessionFor(ctx.mount, internal.db_name, conn).exec(stmts, {
    name: internal.username,
    username: internal.username,
    expiration: plugin.expiration(lease.maxExpireAt),
  });
}

function shown(role: DynamicRole): Record<string, unknown> {
  return { ...role, credential_type: 'password', credential_config: {} };
}

/** `roles/:name` and `creds/:name`. */
export const roleRoutes: EngineRoute[] = [
  {
    pattern: 'roles',
    readOnly: true,
    list: async (req) => ({ data: { keys: (await req.store.list('role/')).filter((k) => !k.endsWith('/')) } }),
  },
  {
    pattern: 'roles/:name',
    body: RoleBody,
    exists: async (req) => req.store.exists(roleKey(req.params.name)),
    read: async (req) => {
      const role = await readRole(req.store, nameOf(req, 'role'));
      if (!role) throw missing();
      return { data: shown(role) };
    },
    write: async (req) => {
      const name = nameOf(req, 'role');
      if (await req.store.exists(staticRoleKey(name))) throw badInput(`"${name}" is a static role: role and static role names must be unique`);
      await req.store.put(roleKey(name), merge(req, await readRole(req.store, name), req.body as RoleBody));
      return undefined;
    },
    delete: async (req) => {
      await req.store.delete(roleKey(nameOf(req, 'role')));
      return undefined;
    },
  },
  { pattern: 'creds/:name', ownTransactions: ['read'], read: issue },
];
