import { leaseSystemRoutes } from './leases';
import { mountSystemRoutes } from './mounts';
import { passwordPolicySystemRoutes } from './password-policies';
import { policySystemRoutes } from './policies';
import { statusSystemRoutes } from './status';
import { EngineType } from '../core/types';

/** `sys/`: mounts, auth methods, policies, leases, capabilities, health, the keyring. */
export const systemEngine: EngineType = {
  type: 'system',
  kind: 'secret',
  description: 'system endpoints used for control, policy and debugging',
  routes: [...statusSystemRoutes, ...mountSystemRoutes, ...policySystemRoutes, ...leaseSystemRoutes, ...passwordPolicySystemRoutes],
};
