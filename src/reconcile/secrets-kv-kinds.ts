import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { Clients } from './clients';
import { differences, Outcome, ResourceKind } from './kind';
import { kvValue, kvValueHash } from './kv-value';
import { fromEnv } from './secrets-kinds';
import { named, pathKind } from './secrets-path-kind';

/**
 * The key/value store's mounts and secrets, transit keys and token roles. A secret's value never
 * travels in a payload: the payload names an environment variable or a file, read at deploy time;
 * it carries at most a hash of the value (so that a changed value triggers a deploy).
 */

const KvMountDesired = z.object({
  version: z.union([z.literal(1), z.literal(2)]).default(2),
  description: z.string().default(''),
  defaultLeaseTtl: z.number().int().min(0).default(0),
  maxLeaseTtl: z.number().int().min(0).default(0),
  maxVersions: z.number().int().min(0).default(0),
  casRequired: z.boolean().default(false),
  deleteVersionAfter: z.number().int().min(0).default(0),
});
type KvMountDesired = z.infer<typeof KvMountDesired>;
/** The fields `sys/mounts/<path>/tune` sets; the others are the store's `config`. */
const MOUNT_FIELDS = ['version', 'description', 'defaultLeaseTtl', 'maxLeaseTtl'];

/** Seconds of Go's duration text (`1h0m0s`), as KV's config shows `delete_version_after`. */
function goSeconds(text: unknown): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1 };
  return [...String(text ?? '').matchAll(/(\d+)([hms])/g)].reduce((sum, [, n, u]) => sum + Number(n) * units[u], 0);
}

/** The KV version of a mount (1 or 2), or undefined when there is no mount; throws for another engine's mount. */
async function kvVersion(clients: Clients, mount: string): Promise<1 | 2 | undefined> {
  const info = await clients.secrets.getMount(mount);
  if (!info) return undefined;
  if (info.type !== 'kv') throw new Error(`${mount}/ is a "${info.type}" mount, not a key/value store: use another path`);
  const tune = await clients.secrets.read(`sys/mounts/${mount}/tune`);
  return tune?.data?.options?.version === '2' ? 2 : 1;
}

export const secretsKvMountKind: ResourceKind<KvMountDesired> = {
  kind: 'secrets.kv-mount',
  deleteOrder: 10,
  desired: KvMountDesired,
  async read(clients, key) {
    const version = await kvVersion(clients, key);
    if (!version) return undefined;
    const info = (await clients.secrets.getMount(key))!;
    const config = version === 2 ? (await clients.secrets.read(`${key}/config`))?.data : undefined;
    return {
      version,
      description: info.description,
      defaultLeaseTtl: info.config.default_lease_ttl,
      maxLeaseTtl: info.config.max_lease_ttl,
      maxVersions: config?.max_versions ?? 0,
      casRequired: config?.cas_required ?? false,
      deleteVersionAfter: goSeconds(config?.delete_version_after),
    };
  },
  async upsert(clients, key, desired): Promise<Outcome> {
    const actual = await this.read(clients, key);
    const mount = { description: desired.description, options: { version: String(desired.version) } };
    const ttls = { default_lease_ttl: desired.defaultLeaseTtl, max_lease_ttl: desired.maxLeaseTtl };
    if (!actual) {
      await clients.secrets.write(`sys/mounts/${key}`, { type: 'kv', ...mount, config: ttls });
    } else {
      if (actual.version === 2 && desired.version === 1) throw new Error(`${key}/ is a KV version 2 mount; it cannot go back to version 1: use another path`);
      const changed = differences(desired, actual);
      // Tuning version 1 to 2 upgrades the mount in place, keeping its secrets.
      if (changed.some((f) => MOUNT_FIELDS.includes(f))) await clients.secrets.write(`sys/mounts/${key}/tune`, { ...mount, ...ttls });
    }
    if (desired.version === 2 && (!actual || differences(desired, actual).some((f) => !MOUNT_FIELDS.includes(f)))) {
      const { maxVersions, casRequired, deleteVersionAfter } = desired;
      await clients.secrets.write(`${key}/config`, { max_versions: maxVersions, cas_required: casRequired, delete_version_after: deleteVersionAfter });
    }
    if (!actual) return 'created';
    return differences(desired, actual).length ? 'updated' : 'unchanged';
  },
  delete: (clients, key) => clients.secrets.disableMount(key),
};

const KvSecretDesired = z.object({
  valueEnv: z.string().optional(),
  valueFile: z.string().optional(),
  /** SHA-256 of the value's canonical JSON when synthesis could read it. */
  valueHash: z.string().optional(),
});
type KvSecretDesired = z.infer<typeof KvSecretDesired>;


function desiredValue(d: KvSecretDesired): Record<string, unknown> {
  if (d.valueFile) return kvValue(readFileSync(d.valueFile, 'utf8'), `the file ${d.valueFile} (valueFile)`);
  return kvValue(fromEnv(d.valueEnv, 'valueEnv') ?? '', `the environment variable ${d.valueEnv} (valueEnv)`);
}

/** `<mount>:<path>` of a secret's key (a mount path never holds ":"). */
function splitSecretKey(key: string): [string, string] {
  const at = key.indexOf(':');
  if (at <= 0 || at === key.length - 1) throw new Error(`KV secret key "${key}" is not of the form mount:path`);
  return [key.slice(0, at), key.slice(at + 1)];
}

/** The live value of a secret, or undefined (no mount, no secret, or its current version deleted). */
async function liveValue(clients: Clients, key: string): Promise<{ version: 1 | 2; value?: Record<string, unknown> } | undefined> {
  const [mount, path] = splitSecretKey(key);
  const version = await kvVersion(clients, mount);
  if (!version) return undefined;
  const data = (await clients.secrets.read(version === 2 ? `${mount}/data/${path}` : `${mount}/${path}`))?.data;
  return { version, value: (version === 2 ? data?.data : data) ?? undefined };
}

export const secretsKvSecretKind: ResourceKind<KvSecretDesired> = {
  kind: 'secrets.kv-secret',
  deleteOrder: 20,
  desired: KvSecretDesired,
  async read(clients, key, desired) {
    const live = await liveValue(clients, key);
    if (!live?.value) return undefined;
    return { valueEnv: desired?.valueEnv, valueFile: desired?.valueFile, valueHash: kvValueHash(live.value) };
  },
  async upsert(clients, key, desired): Promise<Outcome> {
    const [mount, path] = splitSecretKey(key);
    const value = desiredValue(desired);
    const live = await liveValue(clients, key);
    if (!live) throw new Error(`KV secret ${path}: the mount ${mount}/ does not exist`);
    if (live.value && kvValueHash(live.value) === kvValueHash(value)) return 'unchanged';
    await clients.secrets.write(live.version === 2 ? `${mount}/data/${path}` : `${mount}/${path}`, live.version === 2 ? { data: value } : value);
    return live.value ? 'updated' : 'created';
  },
  async delete(clients, key) {
    const [mount, path] = splitSecretKey(key);
    const live = await liveValue(clients, key);
    if (!live) return false;
    // Version 2: every version and the metadata go.
    await clients.secrets.delete(live.version === 2 ? `${mount}/metadata/${path}` : `${mount}/${path}`);
    return live.value !== undefined;
  },
};

const TransitKeyDesired = z.object({
  type: z.string().default('aes256-gcm96'),
  derived: z.boolean().default(false),
  exportable: z.boolean().default(false),
  allowPlaintextBackup: z.boolean().default(false),
  deletionAllowed: z.boolean().default(false),
  minDecryptionVersion: z.number().int().min(0).default(1),
  minEncryptionVersion: z.number().int().min(0).default(0),
  autoRotatePeriod: z.number().int().min(0).default(0),
});
type TransitKeyDesired = z.infer<typeof TransitKeyDesired>;

const transitPath = named('keys');

export const secretsTransitKeyKind: ResourceKind<TransitKeyDesired> = {
  kind: 'secrets.transit-key',
  deleteOrder: 20,
  desired: TransitKeyDesired,
  async read(clients, key) {
    const d = (await clients.secrets.read(transitPath(key)))?.data;
    if (!d) return undefined;
    return {
      type: d.type,
      derived: d.derived,
      exportable: d.exportable,
      allowPlaintextBackup: d.allow_plaintext_backup,
      deletionAllowed: d.deletion_allowed,
      minDecryptionVersion: d.min_decryption_version,
      minEncryptionVersion: d.min_encryption_version,
      autoRotatePeriod: d.auto_rotate_period,
    };
  },
  async upsert(clients, key, desired): Promise<Outcome> {
    const actual = await this.read(clients, key);
    if (actual && (actual.type !== desired.type || actual.derived !== desired.derived)) {
      // Replacing would destroy the key material and every ciphertext made with it.
      throw new Error(`transit key ${key}: its type and derivation cannot change (${actual.type}, derived ${actual.derived}): use another name`);
    }
    if (actual && differences(desired, actual).length === 0) return 'unchanged';
    if (!actual) await clients.secrets.write(transitPath(key), { type: desired.type, derived: desired.derived });
    await clients.secrets.write(`${transitPath(key)}/config`, {
      exportable: desired.exportable,
      allow_plaintext_backup: desired.allowPlaintextBackup,
      deletion_allowed: desired.deletionAllowed,
      min_decryption_version: desired.minDecryptionVersion,
      min_encryption_version: desired.minEncryptionVersion,
      auto_rotate_period: desired.autoRotatePeriod,
    });
    return actual ? 'updated' : 'created';
  },
  async delete(clients, key) {
    if (!(await this.read(clients, key))) return false;
    // Removing the construct deletes the key: allow it first, as `terraform destroy` of Vault's provider needs the user to.
    await clients.secrets.write(`${transitPath(key)}/config`, { deletion_allowed: true });
    await clients.secrets.delete(transitPath(key));
    return true;
  },
};

const TokenRoleDesired = z.object({
  allowedPolicies: z.array(z.string()).default([]),
  disallowedPolicies: z.array(z.string()).default([]),
  allowedPoliciesGlob: z.array(z.string()).default([]),
  disallowedPoliciesGlob: z.array(z.string()).default([]),
  orphan: z.boolean().default(false),
  renewable: z.boolean().default(true),
  pathSuffix: z.string().default(''),
  allowedEntityAliases: z.array(z.string()).default([]),
  tokenPeriod: z.number().int().min(0).default(0),
  tokenExplicitMaxTtl: z.number().int().min(0).default(0),
  tokenType: z.string().default('default-service'),
});

export const secretsTokenRoleKind = pathKind<z.infer<typeof TokenRoleDesired>>({
  kind: 'secrets.token-role',
  deleteOrder: 20,
  desired: TokenRoleDesired,
  path: (name) => `auth/token/roles/${name}`,
  fromApi: (d) => ({
    allowedPolicies: d.allowed_policies ?? [],
    disallowedPolicies: d.disallowed_policies ?? [],
    allowedPoliciesGlob: d.allowed_policies_glob ?? [],
    disallowedPoliciesGlob: d.disallowed_policies_glob ?? [],
    orphan: d.orphan,
    renewable: d.renewable,
    pathSuffix: d.path_suffix ?? '',
    allowedEntityAliases: d.allowed_entity_aliases ?? [],
    tokenPeriod: d.token_period ?? 0,
    tokenExplicitMaxTtl: d.token_explicit_max_ttl ?? 0,
    tokenType: d.token_type,
  }),
  toApi: (d) => ({
    allowed_policies: d.allowedPolicies,
    disallowed_policies: d.disallowedPolicies,
    allowed_policies_glob: d.allowedPoliciesGlob,
    disallowed_policies_glob: d.disallowedPoliciesGlob,
    orphan: d.orphan,
    renewable: d.renewable,
    path_suffix: d.pathSuffix,
    allowed_entity_aliases: d.allowedEntityAliases,
    token_period: d.tokenPeriod,
    token_explicit_max_ttl: d.tokenExplicitMaxTtl,
    token_type: d.tokenType,
  }),
});

export const SECRETS_KV_KINDS = [secretsKvMountKind, secretsKvSecretKind, secretsTransitKeyKind, secretsTokenRoleKind] as const;
