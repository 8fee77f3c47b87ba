import { connectionRoutes } from './connections';
import { prepareRevokeCreds, renewCreds, revokeCreds, roleRoutes } from './roles';
import { staticRoleRoutes } from './static-roles';
import { EngineType } from '../../core/types';

/**
 * The database secrets engine (`database/` by default): connections to PostgreSQL and
 * MySQL/MariaDB, dynamic roles whose leased users are dropped on expiry or revocation, and static
 * roles whose passwords a background job rotates (see ../../jobs.ts).
 */
export const databaseEngine: EngineType = {
  type: 'database',
  kind: 'secret',
  description: 'dynamic and static database credentials',
  routes: [...connectionRoutes, ...roleRoutes, ...staticRoleRoutes],
  revoke: revokeCreds,
  prepareRevoke: prepareRevokeCreds,
  renew: renewCreds,
};
