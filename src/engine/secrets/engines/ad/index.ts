import { configRoutes, requireConfig } from './config';
import type { AdConfig } from './config';
import { roleRoutes } from './roles';
import { badInput } from '../../core/request';
import { EngineType } from '../../core/types';
import { library } from '../directory/library';
import { AD_ROLES, NAME } from '../directory/names';
import { rotateRootRoutes } from '../directory/rotate-root';
import { generatePassword } from '../directory/rotation';
import type { DirectoryProfile } from '../directory/settings';

/** The `ad` engine's side of the shared directory code: its config, generator and one-segment names. */
const profile: DirectoryProfile<AdConfig> = {
  requireConfig,
  newPassword: async (_ctx, config) => generatePassword(config),
  roles: AD_ROLES,
  setName: (name) => {
    if (!NAME.test(name) || name === 'manage') throw badInput(`library set name "${name}" is invalid: use letters, digits, ".", "_", "-", "@" (at most 128; not "manage")`);
    return name.toLowerCase();
  },
  hierarchical: false,
};

const sets = library(profile);

/** Directory accounts (`ad/` by default): rotated service-account passwords and a check-out library. */
export const adEngine: EngineType = {
  type: 'ad',
  kind: 'secret',
  description: 'directory service account passwords and check-out',
  routes: [...configRoutes, ...roleRoutes, ...sets.routes, ...rotateRootRoutes(profile, ['read', 'update'])],
  revoke: sets.revoke,
  renew: sets.renew,
};
