import { z } from 'zod';
import { AdConfig, readConfig, requireConfig } from './config';
import { duration, rfc3339 } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { EngineRoute, SecretsRequest, SecretsResponse } from '../../core/types';
import { Directory } from '../directory/directory';
import { AD_ROLES, accountKey, checkAccountName, libraryOwner, listResponse, NAME, roleUsing } from '../directory/names';
import { generatePassword, lock, Pending, rotate, stalePending } from '../directory/rotation';

const RoleBody = z.object({
  service_account_name: z.string().optional(),
  ttl: duration().optional(),
});

interface Role {
  readonly service_account_name: string;
  /** Seconds; 0 takes the config's ttl. */
  readonly ttl: number;
}

/** A role's passwords, sealed at `creds/<role>`, with when Hangar set the current one. */
interface Creds {
  readonly current_password: string;
  readonly last_password: string;
  /** Epoch ms of Hangar's rotation, and the directory's own last-set time read right after it. */
  readonly last_vault_rotation?: number;
  readonly password_last_set?: number;
  readonly pending?: Pending;
}

export function roleName(req: SecretsRequest): string {
  const name = req.params.name;
  if (!NAME.test(name)) throw badInput(`role name "${name}" is invalid: use letters, digits, ".", "_", "-", "@" (at most 128)`);
  return name;
}

const ttlOf = (role: Role, config: AdConfig) => role.ttl || config.ttl;

function shown(role: Role, config: AdConfig | undefined, creds: Creds | undefined): Record<string, unknown> {
  return {
    service_account_name: role.service_account_name,
    ttl: config ? ttlOf(role, config) : role.ttl,
    ...(creds?.last_vault_rotation ? { last_vault_rotation: rfc3339(creds.last_vault_rotation) } : {}),
    ...(creds?.password_last_set ? { password_last_set: rfc3339(creds.password_last_set) } : {}),
  };
}

async function writeRole(req: SecretsRequest<z.infer<typeof RoleBody>>): Promise<undefined> {
  const name = roleName(req);
  const ctx = req.core.context(req.mount);
  const { config, existing } = await ctx.tx(async (store) => ({ config: await requireConfig(store), existing: await store.get<Role>(`roles/${name}`) }));
  const account = req.body.service_account_name ?? existing?.service_account_name;
  if (!account) throw badInput('service_account_name is required: the directory account whose password the role rotates');
  checkAccountName('service_account_name', account);
  const ttl = req.body.ttl ?? existing?.ttl ?? 0;
  if (config.max_ttl && ttl > config.max_ttl) throw badInput(`ttl (${ttl}) must not exceed the config's max_ttl (${config.max_ttl})`);
  // The account must exist (spec); that is asked of the directory before anything is written.
  const found = await Directory.with(config, (d) => d.find(account));
  if (!found) throw badInput(`service_account_name: "${account}" was not found in the directory under ${config.userdn}`);
  await ctx.tx(async (store) => {
    await lock(store, 'accounts');
    const owner = await libraryOwner(store, config, account);
    if (owner) throw badInput(`service_account_name: "${account}" belongs to library set "${owner}"; an account serves one role or one set`);
    // Two roles rotating one account would each invalidate the other's password.
    const other = await roleUsing(store, config, account, AD_ROLES);
    if (other && other !== name) throw badInput(`service_account_name: "${account}" is the account of role "${other}"; an account serves one role or one set`);
    const changed = existing && accountKey(config, existing.service_account_name) !== accountKey(config, account);
    // A new account starts over: its first credentials read sets a password Hangar knows.
    if (changed) await store.delete(`creds/${name}`);
    await store.put(`roles/${name}`, { service_account_name: account, ttl } satisfies Role);
  });
  return undefined;
}

/**
 * `creds/:name`: the role's passwords, rotated first when none is known yet, when `ttl` has passed
 * since Hangar's last rotation, or when the directory's last-set time is later than that rotation
 * by more than `last_rotation_tolerance` (someone else changed the password).
 */
async function readCreds(req: SecretsRequest): Promise<SecretsResponse> {
  const { role, creds } = await rotateIfDue(req, false);
  return {
    data: {
      // As the public service: the logon name, the part of a UPN before the `@`.
      username: role.service_account_name.split('@')[0],
      current_password: creds?.current_password ?? '',
      ...(creds?.last_password ? { last_password: creds.last_password } : {}),
    },
  };
}

/** `rotate-role/:name`: a new password for the role's account now, whatever its age (204). */
async function rotateRole(req: SecretsRequest): Promise<undefined> {
  await rotateIfDue(req, true);
  return undefined;
}

/** The role and its passwords after rotating them when due (see readCreds) or when `force`d. */
async function rotateIfDue(req: SecretsRequest, force: boolean): Promise<{ role: Role; creds: Creds | undefined }> {
  const name = roleName(req);
  const ctx = req.core.context(req.mount);
  const now = () => req.engine.clock.now();
  const load = () =>
    ctx.tx(async (store) => {
      const config = await requireConfig(store);
      const role = await store.get<Role>(`roles/${name}`);
      if (!role) throw missing();
      return { config, role, creds: await store.get<Creds>(`creds/${name}`) };
    });
  let { config, role, creds } = await load();
  const staleMs = config.request_timeout * 1000;
  // One connection serves the lookup, the rotation and the read-back of the directory's time.
  await Directory.with(config, async (d) => {
    const account = await d.find(role.service_account_name);
    if (!account) throw badInput(`service account "${role.service_account_name}" no longer exists in the directory`);
    // The directory's last-set time is compared with its own time recorded right after Hangar's
    // rotation, not with Hangar's clock: a skew between the two hosts then causes no rotations.
    const recorded = creds?.password_last_set;
    const tolerance = config.last_rotation_tolerance * 1000;
    const changedElsewhere = account.lastSet !== undefined && recorded !== undefined && account.lastSet > recorded + tolerance;
    const expired = now() >= (creds?.last_vault_rotation ?? 0) + ttlOf(role, config) * 1000;
    if (!force && creds?.current_password && !stalePending(creds, now(), staleMs) && !expired && !changedElsewhere) return;
    if (!creds) await ctx.tx((store) => store.put(`creds/${name}`, { current_password: '', last_password: '' } satisfies Creds));
    let lastSet: number | undefined;
    const result = await rotate<Creds>({
      ctx,
      key: `creds/${name}`,
      password: generatePassword(config),
      now,
      staleMs,
      apply: async (password) => {
        await d.setPassword(account.dn, password);
        lastSet = (await d.find(role.service_account_name))?.lastSet;
      },
      finish: (c, password, at) => ({
        current_password: password,
        last_password: c.current_password,
        last_vault_rotation: at,
        password_last_set: lastSet,
      }),
    });
    // 'busy' or superseded ('gone'): another request rotates; what is stored now is the answer.
    ({ config, role, creds } = await load());
    if (result === 'gone' && !creds?.current_password) throw badInput('the role changed while its password was rotated; read the credentials again');
  });
  return { role, creds };
}

/** `roles`, `roles/:name`, `creds/:name` and `rotate-role/:name`. */
export const roleRoutes: EngineRoute[] = [
  {
    pattern: 'roles',
    readOnly: true,
    list: (req) => listResponse(req.store, 'roles/'),
  },
  {
    pattern: 'roles/:name',
    body: RoleBody,
    ownTransactions: ['create', 'update'],
    exists: async (req) => NAME.test(req.params.name) && req.store.exists(`roles/${req.params.name}`),
    read: async (req) => {
      const name = roleName(req);
      const role = await req.store.get<Role>(`roles/${name}`);
      if (!role) throw missing();
      return { data: shown(role, await readConfig(req.store), await req.store.get<Creds>(`creds/${name}`)) };
    },
    write: writeRole,
    delete: async (req) => {
      const name = roleName(req);
      for (const key of [`roles/${name}`, `creds/${name}`, `lock/creds/${name}`]) await req.store.delete(key);
      return undefined;
    },
  },
  { pattern: 'creds/:name', ownTransactions: ['read'], read: readCreds },
  { pattern: 'rotate-role/:name', ownTransactions: ['update'], write: rotateRole },
];
