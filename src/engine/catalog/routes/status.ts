import type { Engine } from '../../engine';
import { Reply } from '../../http/routes';
import type { Db } from '../../storage';
import { catalogRoute } from '../route';
import { isAlive, listServers, SERVER_PORT } from '../servers';

/** The public service answers the leader as a JSON string (`"10.1.10.12:8300"`), not as text. */
const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

/**
 * The servers alive (this one always), as `address:8300`, the longest running first (this server alone until it
 * registered itself). Servers on one database share all state: the "leader" is the first.
 */
async function peers(engine: Engine): Promise<string[]> {
  const now = engine.clock.now();
  // Unauthenticated routes run outside a transaction: the servers are read in a short one.
  const servers = await engine.storage.tx((db: Db) => listServers(db), { readOnly: true });
  const alive = servers.filter((s) => s.name === engine.catalogNode.name || isAlive(s, now)).map((s) => `${s.address}:${SERVER_PORT}`);
  return alive.length > 0 ? [...new Set(alive)] : [`${engine.catalogNode.address}:${SERVER_PORT}`];
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
