import { auditSystemRoutes } from './audit';
import { internalUiSystemRoutes } from './internal-ui';
import { leaseSystemRoutes } from './leases';
import { mountSystemRoutes } from './mounts';
import { observabilitySystemRoutes } from './observability';
import { operatorSystemRoutes } from './operator';
import { passwordPolicySystemRoutes } from './password-policies';
import { pluginSystemRoutes } from './plugins';
import { policySystemRoutes } from './policies';
import { remountSystemRoutes } from './remount';
import { statusSystemRoutes } from './status';
import { wrappingSystemRoutes } from './wrapping';
import { EngineType } from '../core/types';

/** `sys/`: mounts, auth methods, policies, leases, capabilities, health, the keyring, response wrapping, audit devices, plugin reloads, metrics, OpenAPI. */
export const systemEngine: EngineType = {
  type: 'system',
  kind: 'secret',
  description: 'system endpoints used for control, policy and debugging',
  routes: [
    ...statusSystemRoutes,
    ...mountSystemRoutes,
    ...internalUiSystemRoutes,
    ...remountSystemRoutes,
    ...operatorSystemRoutes,
    ...policySystemRoutes,
    ...leaseSystemRoutes,
    ...passwordPolicySystemRoutes,
    ...pluginSystemRoutes,
    ...wrappingSystemRoutes,
    ...auditSystemRoutes,
    ...observabilitySystemRoutes,
  ],
};
