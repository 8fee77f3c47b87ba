import { caRoutes } from './ca';
import { configRoutes } from './config';
import { fetchRoutes } from './fetch';
import { issuerIssueRoutes, issueRoutes } from './issue';
import { issuerRoutes } from './issuer-routes';
import { revokeLease, revokeRoutes } from './revoke';
import { roleRoutes } from './roles';
import { EngineType } from '../../core/types';

/** The PKI secrets engine (`pki/` by default): a certificate authority with roles, issuing, revocation and CRLs. */
export const pkiEngine: EngineType = {
  type: 'pki',
  kind: 'secret',
  description: 'certificate authority',
  routes: [...caRoutes, ...issuerRoutes, ...roleRoutes, ...issueRoutes, ...issuerIssueRoutes, ...fetchRoutes, ...revokeRoutes, ...configRoutes],
  revoke: revokeLease,
};
