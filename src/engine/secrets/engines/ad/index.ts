import { configRoutes } from './config';
import { libraryRoutes, renewCheckout, revokeCheckout } from './library';
import { roleRoutes } from './roles';
import { rotateRootRoutes } from './rotate-root';
import { EngineType } from '../../core/types';

/** Directory accounts (`ad/` by default): rotated service-account passwords and a check-out library. */
export const adEngine: EngineType = {
  type: 'ad',
  kind: 'secret',
  description: 'directory service account passwords and check-out',
  routes: [...configRoutes, ...roleRoutes, ...libraryRoutes, ...rotateRootRoutes],
  revoke: revokeCheckout,
  renew: renewCheckout,
};
