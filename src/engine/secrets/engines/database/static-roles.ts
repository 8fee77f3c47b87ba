import { z } from 'zod';
import { roleKey, staticRoleKey } from './roles';
import { MIN_ROTATION_WINDOW, nextOccurrence, RotationSchedule } from './schedule';
import { connectionForRole, databaseError, nameOf, newPassword, pluginOf, sessionFor, statements, StoredConnection, validName, withLock } from './store';
import type { Engine } from '../../../engine';
import type { SecretsCore } from '../../core/core';
import { duration, flexibleBoolean, rfc3339 } from '../../core/durations';
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
  rotation_schedule: z.string().max(256).nullish(),
  rotation_window: duration().nullish(),
  rotation_statements: statements.nullish(),
  credential_type: z.literal('password', { message: 'only "password" is supported' }).nullish(),
  skip_import_rotation: flexibleBoolean.nullish(),
});
type StaticBody = z.infer<typeof StaticBody>;

/** A static role (`static-roles/:name`) with its rotation state; the password is sealed. */
export interface StaticRole {
  readonly db_name: string;
  readonly username: string;
  /** Seconds; 0 when the role rotates on a schedule. */
  readonly rotation_period: number;
  /** A standard 5-field cron line (UTC), instead of a period (absent in records written before it existed). */
  readonly rotation_schedule?: string;
  /** Seconds after each scheduled time in which the rotation may still happen; 0: until the next one. */
  readonly rotation_window?: number;
  readonly rotation_statements: readonly string[];
  /** The role was created without rotating the password (Vault's `skip_import_rotation`). */
  readonly skip_import_rotation?: boolean;
  readonly password: string;
  /** Epoch ms of the last rotation Hangar made. */
  readonly last_vault_rotation: number;
  /** Epoch ms when the job rotates next (or retries, after a failure). */
  readonly next_rotation: number;
  /** Schedule roles: epoch ms of the scheduled time being waited for (its window starts there). */
  readonly next_scheduled?: number;
  /** Failed rotations by the job since the last success (absent in records written before it existed). */
  readonly failed_attempts?: number;
}

type Definition = Pick<
  StaticRole,
  'db_name' | 'username' | 'rotation_period' | 'rotation_schedule' | 'rotation_window' | 'rotation_statements' | 'skip_import_rotation'
>;

const usesSchedule = (role: Definition) => !role.rotation_period && !!role.rotation_schedule;

/**
 * The rotation state after a rotation (or the role's creation, or a change of its period or schedule)
 * at `from`: the next rotation is a period later, or at the schedule's next time after it (Vault's
 * `NextRotationTimeFromInput`).
 */
function scheduleFrom(role: Definition, from: number): Pick<StaticRole, 'next_rotation' | 'next_scheduled' | 'failed_attempts'> {
  if (!usesSchedule(role)) return { next_rotation: from + role.rotation_period * 1000, next_scheduled: undefined, failed_attempts: 0 };
  const next = nextOccurrence(role.rotation_schedule!, from);
  return { next_rotation: next, next_scheduled: next, failed_attempts: 0 };
}

/**
 * A schedule role whose window has passed without a rotation (Hangar was down, or every attempt
 * failed) waits for the schedule's next time, as Vault's `IsInsideRotationWindow` has it.
 */
function windowMissed(role: StaticRole, now: number): boolean {
  return usesSchedule(role) && !!role.rotation_window && now >= (role.next_scheduled ?? role.next_rotation) + role.rotation_window * 1000;
}

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
  return { ...role, password, last_vault_rotation: now, ...scheduleFrom(role, now) };
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
    if (onlyIfDue && windowMissed(role, ctx.engine.clock.now())) {
      await ctx.tx(async (store) => {
        if (await store.exists(key)) await store.put(key, { ...role, ...scheduleFrom(role, ctx.engine.clock.now()) });
      });
      return false;
    }
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

/**
 * The role's period or schedule after a write, as Vault decides it: `rotation_period` and
 * `rotation_schedule` exclude each other (the one given replaces the other), a new role needs one of
 * them, and `rotation_window` (at least an hour) goes only with a schedule.
 */
function rotationOf(b: StaticBody, old: StaticRole | undefined): Pick<StaticRole, 'rotation_period' | 'rotation_schedule' | 'rotation_window'> {
  const period = b.rotation_period ?? undefined;
  const spec = b.rotation_schedule || undefined;
  if (period !== undefined && spec !== undefined) {
    throw badInput('mutually exclusive fields rotation_period and rotation_schedule were both specified; only one of them can be provided');
  }
  if (period !== undefined) {
    if (period < MIN_ROTATION) throw badInput(`rotation_period must be ${MIN_ROTATION} seconds or more`);
    if (b.rotation_window != null) throw badInput('rotation_window is invalid with use of rotation_period');
    return { rotation_period: period, rotation_schedule: '', rotation_window: 0 };
  }
  if (spec !== undefined) {
    const parsed = RotationSchedule.parse(spec);
    if (typeof parsed === 'string') throw badInput(`could not parse rotation_schedule: ${parsed}`);
    const window = b.rotation_window ?? old?.rotation_window ?? 0;
    if (b.rotation_window != null && window < MIN_ROTATION_WINDOW) {
      throw badInput(`rotation_window is invalid: rotation_window must be ${MIN_ROTATION_WINDOW} seconds or more`);
    }
    return { rotation_period: 0, rotation_schedule: spec, rotation_window: window };
  }
  if (!old) throw badInput('one of rotation_schedule or rotation_period must be provided to create a static account');
  // Neither given: the role keeps its own (Vault ignores a lone rotation_window too).
  return { rotation_period: old.rotation_period, rotation_schedule: old.rotation_schedule ?? '', rotation_window: old.rotation_window ?? 0 };
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
        ...rotationOf(b, old),
        rotation_statements: b.rotation_statements ?? old?.rotation_statements ?? [],
      };
      if (!d.username) throw badInput('username is required: the database user whose password Hangar rotates');
      if (/['"`\\\0]/.test(d.username)) throw badInput('username: must not contain quotes, backslashes or NUL');
      if (!d.db_name) throw badInput('db_name is required: the connection (config/:name) the role uses');
      const c = await connectionForRole(store, d.db_name, name);
      // Not given: the connection's default (`skip_static_role_import_rotation`), fixed at creation.
      const skip = b.skip_import_rotation ?? old?.skip_import_rotation ?? c.skip_static_role_import_rotation ?? false;
      return { existing: old, def: { ...d, skip_import_rotation: skip }, conn: c };
    });
    // A new role is rotated at once, so that Hangar knows its password (the spec's state table), unless
    // `skip_import_rotation` says the password stays (Hangar then has none to give until the first rotation).
    // An update starts the schedule afresh from the last rotation (a failing role is tried again at once).
    const now = ctx.engine.clock.now();
    const next: StaticRole = existing
      ? { ...existing, ...def, ...scheduleFrom(def, existing.last_vault_rotation) }
      : def.skip_import_rotation
        ? { ...def, password: '', last_vault_rotation: now, ...scheduleFrom(def, now) }
        : await rotated(ctx, conn, def);
    await ctx.tx((store) => store.put(staticRoleKey(name), next));
  });
  return undefined;
}

const readStatic = async (req: SecretsRequest) => req.store.get<StaticRole>(staticRoleKey(nameOf(req, 'role')));
/**
 * Seconds until the password changes: to the next rotation, or for a schedule role to the schedule's
 * next time (Vault's `CredentialTTL`).
 */
const ttlOf = (role: StaticRole, now: number) =>
  Math.max(0, Math.ceil(((usesSchedule(role) ? nextOccurrence(role.rotation_schedule!, now) : role.next_rotation) - now) / 1000));

/** `rotation_period`, or `rotation_schedule` and a non-zero `rotation_window`: only the fields of the role's kind, as Vault. */
function rotationShown(role: StaticRole): Record<string, unknown> {
  if (!usesSchedule(role)) return { rotation_period: role.rotation_period };
  return { rotation_schedule: role.rotation_schedule, ...(role.rotation_window ? { rotation_window: role.rotation_window } : {}) };
}

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
          ...rotationShown(role),
          rotation_statements: role.rotation_statements,
          last_vault_rotation: rfc3339(role.last_vault_rotation),
          ttl: ttlOf(role, req.now),
          credential_type: 'password',
          skip_import_rotation: role.skip_import_rotation ?? false,
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
          ...rotationShown(role),
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
