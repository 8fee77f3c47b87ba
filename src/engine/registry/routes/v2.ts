import { validateTokenRoute } from './authenticate';
import { boxRoutesFor } from './boxes';
import { providerRoutesFor } from './providers';
import { searchRoutesFor } from './search';
import { userRoutesFor } from './users';
import { versionRoutesFor } from './versions';

/**
 * API v2 (the public registry's "Vagrant Cloud API (Version 2)"): the v1 tables' handlers under
 * /api/v2, with providers addressed by name and architecture
 * (/api/v2/box/:username/:name/version/:version/provider/:provider/:architecture[/upload[/direct]]).
 * Tokens are created and deleted through v1 only, as the public registry and its clients do.
 */
export const v2Routes = [
  { ...validateTokenRoute, path: '/api/v2/authenticate' },
  ...boxRoutesFor('v2'),
  ...versionRoutesFor('v2'),
  ...providerRoutesFor('v2'),
  ...searchRoutesFor('v2'),
  ...userRoutesFor('v2'),
];
