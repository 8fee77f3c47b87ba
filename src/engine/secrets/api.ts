import { randomUUID } from 'node:crypto';
import { sha256Hex } from '../crypto';
import { ApiDefinition } from '../http/api';
import { forbidden, HangarError, ValidationError } from '../http/errors';
import { rootActor } from '../http/root-actor';
import { route } from '../http/routes';
import { SECRETS_TOKEN_SOURCES } from '../http/tokens';
import { VERSION } from '../version';

type SecretsActor = { kind: 'root'; token?: string };
type SecretsPermission = 'public' | 'root';
const secretsRoute = route<SecretsActor, SecretsPermission>();

/** The response envelope of the secrets API. */
function envelope(data: unknown) {
  return { request_id: randomUUID(), lease_id: '', renewable: false, lease_duration: 0, data, wrap_info: null, warnings: null, auth: null };
}

/**
 * The secrets API (spec 001). The foundation serves health and the root token's self-lookup;
 * tokens, policies, mounts and engines plug in here.
 */
export const secretsApi: ApiDefinition<SecretsActor, SecretsPermission> = {
  name: 'secrets',
  routes: [
    secretsRoute({
      method: ['GET', 'HEAD'],
      path: '/v1/sys/health',
      permission: 'public',
      transaction: 'read',
      handler: async (_input, ctx) => ({
        initialized: true,
        sealed: false,
        standby: false,
        performance_standby: false,
        replication_performance_mode: 'disabled',
        replication_dr_mode: 'disabled',
        server_time_utc: Math.floor(ctx.now / 1000),
        version: VERSION,
        cluster_name: 'hangar',
      }),
    }),
    secretsRoute({
      method: 'GET',
      path: '/v1/auth/token/lookup-self',
      permission: 'root',
      transaction: 'read',
      handler: async (_input, ctx) =>
        envelope({
          accessor: ctx.actor?.token ? sha256Hex(`accessor:${ctx.actor.token}`).slice(0, 24) : '',
          display_name: 'root',
          policies: ['root'],
          ttl: 0,
          renewable: false,
          type: 'service',
          orphan: true,
          id: ctx.actor?.token ?? '',
        }),
    }),
  ],
  authenticate: (req, db, engine) => rootActor(req, db, engine, SECRETS_TOKEN_SOURCES),
  authorize(permission, actor) {
    if (permission === 'root' && !actor) throw forbidden('permission denied');
  },
  renderError(error: HangarError) {
    return {
      status: error instanceof ValidationError ? 400 : error.status,
      contentType: 'application/json; charset=utf-8',
      body: JSON.stringify({ errors: error.messages }),
    };
  },
};
