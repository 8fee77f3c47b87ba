import { dataRoutes } from './data';
import { metadataRoutes } from './metadata';
import { allKeys, newSecret, V1_PREFIX, V2_PREFIX } from './secret';
import { v1Routes } from './v1';
import { badInput } from '../../core/request';
import { EngineType, MountEntry } from '../../core/types';

const v2Routes = [...dataRoutes, ...metadataRoutes];

const isV2 = (mount: MountEntry) => mount.options.version === '2';

/**
 * The key/value store, Vault's `kv`: version 1 (one object per path) or, with the mount option
 * `version: 2` (or the type `kv-v2`), versioned secrets under `data/` and `metadata/`. Tuning a
 * version 1 mount to version 2 upgrades it in place: each secret becomes its version 1.
 */
export const kvEngine: EngineType = {
  type: 'kv',
  kind: 'secret',
  description: 'key/value secret storage',
  routes: v1Routes,
  routesFor: (mount) => (isV2(mount) ? v2Routes : v1Routes),
  async retuned(ctx, before) {
    if (isV2(before) === isV2(ctx.mount)) return;
    if (isV2(before)) throw badInput('options.version: a KV version 2 mount cannot be downgraded to version 1');
    await ctx.tx(async (store) => {
      for (const key of await allKeys(store, V1_PREFIX)) {
        const data = await store.get<Record<string, unknown>>(key);
        const secret = newSecret(ctx.now);
        secret.current = 1;
        secret.versions['1'] = { created: ctx.now, deletion: 0, destroyed: false, data };
        await store.put(V2_PREFIX + key.slice(V1_PREFIX.length), secret);
        await store.delete(key);
      }
    });
  },
};
