import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { allObjects, getObject } from './objects';
import type { Transformation } from './transformations';
import type { Engine } from '../../../engine';
import type { SecretsCore } from '../../core/core';
import { duration, flexibleInt } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { MountStore } from '../../core/store';
import { EngineRoute, SecretsRequest } from '../../core/types';
import { checkRotatePeriod } from '../transit/keys';

/**
 * A tokenization transformation's key versions after the first (the transformation's `key`, version
 * 1) and their policy, as Vault's `tokenization/keys/:name`. A token is sealed with the latest version
 * and records which; its lookup HMAC stays under version 1's key, so a token is found in one read
 * whatever version sealed it.
 */
export interface TokenKeys {
  /** Versions 2, 3, …: base64 AES-256 keys and when they were made (epoch ms). */
  readonly versions: ReadonlyArray<{ readonly key: string; readonly created: number }>;
  readonly min_decryption_version: number;
  /** Versions below it were trimmed (their keys dropped; version 1's stays for the lookup HMAC only). */
  readonly min_available_version?: number;
  /** Seconds; 0 never rotates. */
  readonly auto_rotate_period: number;
}

/** A transformation's key policy, Vault's defaults for one never rotated or configured. */
const keysOf = (t: Transformation): TokenKeys => t.token_keys ?? { versions: [], min_decryption_version: 1, auto_rotate_period: 0 };

const latestVersion = (t: Transformation) => 1 + (t.token_keys?.versions.length ?? 0);

/** The key that seals new tokens, and its version. */
export function sealingKey(t: Transformation): [string, number] {
  const versions = t.token_keys?.versions ?? [];
  return versions.length ? [versions[versions.length - 1].key, versions.length + 1] : [t.key, 1];
}

/** The key of the version that sealed a token, if policy still allows decoding it. */
export function openingKey(t: Transformation, version: number): string {
  if (version < (t.token_keys?.min_decryption_version ?? 1)) throw badInput('value: the token was made with a key version below the min_decryption_version');
  if (version < (t.token_keys?.min_available_version ?? 0)) throw badInput(`value: the token's key version ${version} was trimmed`);
  const key = version === 1 ? t.key : t.token_keys?.versions[version - 2]?.key;
  if (!key) throw badInput(`value: the token's key version ${version} does not exist`);
  return key;
}

function rotated(t: Transformation, now: number): Transformation {
  const keys = keysOf(t);
  return { ...t, token_keys: { ...keys, versions: [...keys.versions, { key: randomBytes(32).toString('base64'), created: now }] } };
}

/** Vault's read of a tokenization key. */
function show(name: string, t: Transformation): Record<string, unknown> {
  return {
    name,
    type: 'aes256-gcm96',
    latest_version: latestVersion(t),
    min_available_version: t.token_keys?.min_available_version ?? 0,
    min_decryption_version: t.token_keys?.min_decryption_version ?? 1,
    auto_rotate_period: t.token_keys?.auto_rotate_period ?? 0,
  };
}

/** The tokenization transformation a `tokenization/keys/:name` path names. */
async function tokenizationOf(req: SecretsRequest): Promise<Transformation> {
  const t = await getObject<Transformation>(req.store, 'transformation', req.params.name);
  if (!t) throw missing();
  if (t.type !== 'tokenization') throw badInput(`transformation "${req.params.name}" is ${t.type}: only tokenization transformations have keys`);
  return t;
}

const TrimBody = z.object({ min_available_version: flexibleInt.pipe(z.number().int().min(1, 'must be 1 or more')) });
const ConfigBody = z.object({
  min_decryption_version: flexibleInt.pipe(z.number().int().min(1, 'must be 1 or more')).nullish(),
  auto_rotate_period: duration().nullish(),
});

const save = (store: MountStore, name: string, t: Transformation) => store.put(`transformation/${name}`, t);

/** `tokenization/keys`: LIST, read, `config`, `rotate`, `trim` of the tokenization transformations' keys. */
export const tokenizationKeyRoutes: EngineRoute[] = [
  {
    pattern: 'tokenization/keys',
    readOnly: true,
    list: async (req) => ({ data: { keys: (await allObjects<Transformation>(req.store, 'transformation')).filter(([, t]) => t.type === 'tokenization').map(([n]) => n) } }),
  },
  { pattern: 'tokenization/keys/:name', readOnly: true, read: async (req) => ({ data: show(req.params.name, await tokenizationOf(req)) }) },
  {
    pattern: 'tokenization/keys/:name/config',
    body: ConfigBody,
    write: async (req: SecretsRequest<z.infer<typeof ConfigBody>>) => {
      const t = await tokenizationOf(req as SecretsRequest);
      const b = req.body;
      const keys = keysOf(t);
      const min = b.min_decryption_version ?? keys.min_decryption_version;
      if (min > latestVersion(t)) throw badInput(`min_decryption_version: cannot be above the latest version ${latestVersion(t)}`);
      checkRotatePeriod(b.auto_rotate_period ?? undefined);
      const auto_rotate_period = b.auto_rotate_period ?? keys.auto_rotate_period;
      await save(req.store, req.params.name, { ...t, token_keys: { ...keys, min_decryption_version: min, auto_rotate_period } });
      return undefined;
    },
  },
  {
    pattern: 'tokenization/keys/:name/trim',
    body: TrimBody,
    write: async (req: SecretsRequest<z.infer<typeof TrimBody>>) => {
      const t = await tokenizationOf(req as SecretsRequest);
      const keys = keysOf(t);
      const min = req.body.min_available_version;
      if (min > keys.min_decryption_version) throw badInput(`min_available_version: must not be above min_decryption_version (${keys.min_decryption_version})`);
      // Versions below go for good: their keys are dropped (version 1's key also names tokens, so it stays).
      const versions = keys.versions.map((v, i) => (i + 2 < min ? { ...v, key: '' } : v));
      const min_available_version = Math.max(min, keys.min_available_version ?? 0);
      await save(req.store, req.params.name, { ...t, token_keys: { ...keys, versions, min_available_version } });
      return undefined;
    },
  },
  {
    pattern: 'tokenization/keys/:name/rotate',
    write: async (req) => {
      await save(req.store, req.params.name, rotated(await tokenizationOf(req), req.now));
      return undefined;
    },
  },
];

/** The background job's round: tokenization keys whose `auto_rotate_period` has passed get a new version. */
export async function rotateDueTokenizationKeys(engine: Engine, core: SecretsCore): Promise<void> {
  const now = engine.clock.now();
  await engine.storage.tx(async (db) => {
    for (const mount of await core.mounts.all(db)) {
      if (mount.kind !== 'secret' || mount.type !== 'transform') continue;
      const store = core.store(db, mount);
      for (const [name, t] of await allObjects<Transformation>(store, 'transformation')) {
        const period = t.token_keys?.auto_rotate_period;
        if (t.type !== 'tokenization' || !period) continue;
        const versions = t.token_keys!.versions;
        const since = versions.length ? versions[versions.length - 1].created : (t.created ?? 0);
        if (now - since >= period * 1000) await save(store, name, rotated(t, now));
      }
    }
  });
}
