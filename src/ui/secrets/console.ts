import type { ConsoleDef } from '../shared/console';
import { adMountPage, adMountsPage } from './pages/ad';
import { adLibraryPage, adRolePage } from './pages/ad-items';
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
import { rabbitmqMountPage, rabbitmqMountsPage } from './pages/rabbitmq';
import { rabbitmqRolePage } from './pages/rabbitmq-role';
import { signInPage } from './pages/sign-in';
import { sshMountPage, sshMountsPage } from './pages/ssh';
import { sshRolePage } from './pages/ssh-role';
import { tokensPage } from './pages/tokens';
import { transformMountPage, transformMountsPage } from './pages/transform';
import { transformRolePage } from './pages/transform-role';
import { transformTransformationPage } from './pages/transform-transformation';
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
    {
      label: 'Engines',
      path: '/mounts',
      children: [
        { label: 'All engines', path: '/mounts' },
        { label: 'PKI', path: '/pki' },
        { label: 'Key/value', path: '/kv' },
        { label: 'Transit', path: '/transit' },
        { label: 'Databases', path: '/database' },
        { label: 'SSH', path: '/ssh' },
        { label: 'Transform', path: '/transform' },
        { label: 'Directory accounts', path: '/ad' },
        { label: 'RabbitMQ', path: '/rabbitmq' },
      ],
    },
    { label: 'Auth methods', path: '/auth-methods' },
    { label: 'Policies', path: '/policies' },
    { label: 'Tokens', path: '/tokens' },
    { label: 'Leases', path: '/leases' },
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
    transformMountsPage,
    transformMountPage,
    transformRolePage,
    transformTransformationPage,
    adMountsPage,
    adMountPage,
    adRolePage,
    adLibraryPage,
    rabbitmqMountsPage,
    rabbitmqMountPage,
    rabbitmqRolePage,
  ],
};
