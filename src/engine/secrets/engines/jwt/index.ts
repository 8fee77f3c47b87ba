import { configRoutes } from './config';
import { loginRoutes } from './login';
import { oidcRoutes } from './oidc';
import { roleRoutes } from './roles';
import { EngineType } from '../../core/types';

/** The token/OIDC login method (`auth/jwt` by default): config, roles, JWT login, OIDC flow. */
export const jwtEngine: EngineType = {
  type: 'jwt',
  kind: 'auth',
  description: 'JWT and OIDC login',
  routes: [...configRoutes, ...roleRoutes, ...loginRoutes, ...oidcRoutes],
};
