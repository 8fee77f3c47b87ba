import { sha256Hex } from '../crypto';
import { ApiDefinition } from '../http/api';
import { forbidden, HangarError, ValidationError } from '../http/errors';
import { rootActor } from '../http/root-actor';
import { route } from '../http/routes';
import { CATALOG_TOKEN_SOURCES } from '../http/tokens';

type CatalogActor = { kind: 'root'; token?: string };
type CatalogPermission = 'public' | 'management';
const catalogRoute = route<CatalogActor, CatalogPermission>();

/** A stable UUID-shaped id derived from a value (the root token's accessor). */
function uuidOf(value: string): string {
  const h = sha256Hex(value);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/**
 * The catalog API (spec 002). The foundation serves the leader status and the management token's
 * self-read; ACLs, namespaces, sessions and KV plug in here.
 */
export const catalogApi: ApiDefinition<CatalogActor, CatalogPermission> = {
  name: 'catalog',
  routes: [
    catalogRoute({
      method: 'GET',
      path: '/v1/status/leader',
      permission: 'public',
      transaction: 'read',
      handler: async () => '127.0.0.1:8300',
    }),
    catalogRoute({
      method: 'GET',
      path: '/v1/acl/token/self',
      permission: 'management',
      transaction: 'read',
      handler: async (_input, ctx) => ({
        AccessorID: uuidOf(`accessor:${ctx.actor?.token ?? 'local'}`),
        SecretID: ctx.actor?.token ?? '',
        Description: 'Initial Management Token',
        Policies: [{ ID: '00000000-0000-0000-0000-000000000001', Name: 'global-management' }],
        Local: false,
        CreateIndex: 1,
        ModifyIndex: 1,
      }),
    }),
  ],
  authenticate: (req, db, engine) => rootActor(req, db, engine, CATALOG_TOKEN_SOURCES),
  authorize(permission, actor) {
    if (permission === 'management' && !actor) throw forbidden('ACL not found');
  },
  renderError(error: HangarError) {
    return {
      status: error instanceof ValidationError ? 400 : error.status,
      contentType: 'text/plain; charset=utf-8',
      body: error.messages.join('\n'),
    };
  },
};
