import { HangarError } from '../../../http/errors';
import { rfc3339 } from '../../core/durations';
import { deepFreeze, MountStore, SealedMemo } from '../../core/store';
import { SecretsRequest } from '../../core/types';

/** Where each layout keeps its entries in the mount's sealed store. */
export const V1_PREFIX = 'kv/';
export const V2_PREFIX = 'meta/';
const CONFIG_KEY = 'config';

/** Vault's default `max_versions` when neither the secret nor the mount sets one. */
const DEFAULT_MAX_VERSIONS = 10;

/** The mount's `config` (KV v2). */
export interface KvConfig {
  readonly maxVersions: number;
  readonly casRequired: boolean;
  /** Seconds; 0 keeps versions. */
  readonly deleteVersionAfter: number;
}

export interface KvVersion {
  readonly created: number;
  /** Epoch ms of the soft delete (past or scheduled by `delete_version_after`); 0 when none. */
  deletion: number;
  destroyed: boolean;
  /** Gone once destroyed. */
  data?: Record<string, unknown>;
}

/**
 * One KV v2 secret: its metadata and every version kept, in one sealed entry, so a write (new
 * version, trimming, metadata) is one atomic put and a read one get.
 */
export interface KvSecret extends KvConfig {
  readonly created: number;
  updated: number;
  current: number;
  oldest: number;
  custom: Record<string, string>;
  versions: Record<string, KvVersion>;
}

export const readConfig = async (store: MountStore): Promise<KvConfig> =>
  (await store.get<KvConfig>(CONFIG_KEY)) ?? { maxVersions: 0, casRequired: false, deleteVersionAfter: 0 };

export const writeConfig = (store: MountStore, config: KvConfig) => store.put(CONFIG_KEY, config);

/** A secret to change: opened anew, the caller's own copy. */
export const readSecret = (req: SecretsRequest) => req.store.get<KvSecret>(V2_PREFIX + req.params.path);

/**
 * Opened secrets by ciphertext (MountStore.getMemo) for the read routes: a read opens nothing while
 * the stored entry is unchanged. Only entries up to 16 KiB of ciphertext are kept (a secret with
 * all its versions), so the memo holds at most 16 MiB of them.
 */
const opened = new SealedMemo<KvSecret>(1024, 16 * 1024);

/** A secret to read: shared with other requests while it is unchanged, never to be changed. */
export const viewSecret = (req: SecretsRequest): Promise<Readonly<KvSecret> | undefined> =>
  req.store.getMemo<KvSecret>(V2_PREFIX + req.params.path, opened, deepFreeze);

/** Whether a secret is stored (a write's create-or-update decision), without opening it. */
export const secretExists = (req: SecretsRequest) => req.store.exists(V2_PREFIX + req.params.path);

export const writeSecret = (req: SecretsRequest, secret: KvSecret) => req.store.put(V2_PREFIX + req.params.path, secret);

export const newSecret = (now: number): KvSecret => ({
  created: now,
  updated: now,
  current: 0,
  oldest: 0,
  maxVersions: 0,
  casRequired: false,
  deleteVersionAfter: 0,
  custom: {},
  versions: {},
});

/** Adds a version (the write's checks done), then drops the oldest beyond `max_versions`. */
export function addVersion(secret: KvSecret, config: KvConfig, data: Record<string, unknown>, now: number): number {
  const version = secret.current + 1;
  const after = secret.deleteVersionAfter || config.deleteVersionAfter;
  secret.versions[String(version)] = { created: now, deletion: after > 0 ? now + after * 1000 : 0, destroyed: false, data };
  secret.current = version;
  secret.updated = now;
  const max = secret.maxVersions || config.maxVersions || DEFAULT_MAX_VERSIONS;
  trim(secret, max);
  return version;
}

/** Keeps the newest `max` versions; `oldest_version` becomes the oldest kept (Vault's cleanup). */
export function trim(secret: KvSecret, max: number): void {
  const kept = Object.keys(secret.versions).map(Number).sort((a, b) => a - b);
  const drop = kept.slice(0, Math.max(0, kept.length - max));
  for (const v of drop) delete secret.versions[String(v)];
  if (drop.length) secret.oldest = Math.min(...Object.keys(secret.versions).map(Number));
}

export const isDeleted = (v: KvVersion, now: number) => v.deletion > 0 && v.deletion <= now;

/** A version's metadata as the data, subkeys and write responses show it. */
export const versionMetadata = (secret: KvSecret, n: number, v: KvVersion) => ({
  created_time: rfc3339(v.created),
  custom_metadata: Object.keys(secret.custom).length ? secret.custom : null,
  deletion_time: v.deletion ? rfc3339(v.deletion) : '',
  destroyed: v.destroyed,
  version: n,
});

/** Go's time.Duration text, which Vault shows for `delete_version_after` (`0s`, `1h0m0s`, `30m0s`). */
export function goDuration(seconds: number): string {
  if (seconds === 0) return '0s';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h ? `${h}h${m}m${s}s` : m ? `${m}m${s}s` : `${s}s`;
}

/** The names of a folder of the store (LIST), or Vault's 404 when there are none. */
export async function listKeys(store: MountStore, dir: string) {
  const keys = await store.list(dir);
  if (!keys.length) throw new HangarError(404, []);
  return { data: { keys } };
}

/** The folder a LIST of `rel` reads under `prefix` (`''` is the top). */
export const folder = (prefix: string, rel: string | undefined) => (rel ? `${prefix}${rel.replace(/\/+$/, '')}/` : prefix);

/** Every key under a folder of the store, at any depth. */
export async function allKeys(store: MountStore, dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await store.list(dir)) {
    if (name.endsWith('/')) out.push(...(await allKeys(store, dir + name)));
    else out.push(dir + name);
  }
  return out;
}

/** RFC 7386 JSON merge patch of an object: `null` removes a key, objects merge, anything else replaces. */
export function mergePatch(target: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...target };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) {
      delete out[k];
      continue;
    }
    const old = out[k];
    const merged =
      typeof v === 'object' && !Array.isArray(v)
        ? mergePatch(old !== null && typeof old === 'object' && !Array.isArray(old) ? (old as Record<string, unknown>) : {}, v as Record<string, unknown>)
        : v;
    // defineProperty: a key named `__proto__` stays a plain key.
    Object.defineProperty(out, k, { value: merged, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
