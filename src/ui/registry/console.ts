import type { ConsoleDef } from '../shared/console';
import { boxPage } from './pages/box';
import { newBoxPage } from './pages/new-box';
import { ownerPage } from './pages/owner';
import { searchPage } from './pages/search';
import { signInPage } from './pages/sign-in';

/**
 * The box catalog at `/` on the registry listener. Its own pages sit under `/-/` (no owner name
 * starts with "-"); `/:username/boxes/:name` is the public registry's box page address and
 * leaves the API's `/:username/:name` (box metadata) and download paths alone.
 */
export const registryConsole: ConsoleDef = {
  service: 'registry',
  title: 'Box catalog',
  mount: '/',
  tokenHeader: 'Authorization',
  nav: [
    { label: 'Search', path: '/' },
    { label: 'New box', path: '/-/new' },
  ],
  signInPath: '/-/sign-in',
  pages: [searchPage, signInPage, newBoxPage, ownerPage, boxPage],
  // A token the password sign-in created goes with the sign-out; a token the user brought stays.
  signOut: async (api, session) => {
    if (session.created) await api.delete('/api/v1/authenticate');
  },
};
