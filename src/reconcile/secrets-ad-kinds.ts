import { z } from 'zod';
import { Clients } from './clients';
import { differences, Outcome, ResourceKind } from './kind';
import { fromEnv, splitRoleKey } from './secrets-kinds';

/**
 * The directory accounts engine's managed objects: its configuration (one per mount), roles and
 * library sets. The bind password never travels in a payload: the payload names an environment
 * variable, read here at deploy time.
 */

const ConfigDesired = z.object({
  url: z.string().min(1),
  binddn: z.string().min(1),
  bindpassEnv: z.string().min(1),
  userdn: z.string().default(''),
  upndomain: z.string().default(''),
  schema: z.enum(['ad', 'openldap']).default('ad'),
  starttls: z.boolean().default(false),
  insecureTls: z.boolean().default(false),
  certificate: z.string().default(''),
  ttl: z.number().int().min(0).default(0),
  maxTtl: z.number().int().min(0).default(0),
  length: z.number().int().min(0).default(0),
  formatter: z.string().default(''),
  requestTimeout: z.number().int().min(0).default(0),
  lastRotationTolerance: z.number().int().min(0).default(0),
  caseSensitiveNames: z.boolean().default(false),
  tlsMinVersion: z.string().default(''),
  tlsMaxVersion: z.string().default(''),
});
type ConfigDesired = z.infer<typeof ConfigDesired>;

/** Construct props' names to the API's fields; 0 and '' mean "the engine's default" and are not sent. */
const FIELDS: ReadonlyArray<[keyof ConfigDesired, string]> = [
  ['url', 'url'],
  ['binddn', 'binddn'],
  ['userdn', 'userdn'],
  ['upndomain', 'upndomain'],
  ['schema', 'schema'],
  ['starttls', 'starttls'],
  ['insecureTls', 'insecure_tls'],
  ['certificate', 'certificate'],
  ['ttl', 'ttl'],
  ['maxTtl', 'max_ttl'],
  ['length', 'length'],
  ['formatter', 'formatter'],
  ['requestTimeout', 'request_timeout'],
  ['lastRotationTolerance', 'last_rotation_tolerance'],
  ['caseSensitiveNames', 'case_sensitive_names'],
  ['tlsMinVersion', 'tls_min_version'],
  ['tlsMaxVersion', 'tls_max_version'],
];

/** The settings a desired state pins (defaults left to the engine are not compared). */
function pinned(d: ConfigDesired): Record<string, unknown> {
  return Object.fromEntries(FIELDS.filter(([k]) => d[k] !== 0 && d[k] !== '').map(([k, api]) => [api, d[k]]));
}

export const secretsAdConfigKind: ResourceKind<ConfigDesired> = {
  kind: 'secrets.ad-config',
  deleteOrder: 20,
  desired: ConfigDesired,
  async read(clients, key, desired) {
    const res = await clients.secrets.read(`${key}/config`);
    if (!res?.data) return undefined;
    const d = res.data;
    // Settings the desired state leaves to the engine's defaults read as left (no drift on them).
    const unpinned = (k: keyof ConfigDesired) => desired !== undefined && (desired[k] === 0 || desired[k] === '');
    return ConfigDesired.parse({
      ...Object.fromEntries(FIELDS.map(([k, api]) => [k, unpinned(k) ? desired![k] : d[api]])),
      // The bind password is never shown: taken as given.
      bindpassEnv: desired?.bindpassEnv ?? 'unknown',
    });
  },
  async upsert(clients, key, desired): Promise<Outcome> {
    const res = await clients.secrets.read(`${key}/config`);
    const live = res?.data ?? {};
    const want = pinned(desired);
    // Written when a setting differs. The bind password cannot be read back, and rotate-root may
    // have replaced it with one only the engine knows: unchanged settings leave it alone.
    if (res && Object.entries(want).every(([k, v]) => JSON.stringify(live[k]) === JSON.stringify(v))) return 'unchanged';
    await clients.secrets.write(`${key}/config`, { ...want, bindpass: fromEnv(desired.bindpassEnv, 'bindpassEnv') });
    return res ? 'updated' : 'created';
  },
  async delete(clients, key) {
    const existed = (await clients.secrets.read(`${key}/config`)) !== undefined;
    if (existed) await clients.secrets.delete(`${key}/config`);
    return existed;
  },
};

const RoleDesired = z.object({ serviceAccountName: z.string().min(1), ttl: z.number().int().min(0).default(0) });
type RoleDesired = z.infer<typeof RoleDesired>;

export const secretsAdRoleKind: ResourceKind<RoleDesired> = {
  kind: 'secrets.ad-role',
  deleteOrder: 30,
  desired: RoleDesired,
  async read(clients, key, desired) {
    const [mount, name] = splitRoleKey(key);
    const res = await clients.secrets.read(`${mount}/roles/${name}`);
    if (!res?.data) return undefined;
    // A role without its own ttl reads the config's: an unset desired ttl matches any.
    return { serviceAccountName: res.data.service_account_name, ttl: desired && desired.ttl === 0 ? 0 : Number(res.data.ttl) };
  },
  async upsert(clients, key, desired) {
    const [mount, name] = splitRoleKey(key);
    const actual = await this.read(clients, key, desired);
    if (actual && differences(desired, actual).length === 0) return 'unchanged';
    await clients.secrets.write(`${mount}/roles/${name}`, { service_account_name: desired.serviceAccountName, ttl: desired.ttl });
    return actual ? 'updated' : 'created';
  },
  async delete(clients, key) {
    const [mount, name] = splitRoleKey(key);
    const existed = (await clients.secrets.read(`${mount}/roles/${name}`)) !== undefined;
    if (existed) await clients.secrets.delete(`${mount}/roles/${name}`);
    return existed;
  },
};

const SetDesired = z.object({
  serviceAccountNames: z.array(z.string().min(1)).min(1),
  ttl: z.number().int().min(0).default(86400),
  maxTtl: z.number().int().min(0).default(86400),
  disableCheckInEnforcement: z.boolean().default(false),
});
type SetDesired = z.infer<typeof SetDesired>;

async function readSet(clients: Clients, key: string): Promise<SetDesired | undefined> {
  const [mount, name] = splitRoleKey(key);
  const res = await clients.secrets.read(`${mount}/library/${name}`);
  if (!res?.data) return undefined;
  return {
    serviceAccountNames: res.data.service_account_names,
    ttl: Number(res.data.ttl),
    maxTtl: Number(res.data.max_ttl),
    disableCheckInEnforcement: res.data.disable_check_in_enforcement === true,
  };
}

export const secretsAdLibraryKind: ResourceKind<SetDesired> = {
  kind: 'secrets.ad-library',
  deleteOrder: 30,
  desired: SetDesired,
  read: (clients, key) => readSet(clients, key),
  async upsert(clients, key, desired) {
    const [mount, name] = splitRoleKey(key);
    const actual = await readSet(clients, key);
    if (actual && differences(desired, actual).length === 0) return 'unchanged';
    await clients.secrets.write(`${mount}/library/${name}`, {
      service_account_names: desired.serviceAccountNames,
      ttl: desired.ttl,
      max_ttl: desired.maxTtl,
      disable_check_in_enforcement: desired.disableCheckInEnforcement,
    });
    return actual ? 'updated' : 'created';
  },
  async delete(clients, key) {
    const [mount, name] = splitRoleKey(key);
    const existed = (await readSet(clients, key)) !== undefined;
    if (existed) await clients.secrets.delete(`${mount}/library/${name}`);
    return existed;
  },
};

export const SECRETS_AD_KINDS = [secretsAdConfigKind, secretsAdRoleKind, secretsAdLibraryKind] as const;
