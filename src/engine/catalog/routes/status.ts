import { Reply } from '../../http/routes';
import { catalogRoute } from '../route';

/**
 * The leader and peers of the one-node "cluster" a Hangar server is to clients. The public service
 * checks no ACL here: any token, even an unknown one, gets the answer, and so the token is not looked up.
 */
const ADDRESS = '127.0.0.1:8300';

/** The public service answers the leader as a JSON string (`"10.1.10.12:8300"`), not as text. */
const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

export const statusRoutes = [
  catalogRoute({
    method: 'GET',
    path: '/v1/status/leader',
    permission: 'public',
    authenticate: false,
    handler: async () => new Reply(200, JSON.stringify(ADDRESS), JSON_TYPE),
  }),
  catalogRoute({ method: 'GET', path: '/v1/status/peers', permission: 'public', authenticate: false, handler: async () => [ADDRESS] }),
];
