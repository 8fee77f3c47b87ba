import { LOCAL_ADMIN_HEADER } from '../engine';
import { RegistryActor, RegistryPermission } from './access';
import { registerLimits } from './limits';
import { ApiDefinition } from '../http/api';
import { forbidden, HangarError, unauthorized, ValidationError } from '../http/errors';
import { extractToken, REGISTRY_TOKEN_SOURCES } from '../http/tokens';
import { adminRoutes } from './routes/admin';
import { authenticateRoutes } from './routes/authenticate';
import { boxRoutes } from './routes/boxes';
import { downloadRoutes } from './routes/downloads';
import { operationsRoutes } from './routes/operations';
import { organizationRoutes } from './routes/organizations';
import { providerRoutes } from './routes/providers';
import { searchRoutes } from './routes/search';
import { userRoutes } from './routes/users';
import { v2Routes } from './routes/v2';
import { versionRoutes } from './routes/versions';
import { findTokenUser } from './tokens';

/** The box registry API (spec 000): `{errors, success: false}` errors, 422 for invalid input. */
export const registryApi: ApiDefinition<RegistryActor, RegistryPermission> = {
  name: 'registry',
  routes: [
    ...authenticateRoutes,
    ...boxRoutes,
    ...versionRoutes,
    ...providerRoutes,
    ...searchRoutes,
    ...userRoutes,
    ...organizationRoutes,
    ...adminRoutes,
    ...downloadRoutes,
    ...v2Routes,
    ...operationsRoutes,
  ],

  setup: registerLimits,

  async authenticate(req, db, engine) {
    if (req.headers[LOCAL_ADMIN_HEADER] === engine.localAdminSecret) return { kind: 'admin' };
    const token = extractToken(req, REGISTRY_TOKEN_SOURCES);
    if (!token) return undefined;
    if (await engine.rootToken.matchesToken(db, token)) return { kind: 'admin' };
    const found = await findTokenUser(db, token);
    return found && { kind: 'user', user: found.user, tokenId: found.tokenId };
  },

  authorize(permission, actor) {
    if (permission === 'public') return;
    if (!actor) throw unauthorized('Authentication required: send a valid token (Authorization: Bearer <token>)');
    if (permission === 'admin' && actor.kind !== 'admin') throw forbidden('This operation needs the root token');
  },

  renderError(error: HangarError) {
    const status = error instanceof ValidationError ? 422 : error.status;
    return {
      status,
      contentType: 'application/json; charset=utf-8',
      // Some errors carry more for the client: the 406 of a login lists the two-factor delivery methods.
      body: JSON.stringify({ errors: error.messages, success: false, ...(error as { extra?: object }).extra }),
    };
  },
};
