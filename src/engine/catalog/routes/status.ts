import { catalogRoute } from '../route';

/** The leader and peers of the one-node "cluster" a Hangar server is to clients. */
const ADDRESS = '127.0.0.1:8300';

export const statusRoutes = [
  catalogRoute({ method: 'GET', path: '/v1/status/leader', permission: 'public', transaction: 'read', handler: async () => ADDRESS }),
  catalogRoute({ method: 'GET', path: '/v1/status/peers', permission: 'public', transaction: 'read', handler: async () => [ADDRESS] }),
];
