import { createHash } from 'node:crypto';
import { z } from 'zod';
import { PLUGINS } from './plugins';
import { ConnectionSettings, DatabasePlugin, PluginSession } from './plugins/types';
import { HangarError } from '../../../http/errors';
import type { Db } from '../../../storage';
import type { SecretsCore } from '../../core/core';
import { badInput } from '../../core/request';
import { MountStore, SealedMemo } from '../../core/store';
import { EngineContext, MountEntry, SecretsRequest } from '../../core/types';
import { DEFAULT_DATABASE_POLICY, passwordFor } from '../../system/password-policy';
import { globMatch } from '../jwt/claims';

/** Vault's GenericNameRegex, with a length limit. */
const NAME = /^[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,126}[A-Za-z0-9_])?$/;

export function nameOf(req: SecretsRequest, what = 'name'): string {
  const name = req.params.name;
  if (!NAME.test(name)) throw badInput(`${what} "${name}" is invalid: use letters, digits, "_", "." and "-"`);
  return name;
}

export const validName = (name: string) => NAME.test(name);

/**
 * zod: a list of SQL statements: an array of strings, or one string (kept whole: commas belong to
 * the SQL; `;` separates statements when they run).
 */
export const statements = z.union([z.array(z.string()), z.string()]).transform((v) => (Array.isArray(v) ? v : [v]).filter((s) => s.trim() !== ''));

/** A stored connection (`config/:name`), sealed; the password never leaves the engine. */
export interface StoredConnection {
  readonly plugin_name: string;
  readonly verify_connection: boolean;
  readonly allowed_roles: readonly string[];
  readonly root_rotation_statements: readonly string[];
  readonly password_policy: string;
  readonly username_template: string;
  /** The default of its static roles' `skip_import_rotation` (absent in records written before it existed: false). */
  readonly skip_static_role_import_rotation?: boolean;
  readonly settings: ConnectionSettings;
  /**
   * The plugin's fields as the client sent them (Vault's `connection_details`: what the plugin was
   * given, shown back on read), secrets left out. Absent on connections stored before Hangar kept them.
   */
  readonly details?: Readonly<Record<string, unknown>>;
}

export const connectionKey = (name: string) => `config/${name}`;

export function pluginOf(conn: StoredConnection): DatabasePlugin {
  const plugin = PLUGINS.get(conn.plugin_name);
  if (!plugin) throw badInput(`plugin_name "${conn.plugin_name}" is not supported: use ${[...PLUGINS.keys()].join(' or ')}`);
  return plugin;
}

// Opened once per process while unchanged (MountStore.getMemo): every credential reads its connection.
const connections = new SealedMemo<StoredConnection>(256);

export async function readConnection(store: MountStore, name: string): Promise<StoredConnection | undefined> {
  return store.getMemo(connectionKey(name), connections);
}

/** Vault's glob match of allowed_roles: `*` anywhere matches any characters. */
export function roleAllowed(conn: StoredConnection, role: string): boolean {
  return conn.allowed_roles.some((pattern) => globMatch(pattern, role));
}

/** The connection of a role, checked: it exists and allows the role. */
export async function connectionForRole(store: MountStore, dbName: string, role: string): Promise<StoredConnection> {
  const conn = await readConnection(store, dbName);
  if (!conn) throw badInput(`db_name: connection "${dbName}" does not exist`);
  if (!roleAllowed(conn, role)) throw badInput(`"${role}" is not an allowed role of connection "${dbName}" (see its allowed_roles)`);
  return conn;
}

interface Cached {
  /** The opened config the session was made from: the same object while the stored config is unchanged. */
  readonly conn: StoredConnection;
  readonly fingerprint: string;
  readonly session: PluginSession;
}

/**
 * Open sessions (connection pools) by mount and connection. A changed config (another server
 * updated it, a root rotation) has another fingerprint, and its session is replaced.
 */
const sessions = new Map<string, Cached>();
const cacheKey = (mount: MountEntry, name: string) => `${mount.uuid}/${name}`;
const fingerprintOf = (conn: StoredConnection) => createHash('sha256').update(JSON.stringify(conn)).digest('hex');

export function sessionFor(mount: MountEntry, name: string, conn: StoredConnection): PluginSession {
  const key = cacheKey(mount, name);
  const cached = sessions.get(key);
  if (cached?.conn === conn) return cached.session;
  const fingerprint = fingerprintOf(conn);
  if (cached?.fingerprint === fingerprint) {
    sessions.set(key, { ...cached, conn });
    return cached.session;
  }
  if (cached) void cached.session.close().catch(() => undefined);
  const session = pluginOf(conn).open(conn.settings);
  sessions.set(key, { conn, fingerprint, session });
  return session;
}

/** Closes a connection's session (reset, delete, root rotation); the next use opens it again. */
export async function closeSession(mount: MountEntry, name: string): Promise<void> {
  const key = cacheKey(mount, name);
  const cached = sessions.get(key);
  sessions.delete(key);
  await cached?.session.close().catch(() => undefined);
}

/** Closes every open session of this process (tests, benchmarks, shutdown). */
export async function closeDatabaseSessions(): Promise<void> {
  const all = [...sessions.values()];
  sessions.clear();
  await Promise.all(all.map((c) => c.session.close().catch(() => undefined)));
}

/** A database's error as a 400 that says which step failed (never a 500: the database is outside). */
export function databaseError(step: string, err: unknown): HangarError {
  if (err instanceof HangarError) return err;
  return badInput(`${step}: ${(err as Error).message || String(err)}`);
}

/** A new password under the connection's password_policy, else the spec's default policy. */
export async function passwordIn(core: SecretsCore, db: Db, conn: StoredConnection): Promise<string> {
  try {
    return await passwordFor(core, db, conn.password_policy || undefined, DEFAULT_DATABASE_POLICY);
  } catch (err) {
    // Vault's message: the policy is looked up only now (a connection may name one made later).
    throw badInput(`password_policy: failed to generate password: ${(err as Error).message}`);
  }
}

/** The same in a transaction of its own. */
export function newPassword(ctx: EngineContext, conn: StoredConnection): Promise<string> {
  return ctx.tx((_store, db) => passwordIn(ctx.core, db, conn));
}

/** How long a rotation may hold its lock before another server may take over (a crashed holder). */
const LOCK_MS = 60_000;

/**
 * Runs fn while holding a lock entry (`lock/<what>`) in the mount's storage, so that two servers
 * (the rotation job and a rotate call) never rotate the same password at the same time: a second
 * caller gets a 400 rather than a password that differs from the stored one.
 */
export async function withLock<T>(ctx: EngineContext, what: string, fn: () => Promise<T>): Promise<T> {
  const key = `lock/${what}`;
  const owner = createHash('sha256').update(`${Math.random()}${process.pid}${Date.now()}`).digest('hex');
  const now = ctx.engine.clock.now();
  await ctx.tx(async (store) => {
    const held = await store.get<{ owner: string; until: number }>(key);
    if (held && held.until > now) throw new HangarError(400, [`a rotation of ${what} is already in progress; try again shortly`]);
    await store.put(key, { owner, until: now + LOCK_MS }, now + LOCK_MS);
  });
  try {
    return await fn();
  } finally {
    await ctx.tx(async (store) => {
      const held = await store.get<{ owner: string }>(key);
      if (held?.owner === owner) await store.delete(key);
    });
  }
}
