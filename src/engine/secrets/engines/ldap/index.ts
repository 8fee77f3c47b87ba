import { configRoutes, LdapConfig, newPassword, requireConfig } from './config';
import { dynamicRoleRoutes, isDynamicLease, renewDynamic, revokeDynamic } from './dynamic-roles';
import { ldapName } from './names';
import { STATIC_ROLES, staticRoleRoutes } from './static-roles';
import { EngineType } from '../../core/types';
import { library } from '../directory/library';
import { rotateRootRoutes } from '../directory/rotate-root';
import type { DirectoryProfile } from '../directory/settings';

/** The `ldap` engine's side of the shared directory code: hierarchical, lowercased names. */
const profile: DirectoryProfile<LdapConfig> = {
  requireConfig,
  newPassword,
  roles: STATIC_ROLES,
  setName: (name) => ldapName('library set', name),
  hierarchical: true,
};

const sets = library(profile);

/**
 * The public service's current directory engine (`ldap`, also registered as `openldap`): static
 * roles rotated on a schedule, dynamic roles that create and delete entries from LDIF templates,
 * and library sets, over the same directory, rotation and library code as the `ad` engine.
 */
export const ldapEngine: EngineType = {
  type: 'ldap',
  kind: 'secret',
  description: 'LDAP static, dynamic and library credentials',
  routes: [...configRoutes, ...rotateRootRoutes(profile, ['update']), ...staticRoleRoutes, ...dynamicRoleRoutes, ...sets.routes],
  revoke: (lease, ctx) => (isDynamicLease(lease) ? revokeDynamic(lease, ctx) : sets.revoke(lease, ctx)),
  renew: (lease, ctx) => (isDynamicLease(lease) ? renewDynamic(lease, ctx) : sets.renew(lease, ctx)),
};
