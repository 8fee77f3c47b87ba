import { z } from 'zod';
import { LdapConfig, newPassword, readConfig, requireConfig } from './config';
import { ldapName, roleLookups } from './names';
import type { Engine } from '../../../engine';
import type { SecretsCore } from '../../core/core';
import { duration, flexibleBoolean, rfc3339, secondsLeft } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { EngineContext, EngineRoute, SecretsRequest } from '../../core/types';
import { retryDelayMs } from '../database/static-roles';
import { Directory } from '../directory/directory';
import { checkAccountName, keysUnder, libraryOwner, listResponse, RoleIndex, roleUsing } from '../directory/names';
import { lock, Pending, rotate, stalePending } from '../directory/rotation';

/** The public service's shortest rotation period (its rotation queue's tick). */
const MIN_ROTATION = 5;
/** Go's zero time, which the public service shows for a role never rotated. */
const ZERO_TIME = '0001-01-01T00:00:00Z';

const StaticBody = z.object({
  username: z.string().max(1024).nullish(),
  dn: z.string().max(4096).nullish(),
  rotation_period: duration().nullish(),
  skip_import_rotation: flexibleBoolean.nullish(),
});
type StaticBody = z.infer<typeof StaticBody>;

/** A static role, sealed at `static-role/<name>` with its passwords and rotation state. */
interface StaticRole {
  readonly username: string;
  readonly dn: string;
  /** Seconds. */
  readonly rotation_period: number;
  /** Empty until Hangar first sets one (a role created with skip_import_rotation). */
  readonly password: string;
  readonly last_password: string;
  /** Epoch ms of Hangar's last rotation; 0 never. */
  readonly last_vault_rotation: number;
  /** Epoch ms when the background job rotates next (or retries, after a failure). */
  readonly next_rotation: number;
  readonly failed_attempts: number;
  readonly pending?: Pending;
}

/** Where static roles live, for the one-role-or-one-set rule of the shared library code. */
export const STATIC_ROLES: RoleIndex = { dir: 'static-role/', field: 'username' };

const key = (name: string) => `static-role/${name}`;
const roleName = (req: SecretsRequest) => ldapName('role', req.params.name);

/** The role's entry: its DN when given, else found under userdn by userattr. */
async function locate(d: Directory, role: Pick<StaticRole, 'dn' | 'username'>) {
  const account = role.dn ? await d.at(role.dn) : await d.find(role.username);
  if (!account) throw badInput(role.dn ? `dn: "${role.dn}" does not exist in the directory` : `username: "${role.username}" was not found in the directory (searched by userattr under userdn)`);
  return account;
}

/**
 * Sets a new password on the role's entry now (two-phase, see rotation.ts). Returns false when
 * another rotation of it runs or the role went away meanwhile.
 */
async function rotateRole(ctx: EngineContext, config: LdapConfig, name: string, role: StaticRole): Promise<boolean> {
  const password = await newPassword(ctx, config);
  const result = await Directory.with(config, async (d) => {
    const account = await locate(d, role);
    return rotate<StaticRole>({
      ctx,
      key: key(name),
      password,
      now: () => ctx.engine.clock.now(),
      staleMs: config.request_timeout * 1000,
      apply: (pw) => d.setPassword(account.dn, pw),
      finish: (r, pw, at) => ({
        ...r,
        password: pw,
        last_password: r.password,
        last_vault_rotation: at,
        next_rotation: at + r.rotation_period * 1000,
        failed_attempts: 0,
      }),
    });
  });
  return result !== 'busy' && result !== 'gone';
}

async function writeRole(req: SecretsRequest<StaticBody>): Promise<undefined> {
  const name = roleName(req);
  const ctx = req.core.context(req.mount);
  const b = req.body;
  const { config, existing } = await ctx.tx(async (store) => ({
    config: await requireConfig(store),
    existing: await store.get<StaticRole>(key(name)),
  }));
  const create = !existing;
  if (create && b.username == null) throw badInput('username is a required field to manage a static account');
  if (b.username === '') throw badInput('username must not be empty');
  if (!create && b.username != null && b.username !== existing.username) throw badInput('cannot update static account username');
  if (!create && b.dn && b.dn !== existing.dn) throw badInput('cannot update static account distinguished name (dn)');
  if (create && b.rotation_period == null) throw badInput('rotation_period is required to create static accounts');
  if (b.rotation_period != null && b.rotation_period < MIN_ROTATION) throw badInput(`rotation_period must be ${MIN_ROTATION} seconds or more`);
  if (!create && b.skip_import_rotation != null) throw badInput('skip_import_rotation has no effect on updates');
  const username = b.username ?? existing!.username;
  checkAccountName('username', username);
  const period = b.rotation_period ?? existing!.rotation_period;
  const now = req.engine.clock.now();
  if (!create) {
    // A new period counts from the last rotation (or from now when there was none).
    await ctx.tx(async (store) => {
      await lock(store, key(name));
      const r = await store.get<StaticRole>(key(name));
      if (!r) throw missing();
      const next = (r.last_vault_rotation || now) + period * 1000;
      await store.put(key(name), { ...r, rotation_period: period, next_rotation: next } satisfies StaticRole);
    });
    return undefined;
  }
  const role: StaticRole = {
    username,
    dn: b.dn ?? '',
    rotation_period: period,
    password: '',
    last_password: '',
    last_vault_rotation: 0,
    next_rotation: now + period * 1000,
    failed_attempts: 0,
  };
  const skip = b.skip_import_rotation ?? config.skip_static_role_import_rotation;
  // The entry must exist before anything is written (the public service's import rotation finds it).
  await Directory.with(config, (d) => locate(d, role));
  await ctx.tx(async (store) => {
    await lock(store, 'accounts');
    const owner = await libraryOwner(store, config, username);
    const other = await roleUsing(store, config, username, STATIC_ROLES);
    if (owner || (other && other !== name)) throw badInput(`"${username}" is already managed by the secrets engine`);
    await store.put(key(name), role);
  });
  if (skip) return undefined;
  try {
    await rotateRole(ctx, config, name, role);
  } catch (err) {
    // As the public service: a role whose import rotation failed is not created.
    await ctx.tx(async (store) => {
      await store.delete(key(name));
      await store.delete(`lock/${key(name)}`);
    });
    throw err;
  }
  return undefined;
}

/** `static-cred/:name`: the role's current password, the previous one and how long the current one lives. */
async function readCreds(req: SecretsRequest) {
  const name = roleName(req);
  const role = await req.store.get<StaticRole>(key(name));
  if (!role) throw badInput(`unknown role: ${name}`);
  return {
    data: {
      dn: role.dn,
      username: role.username,
      password: role.password,
      last_password: role.last_password,
      ttl: secondsLeft(role.next_rotation, req.engine.clock.now()),
      rotation_period: role.rotation_period,
      last_vault_rotation: role.last_vault_rotation ? rfc3339(role.last_vault_rotation) : ZERO_TIME,
    },
  };
}

/** `rotate-role/:name`: a new password now; the schedule restarts from it (204). */
async function rotateNow(req: SecretsRequest): Promise<undefined> {
  const name = roleName(req);
  const ctx = req.core.context(req.mount);
  const { config, role } = await ctx.tx(async (store) => ({ config: await readConfig(store), role: await store.get<StaticRole>(key(name)) }));
  if (!role) throw badInput(`role doesn't exist: ${name}`);
  if (!config) throw badInput('missing LDAP configuration');
  await rotateRole(ctx, config, name, role);
  return undefined;
}

/**
 * The rotation job's round for one mount: every static role whose rotation is due (or whose
 * rotation a crash left unfinished). Failures are logged (never a password) and retried after a
 * back-off.
 */
export async function rotateDueRoles(ctx: EngineContext): Promise<void> {
  const now = ctx.engine.clock.now();
  const { config, due } = await ctx.tx(async (store) => {
    const c = await readConfig(store);
    const names: Array<[string, StaticRole]> = [];
    if (c) {
      for (const name of await keysUnder(store, STATIC_ROLES.dir)) {
        const role = await store.get<StaticRole>(key(name));
        if (role && (role.next_rotation <= now || stalePending(role, now, c.request_timeout * 1000))) names.push([name, role]);
      }
    }
    return { config: c, due: names };
  });
  for (const [name, role] of due) {
    try {
      await rotateRole(ctx, config!, name, role);
    } catch (err) {
      const failures = (role.failed_attempts ?? 0) + 1;
      await ctx.tx(async (store) => {
        const r = await store.get<StaticRole>(key(name));
        if (r) await store.put(key(name), { ...r, failed_attempts: failures, next_rotation: ctx.engine.clock.now() + retryDelayMs(failures) });
      });
      ctx.engine.logger.warn({ mount: ctx.mount.path, role: name, error: (err as Error).message }, 'ldap static role rotation failed; it is retried after a back-off');
    }
  }
}

/** The job's round over every `ldap` (and `openldap`) mount. */
export async function rotateDueStaticAccounts(engine: Engine, core: SecretsCore): Promise<void> {
  const mounts = await engine.storage.tx((db) => core.mounts.all(db), { readOnly: true });
  for (const mount of mounts.filter((m) => m.kind === 'secret' && (m.type === 'ldap' || m.type === 'openldap'))) await rotateDueRoles(core.context(mount));
}

/** `static-role`, `static-role/:name`, `static-cred/:name`, `rotate-role/:name` (names may hold `/`). */
export const staticRoleRoutes: EngineRoute[] = [
  { pattern: 'static-role', readOnly: true, list: (req) => listResponse(req.store, STATIC_ROLES.dir, true) },
  {
    pattern: 'static-role/*name',
    body: StaticBody,
    ownTransactions: ['create', 'update'],
    ...roleLookups('static-role'),
    read: async (req) => {
      const role = await req.store.get<StaticRole>(key(roleName(req)));
      if (!role) throw missing();
      return {
        data: {
          dn: role.dn,
          username: role.username,
          rotation_period: role.rotation_period,
          ...(role.last_vault_rotation ? { last_vault_rotation: rfc3339(role.last_vault_rotation) } : {}),
        },
      };
    },
    write: writeRole,
    delete: async (req) => {
      const name = roleName(req);
      await req.store.delete(key(name));
      await req.store.delete(`lock/${key(name)}`);
      return undefined;
    },
  },
  { pattern: 'static-cred/*name', readOnly: true, read: readCreds },
  { pattern: 'rotate-role/*name', ownTransactions: ['update'], write: rotateNow },
];
