import { z } from 'zod';
import { roleKey, staticRoleKey } from './roles';
import { connectionForRole, databaseError, nameOf, newPassword, pluginOf, sessionFor, statements, StoredConnection, validName, withLock } from './store';
import type { Engine } from '../../../engine';
import type { SecretsCore } from '../../core/core';
import { duration, rfc3339 } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { EngineContext, EngineRoute, SecretsRequest } from '../../core/types';

/** The spec's minimum rotation period. */
const MIN_ROTATION = 5;

/**
 * How long the rotation job waits before trying a role again after `failures` failed rotations in a
 * row: 10 s, doubling, at most an hour. A database that is gone or refuses the statements is not
 * hammered every round (and its warnings do not flood the log); one that comes back is caught up
 * within the hour.
 */
export function retryDelayMs(failures: number): number {
  return Math.min(3_600_000, 10_000 * 2 ** Math.min(Math.max(failures, 1) - 1, 20));
}

const StaticBody = z.object({
  db_name: z.string().nullish(),
  username: z.string().max(256).nullish(),
  rotation_period: duration().nullish(),
  rotation_statements: statements.nullish(),
  credential_type: z.literal('password', { message: 'only "password" is supported' }).nullish(),
});
type StaticBody = z.infer<typeof StaticBody>;

/** A static role (`static-roles/:name`) with its rotation state; the password is sealed. */
export interface StaticRole {
  readonly db_name: string;
  readonly username: string;
  /** Seconds. */
  readonly rotation_period: number;
  readonly rotation_statements: readonly string[];
  readonly password: string;
  /** Epoch ms of the last rotation Hangar made. */
  readonly last_vault_rotation: number;
  /** Epoch ms when the job rotates next (or retries, after a failure). */
  readonly next_rotation: number;
  /** Failed rotations by the job since the last success (absent in records written before it existed). */
  readonly failed_attempts?: number;
}

type Definition = Pick<StaticRole, 'db_name' | 'username' | 'rotation_period' | 'rotation_statements'>;

/** Sets a new password through the connection; returns the role with its new rotation state. */
async function rotated(ctx: EngineContext, conn: StoredConnection, role: Definition): Promise<StaticRole> {
  const password = await newPassword(ctx, conn);
  const plugin = pluginOf(conn);
  const stmts = role.rotation_statements.length ? role.rotation_statements : plugin.defaultRotateStatic;
  try {
    await sessionFor(ctx.mount, role.db_name, conn).exec(stmts, { name: role.username, username: role.username, password });
  } catch (err) {
    throw databaseError(`failed to rotate the password of "${role.username}"`, err);
  }
  const now = ctx.engine.clock.now();
  return { ...role, password, last_vault_rotation: now, next_rotation: now + role.rotation_period * 1000, failed_attempts: 0 };
}

/**
 * Rotates a stored static role under its lock. `onlyIfDue` (the job) skips a role that another
 * server rotated meanwhile, and after a failure moves the role's next attempt back by
 * `retryDelayMs` (a failed rotate-role call leaves the schedule alone). Returns false when there
 * was nothing to do.
 */
export async function rotateStaticRole(ctx: EngineContext, name: string, onlyIfDue: boolean): Promise<boolean> {
  const key = staticRoleKey(name);
  return withLock(ctx, key, async () => {
    const role = await ctx.tx((store) => store.get<StaticRole>(key));
    if (!role || (onlyIfDue && role.next_rotation > ctx.engine.clock.now())) return false;
    let next: StaticRole;
    try {
      const conn = await ctx.tx((store) => connectionForRole(store, role.db_name, name));
      next = await rotated(ctx, conn, role);
    } catch (err) {
      if (onlyIfDue) {
        await ctx.tx(async (store) => {
          const current = await store.get<StaticRole>(key);
          if (!current) return;
          const failures = (current.failed_attempts ?? 0) + 1;
          await store.put(key, { ...current, failed_attempts: failures, next_rotation: ctx.engine.clock.now() + retryDelayMs(failures) });
        });
      }
      throw err;
    }
    await ctx.tx(async (store) => {
      // Deleted while the statement ran: the role stays deleted.
      if (await store.exists(key)) await store.put(key, next);
    });
    return true;
  });
}

async function write(req: SecretsRequest<StaticBody>): Promise<undefined> {
  const name = nameOf(req, 'role');
  const b = req.body;
  const ctx = req.core.context(req.mount);
  await withLock(ctx, staticRoleKey(name), async () => {
    const { existing, conn, def } = await ctx.tx(async (store) => {
      if (await store.exists(roleKey(name))) throw badInput(`"${name}" is a dynamic role: role and static role names must be unique`);
      const old = await store.get<StaticRole>(staticRoleKey(name));
      if (old && b.username != null && b.username !== old.username) throw badInput('username: cannot update the username of a static role');
      const d: Definition = {
        db_name: b.db_name ?? old?.db_name ?? '',
        username: b.username ?? old?.username ?? '',
        rotation_period: b.rotation_period ?? old?.rotation_period ?? 0,
        rotation_statements: b.rotation_statements ?? old?.rotation_statements ?? [],
      };
      if (!d.username) throw badInput('username is required: the database user whose password Hangar rotates');
      if (/['"`\\\0]/.test(d.username)) throw badInput('username: must not contain quotes, backslashes or NUL');
      if (!d.db_name) throw badInput('db_name is required: the connection (config/:name) the role uses');
      if (!d.rotation_period) throw badInput('rotation_period is required: seconds or a duration such as "24h"');
      if (d.rotation_period < MIN_ROTATION) throw badInput(`rotation_period: must be at least ${MIN_ROTATION} seconds, not ${d.rotation_period}`);
      return { existing: old, def: d, conn: await connectionForRole(store, d.db_name, name) };
    });
    // A new role is rotated at once, so that Hangar knows its password (the spec's state table).
    // An update starts the schedule afresh from the last rotation (a failing role is tried again at once).
    const next: StaticRole = existing
      ? { ...existing, ...def, next_rotation: existing.last_vault_rotation + def.rotation_period * 1000, failed_attempts: 0 }
      : await rotated(ctx, conn, def);
    await ctx.tx((store) => store.put(staticRoleKey(name), next));
  });
  return undefined;
}

const readStatic = async (req: SecretsRequest) => req.store.get<StaticRole>(staticRoleKey(nameOf(req, 'role')));
const ttlOf = (role: StaticRole, now: number) => Math.max(0, Math.ceil((role.next_rotation - now) / 1000));

/** `static-roles/:name`, `static-creds/:name`, `rotate-role/:name`. */
export const staticRoleRoutes: EngineRoute[] = [
  {
    pattern: 'static-roles',
    readOnly: true,
    list: async (req) => ({ data: { keys: (await req.store.list('static-role/')).filter((k) => !k.endsWith('/')) } }),
  },
  {
    pattern: 'static-roles/:name',
    body: StaticBody,
    ownTransactions: ['create', 'update'],
    exists: async (req) => req.store.exists(staticRoleKey(req.params.name)),
    read: async (req) => {
      const role = await readStatic(req);
      if (!role) throw missing();
      return {
        data: {
          db_name: role.db_name,
          username: role.username,
          rotation_period: role.rotation_period,
          rotation_statements: role.rotation_statements,
          last_vault_rotation: rfc3339(role.last_vault_rotation),
          ttl: ttlOf(role, req.now),
          credential_type: 'password',
        },
      };
    },
    write,
    // The database user is defined outside Hangar: deleting the role leaves it (Vault's current variant).
    delete: async (req) => {
      await req.store.delete(staticRoleKey(nameOf(req, 'role')));
      return undefined;
    },
  },
  {
    pattern: 'static-creds/:name',
    readOnly: true,
    read: async (req) => {
      const role = await readStatic(req);
      if (!role) throw badInput(`unknown role: ${req.params.name}`);
      return {
        data: {
          username: role.username,
          password: role.password,
          last_vault_rotation: rfc3339(role.last_vault_rotation),
          rotation_period: role.rotation_period,
          ttl: ttlOf(role, req.now),
        },
      };
    },
  },
  {
    pattern: 'rotate-role/:name',
    ownTransactions: ['update'],
    write: async (req) => {
      const name = nameOf(req, 'role');
      if (!(await rotateStaticRole(req.core.context(req.mount), name, false))) throw badInput(`no static role found for role name "${name}"`);
      return undefined;
    },
  },
];

/**
 * The rotation job's round: every static role of every database mount whose rotation is due.
 * Failures are logged (never a password) and tried again after a back-off (`retryDelayMs`).
 */
export async function rotateDueStaticRoles(engine: Engine, core: SecretsCore): Promise<void> {
  const mounts = await engine.storage.tx((db) => core.mounts.all(db), { readOnly: true });
  for (const mount of mounts.filter((m) => m.kind === 'secret' && m.type === 'database')) {
    const ctx = core.context(mount);
    const now = engine.clock.now();
    const due = await ctx.tx(async (store) => {
      const names: string[] = [];
      for (const name of await store.list('static-role/')) {
        if (!validName(name)) continue;
        const role = await store.get<StaticRole>(staticRoleKey(name));
        if (role && role.next_rotation <= now) names.push(name);
      }
      return names;
    });
    for (const name of due) {
      try {
        await rotateStaticRole(ctx, name, true);
      } catch (err) {
        engine.logger.warn({ mount: mount.path, role: name, error: (err as Error).message }, 'static role rotation failed; it is retried after a back-off');
      }
    }
  }
}
