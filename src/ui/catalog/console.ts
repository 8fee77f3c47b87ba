import type { ConsoleDef } from '../shared/console';
import { aclIndexPage, aclPages } from './pages/acl';
import { ACL_KINDS, tokenKind } from './pages/acl-kinds';
import { kvPage, kvRootPage } from './pages/kv';
import { namespacesPage } from './pages/namespaces';
import { homePage, nodePage, nodesPage } from './pages/nodes';
import { servicePage, servicesPage } from './pages/services';
import { sessionPage, sessionsPage } from './pages/sessions';
import { signInPage } from './pages/sign-in';

/**
 * The catalog console at `/ui/` on the catalog listener: nodes, services, sessions, the key/value
 * store, ACLs and namespaces, all through the catalog API with the signed-in token (X-Catalog-Token),
 * followed live with blocking queries.
 */
export const catalogConsole: ConsoleDef = {
  service: 'catalog',
  title: 'Catalog',
  mount: '/ui/',
  tokenHeader: 'X-Catalog-Token',
  nav: [
    { label: 'Nodes', path: '/' },
    { label: 'Services', path: '/services' },
    { label: 'Key/Value', path: '/kv' },
    { label: 'Sessions', path: '/sessions' },
    { label: 'ACL', path: '/acl' },
    { label: 'Namespaces', path: '/namespaces' },
  ],
  signInPath: '/sign-in',
  pages: [
    homePage,
    nodesPage,
    nodePage,
    servicesPage,
    servicePage,
    kvRootPage,
    kvPage,
    sessionsPage,
    sessionPage,
    aclIndexPage(tokenKind),
    ...aclPages(ACL_KINDS),
    namespacesPage,
    signInPage,
  ],
};
