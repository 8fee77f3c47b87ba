import { z } from 'zod';
import { PLUGINS } from './plugins';
import {
  closeSession,
  connectionKey,
  databaseError,
  nameOf,
  newPassword,
  pluginOf,
  readConnection,
  sessionFor,
  statements,
  StoredConnection,
  withLock,
} from './store';
import { checkTemplate, USERNAME_FIELDS } from './template';
import { commaList, duration, flexibleBoolean, flexibleInt } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { EngineRoute, SecretsRequest } from '../../core/types';

const positive = flexibleInt.pipe(z.number().int().min(0, 'must be 0 or more'));

/** Vault's connection fields: the common ones, and the fields of the two SQL plugins. */
const ConfigBody = z.object({
  plugin_name: z.string().nullish(),
  plugin_version: z.string().nullish(),
  verify_connection: flexibleBoolean.nullish(),
  allowed_roles: commaList.nullish(),
  root_rotation_statements: statements.nullish(),
  password_policy: z.string().nullish(),
  connection_url: z.string().max(4096).nullish(),
  username: z.string().max(256).nullish(),
  password: z.string().max(1024).nullish(),
  max_open_connections: positive.nullish(),
  max_idle_connections: positive.nullish(),
  max_connection_lifetime: duration().nullish(),
  username_template: z.string().max(1024).nullish(),
  skip_static_role_import_rotation: flexibleBoolean.nullish(),
});
type ConfigBody = z.infer<typeof ConfigBody>;

/** Vault's default pool: 4 open connections, idle up to the open count, no lifetime limit. */
const MAX_OPEN = 4;

/** Fields of `config/:name` that are the connection's own, not the plugin's (Vault removes them from `connection_details`). */
const NOT_DETAILS = new Set([
  'name',
  'plugin_name',
  'plugin_version',
  'allowed_roles',
  'verify_connection',
  'root_rotation_statements',
  'password_policy',
  'skip_static_role_import_rotation',
  'rotation_period',
  'rotation_schedule',
  'rotation_window',
  'disable_automated_rotation',
]);
/** Plugin fields Vault never shows back; Hangar keeps what it uses of them (the password) in `settings` only. */
const SECRET_DETAILS = new Set(['password', 'private_key', 'service_account_json']);

/**
 * `connection_details` as Vault keeps it: the plugin's fields of the request as sent (its SQL plugins
 * return their config unchanged), merged over the stored ones on an update.
 */
function detailsOf(existing: StoredConnection | undefined, raw: unknown): Record<string, unknown> {
  const details: Record<string, unknown> = { ...existing?.details };
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    for (const [key, value] of Object.entries(raw)) if (!NOT_DETAILS.has(key) && !SECRET_DETAILS.has(key)) details[key] = value;
  }
  return details;
}

function merge(existing: StoredConnection | undefined, b: ConfigBody, raw: unknown): StoredConnection {
  const plugin_name = b.plugin_name ?? existing?.plugin_name;
  if (!plugin_name) throw badInput(`plugin_name is required: ${[...PLUGINS.keys()].join(' or ')}`);
  const prev = existing?.settings;
  const maxOpen = b.max_open_connections ?? prev?.max_open_connections ?? MAX_OPEN;
  const conn: StoredConnection = {
    plugin_name,
    verify_connection: b.verify_connection ?? existing?.verify_connection ?? true,
    allowed_roles: b.allowed_roles ?? existing?.allowed_roles ?? [],
    root_rotation_statements: b.root_rotation_statements ?? existing?.root_rotation_statements ?? [],
    password_policy: b.password_policy ?? existing?.password_policy ?? '',
    username_template: b.username_template ?? existing?.username_template ?? '',
    skip_static_role_import_rotation: b.skip_static_role_import_rotation ?? existing?.skip_static_role_import_rotation ?? false,
    settings: {
      connection_url: b.connection_url ?? prev?.connection_url ?? '',
      username: b.username ?? prev?.username ?? '',
      password: b.password ?? prev?.password ?? '',
      max_open_connections: maxOpen === 0 ? MAX_OPEN : maxOpen,
      max_idle_connections: Math.min(b.max_idle_connections ?? prev?.max_idle_connections ?? maxOpen, maxOpen),
      max_connection_lifetime: b.max_connection_lifetime ?? prev?.max_connection_lifetime ?? 0,
    },
    // A connection stored before Hangar kept the details is shown as before until it is written again.
    details: existing && !existing.details ? undefined : detailsOf(existing, raw),
  };
  const plugin = pluginOf(conn);
  if (!conn.settings.connection_url) throw badInput('connection_url is required');
  const problem = plugin.check(conn.settings);
  if (problem) throw badInput(problem);
  if (conn.username_template) {
    const bad = checkTemplate(conn.username_template, USERNAME_FIELDS);
    if (bad) throw badInput(`username_template: ${bad}`);
  }
  return conn;
}

/** A literal password in a URL is masked on read (a `{{password}}` slot is not a secret). */
function masked(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)([^@]*)@/i, (whole, head: string, pw: string) => (/^\{\{.*\}\}$/.test(pw) ? whole : `${head}*****@`));
}

function shown(conn: StoredConnection): Record<string, unknown> {
  const s = conn.settings;
  const details = conn.details
    ? { ...conn.details, ...(typeof conn.details.connection_url === 'string' ? { connection_url: masked(conn.details.connection_url) } : {}) }
    : {
      connection_url: masked(s.connection_url),
      username: s.username,
      max_open_connections: s.max_open_connections,
      max_idle_connections: s.max_idle_connections,
      max_connection_lifetime: `${s.max_connection_lifetime}s`,
      ...(conn.username_template ? { username_template: conn.username_template } : {}),
    };
  return {
    plugin_name: conn.plugin_name,
    plugin_version: '',
    verify_connection: conn.verify_connection,
    allowed_roles: conn.allowed_roles,
    root_credentials_rotate_statements: conn.root_rotation_statements,
    password_policy: conn.password_policy,
    connection_details: details,
    skip_static_role_import_rotation: conn.skip_static_role_import_rotation ?? false,
    // Vault 1.19+: the automated root rotation fields (an Enterprise feature, not built: their defaults).
    rotation_period: 0,
    rotation_schedule: '',
    rotation_window: 0,
    disable_automated_rotation: false,
  };
}

async function write(req: SecretsRequest<ConfigBody>): Promise<undefined> {
  const name = nameOf(req);
  const ctx = req.core.context(req.mount);
  const existing = await ctx.tx((store) => readConnection(store, name));
  const conn = merge(existing, req.body, req.rawBody);
  if (conn.verify_connection) {
    const session = pluginOf(conn).open(conn.settings);
    try {
      await session.verify();
    } catch (err) {
      throw databaseError('error creating database object: could not verify the connection', err);
    } finally {
      await session.close().catch(() => undefined);
    }
  }
  await ctx.tx((store) => store.put(connectionKey(name), conn));
  await closeSession(req.mount, name);
  return undefined;
}

/** The root password is replaced by one only Hangar knows, through the connection itself. */
async function rotateRoot(req: SecretsRequest): Promise<undefined> {
  const name = nameOf(req);
  const ctx = req.core.context(req.mount);
  await withLock(ctx, `config/${name}`, async () => {
    const conn = await ctx.tx((store) => readConnection(store, name));
    if (!conn) throw badInput(`connection "${name}" does not exist`);
    if (!conn.settings.username || !conn.settings.password) throw badInput('the connection needs a username and password to rotate them');
    const password = await newPassword(ctx, conn);
    const plugin = pluginOf(conn);
    const stmts = conn.root_rotation_statements.length ? conn.root_rotation_statements : plugin.defaultRotateRoot;
    try {
      await sessionFor(req.mount, name, conn).exec(stmts, { name: conn.settings.username, username: conn.settings.username, password });
    } catch (err) {
      throw databaseError('failed to rotate the root credentials', err);
    }
    await ctx.tx((store) => store.put(connectionKey(name), { ...conn, settings: { ...conn.settings, password } }));
    await closeSession(req.mount, name);
  });
  return undefined;
}

/**
 * Deleting a connection first revokes the credentials issued through it, while it can still reach
 * the database (afterwards nothing could drop those users, and their leases would fail forever).
 * A revocation that fails keeps the connection, and says why.
 */
async function remove(req: SecretsRequest): Promise<undefined> {
  const name = nameOf(req);
  const ctx = req.core.context(req.mount);
  const ids = await ctx.tx(async (_store, db) => {
    const mine: string[] = [];
    for (const id of await req.core.leases.idsWithPrefix(db, `${req.mount.path}creds/`)) {
      const lease = await req.core.leases.get(db, id);
      if ((lease?.internal as { db_name?: string } | undefined)?.db_name === name) mine.push(id);
    }
    await req.core.leases.markRevoking(db, mine, req.engine.clock.now());
    return mine;
  });
  const failures = await req.core.revokeLeases(ids);
  if (failures.length) {
    throw badInput(`failed to revoke ${failures.length} credential lease(s) issued through "${name}"; the connection stays: ${failures[0].error}`);
  }
  await ctx.tx((store) => store.delete(connectionKey(name)));
  await closeSession(req.mount, name);
  return undefined;
}

/** `config/:name`, `reset/:name`, `rotate-root/:name`. */
export const connectionRoutes: EngineRoute[] = [
  {
    pattern: 'config',
    readOnly: true,
    list: async (req) => ({ data: { keys: (await req.store.list('config/')).filter((k) => !k.endsWith('/')) } }),
  },
  {
    pattern: 'config/:name',
    body: ConfigBody,
    exists: async (req) => req.store.exists(connectionKey(req.params.name)),
    read: async (req) => {
      const conn = await readConnection(req.store, nameOf(req));
      if (!conn) throw missing();
      return { data: shown(conn) };
    },
    write,
    ownTransactions: ['create', 'update', 'delete'],
    delete: remove,
  },
  {
    pattern: 'reset/:name',
    ownTransactions: ['update'],
    write: async (req) => {
      const name = nameOf(req);
      const conn = await req.core.context(req.mount).tx((store) => readConnection(store, name));
      if (!conn) throw badInput(`connection "${name}" does not exist`);
      await closeSession(req.mount, name);
      try {
        await sessionFor(req.mount, name, conn).verify();
      } catch (err) {
        throw databaseError('failed to reset the connection', err);
      }
      return undefined;
    },
  },
  { pattern: 'rotate-root/:name', ownTransactions: ['update'], write: rotateRoot },
];
