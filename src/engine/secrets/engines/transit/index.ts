import { cacheRoutes } from './cache';
import { encryptionRoutes } from './encryption';
import { exportRoutes } from './export';
import { keyRoutes } from './keys';
import { signingRoutes } from './signing';
import { EngineType } from '../../core/types';

/**
 * Encryption as a service, Vault's `transit`: named keys with versions, sealed by the barrier;
 * encrypt, decrypt, rewrap, data keys, signatures and HMACs, all through node:crypto.
 */
export const transitEngine: EngineType = {
  type: 'transit',
  kind: 'secret',
  description: 'encryption as a service',
  routes: [...keyRoutes, ...encryptionRoutes, ...signingRoutes, ...exportRoutes, ...cacheRoutes],
};
