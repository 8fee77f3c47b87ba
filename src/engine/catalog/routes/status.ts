import type { Engine } from '../../engine';
import { Reply } from '../../http/routes';
import type { Db } from '../../storage';
import { catalogRoute } from '../route';
import { alivePeers } from '../servers';

/** The public service answers the leader as a JSON string (`"10.1.10.12:8300"`), not as text. */
const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

/** The servers alive (servers.ts); unauthenticated routes run outside a transaction: the servers are read in a short one. */
function peers(engine: Engine): Promise<string[]> {
  return engine.storage.tx((db: Db) => alivePeers(engine, db), { readOnly: true });
}

/** The public service checks no ACL here: any token, even an unknown one, gets the answer, and so the token is not looked up. */
export const statusRoutes = [
  catalogRoute({
    method: 'GET',
    path: '/v1/status/leader',
    permission: 'public',
    authenticate: false,
    handler: async (_input, ctx) => new Reply(200, JSON.stringify((await peers(ctx.engine))[0]), JSON_TYPE),
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/status/peers',
    permission: 'public',
    authenticate: false,
    handler: async (_input, ctx) => peers(ctx.engine),
  }),
];
