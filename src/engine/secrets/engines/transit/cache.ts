import { z } from 'zod';
import { flexibleInt } from '../../core/durations';
import { badInput } from '../../core/request';
import { EngineRoute, SecretsRequest } from '../../core/types';

/** Vault's smallest cache of keys (`minCacheSize`); 0 means unlimited. */
const MIN_SIZE = 10;
const ENTRY = 'config/cache';

const CacheBody = z.object({ size: flexibleInt.optional() });

/**
 * `cache-config`: the size of the mount's cache of opened keys, as Vault stores and shows it. Hangar's
 * cache of opened keys is shared by the process and bounded on its own, so the size is kept for the
 * tools that manage it (Terraform's `vault_transit_secret_cache_config`) and changes nothing else.
 */
export const cacheRoutes: EngineRoute[] = [
  {
    pattern: 'cache-config',
    readOnly: true,
    read: async (req) => ({ data: { size: (await req.store.get<{ size: number }>(ENTRY))?.size ?? 0 } }),
  },
  {
    pattern: 'cache-config',
    body: CacheBody,
    write: async (req: SecretsRequest<z.infer<typeof CacheBody>>) => {
      const size = req.body.size ?? 0;
      if (size !== 0 && size < MIN_SIZE) throw badInput(`size: must be 0 or a value greater or equal to ${MIN_SIZE}`);
      await req.store.put(ENTRY, { size });
      return { data: { size } };
    },
  },
];
