import { caRoutes } from './ca';
import { configRoutes } from './config';
import { fetchRoutes } from './fetch';
import { issueRoutes } from './issue';
import { revokeLease, revokeRoutes } from './revoke';
import { roleRoutes } from './roles';
import { EngineType } from '../../core/types';

/** The PKI secrets engine (`pki/` by default): a certificate authority with roles, issuing, revocation and CRLs. */
export const pkiEngine: EngineType = {
  type: 'pki',
  kind: 'secret',
  description: 'certificate authority',
  routes: [...caRoutes, ...roleRoutes, ...issueRoutes, ...fetchRoutes, ...revokeRoutes, ...configRoutes],
  revoke: revokeLease,
};
