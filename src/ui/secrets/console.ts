import type { ConsoleDef } from '../shared/console';
import { databaseMountPage, databaseMountsPage } from './pages/database';
import { databaseConnectionPage, databaseRolePage } from './pages/database-items';
import { homePage } from './pages/home';
import { kvMountsPage, kvPathPage } from './pages/kv';
import { leasesPage } from './pages/leases';
import { authMethodsPage, secretMountsPage } from './pages/mounts';
import { oidcCallbackPage } from './pages/oidc-callback';
import { pkiMountPage, pkiMountsPage } from './pages/pki';
import { pkiRolePage } from './pages/pki-role';
import { policiesPage, policyPage } from './pages/policies';
import { signInPage } from './pages/sign-in';
import { sshMountPage, sshMountsPage } from './pages/ssh';
import { sshRolePage } from './pages/ssh-role';
import { tokensPage } from './pages/tokens';
import { transitMountPage, transitMountsPage } from './pages/transit';
import { transitKeyPage } from './pages/transit-key';

/**
 * The secrets console at `/ui/` on the secrets listener: everything through the public HTTP API
 * with the signed-in token (X-Secrets-Token), so a page shows what the token's policies permit.
 */
export const secretsConsole: ConsoleDef = {
  service: 'secrets',
  title: 'Secrets',
  mount: '/ui/',
  tokenHeader: 'X-Secrets-Token',
  nav: [
    { label: 'Engines', path: '/mounts' },
    { label: 'Auth methods', path: '/auth-methods' },
    { label: 'Policies', path: '/policies' },
    { label: 'Tokens', path: '/tokens' },
    { label: 'Leases', path: '/leases' },
    { label: 'PKI', path: '/pki' },
    { label: 'Key/value', path: '/kv' },
    { label: 'Transit', path: '/transit' },
  ],
  signInPath: '/sign-in',
  pages: [
    homePage,
    signInPage,
    oidcCallbackPage,
    secretMountsPage,
    authMethodsPage,
    policiesPage,
    policyPage,
    tokensPage,
    leasesPage,
    pkiMountsPage,
    pkiMountPage,
    pkiRolePage,
    kvMountsPage,
    kvPathPage,
    transitMountsPage,
    transitMountPage,
    transitKeyPage,
    databaseMountsPage,
    databaseMountPage,
    databaseConnectionPage,
    databaseRolePage,
    sshMountsPage,
    sshMountPage,
    sshRolePage,
  ],
};
