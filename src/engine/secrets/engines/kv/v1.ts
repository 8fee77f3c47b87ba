import { z } from 'zod';
import { folder, listKeys, V1_PREFIX } from './secret';
import { parseDuration } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { deepFreeze, SealedMemo } from '../../core/store';
import { SYSTEM_MAX_TTL } from '../../core/tokens';
import { EngineRoute, SecretsRequest } from '../../core/types';

/** Any JSON object; `ttl` (or the older `lease`), when given, must be a duration. */
const Body = z.record(z.string(), z.unknown()).superRefine((data, ctx) => {
  for (const field of ['ttl', 'lease']) {
    if (data[field] !== undefined && parseDuration(data[field]) === undefined) {
      ctx.addIssue({ code: 'custom', path: [field], message: `"${String(data[field])}" is not a duration: use integer seconds or a string such as "30m"` });
    }
  }
});

/**
 * Opened values by ciphertext (MountStore.getMemo) for reads, of KV v1 and cubbyhole mounts alike
 * (keys carry the mount's prefix and, in a cubbyhole, the token's folder): a read opens nothing while
 * the stored entry is unchanged. Only entries up to 16 KiB of ciphertext are kept, at most 16 MiB.
 */
const opened = new SealedMemo<Record<string, unknown>>(1024, 16 * 1024);

/**
 * One unversioned JSON object per path under a folder of the mount's store (`home`): KV version 1
 * and, with a folder per token, the cubbyhole. With `ttlHint`, a read's `lease_duration` is the
 * secret's own `ttl`, else the mount's default; no lease is registered (KV never revokes anything).
 */
export function plainRoutes(home: (req: SecretsRequest) => string, ttlHint: boolean): EngineRoute[] {
  const key = (req: SecretsRequest) => home(req) + req.params.path;
  return [
    { pattern: '', readOnly: true, list: (req) => listKeys(req.store, home(req)) },
    // Two entries for one path: reads and lists run in a read-only transaction, writes do not.
    {
      pattern: '*path',
      readOnly: true,
      read: async (req) => {
        const data = await req.store.getMemo<Record<string, unknown>>(key(req), opened, deepFreeze);
        if (!data) throw missing();
        if (!ttlHint) return { data };
        return { data, leaseDuration: parseDuration(data.ttl ?? data.lease) || req.mount.defaultLeaseTtl || SYSTEM_MAX_TTL };
      },
      list: (req) => listKeys(req.store, folder(home(req), req.params.path)),
    },
    {
      pattern: '*path',
      body: Body,
      exists: (req) => req.store.exists(key(req)),
      write: async (req) => {
        if (Object.keys(req.body).length === 0) throw badInput('no data provided: write a JSON object with at least one key');
        await req.store.put(key(req), req.body);
        return undefined;
      },
      delete: async (req) => {
        await req.store.delete(key(req));
        return undefined;
      },
    },
  ];
}

/** KV version 1: the `kv` engine without `version: 2`. */
export const v1Routes = plainRoutes(() => V1_PREFIX, true);
