import { EngineType, MountEntry } from '../core/types';
import { identityEngine } from '../identity';
import { systemEngine } from '../system';
import { adEngine } from './ad';
import { cubbyholeEngine } from './cubbyhole';
import { databaseEngine } from './database';
import { jwtEngine } from './jwt';
import { kvEngine } from './kv';
import { ldapEngine } from './ldap';
import { pkiEngine } from './pki';
import { rabbitmqEngine } from './rabbitmq';
import { sshEngine } from './ssh';
import { tokenEngine } from './token/routes';
import { transformEngine } from './transform';
import { transitEngine } from './transit';

/**
 * Secrets engines of the spec that later work fills in. Until then each is a known type without
 * routes, so that `--dev` mounts the spec's default paths and `sys/mounts` lists them.
 * An engine replaces its placeholder here by its own EngineType (routes plus revoke hook).
 */
const PLANNED: ReadonlyArray<[string, string] | EngineType> = [
  transformEngine,
  sshEngine,
  databaseEngine,
  adEngine,
  pkiEngine,
  rabbitmqEngine,
];

const planned: EngineType[] = PLANNED.map((p) => (Array.isArray(p) ? { type: p[0], kind: 'secret', description: p[1], routes: [] } : p));

/** Every engine type the secrets service knows. */
export const ENGINE_TYPES: readonly EngineType[] = [
  systemEngine,
  tokenEngine,
  identityEngine,
  jwtEngine,
  // `oidc` is the same login method under the name the public service also accepts.
  { ...jwtEngine, type: 'oidc' },
  // Engines beyond the spec that Vault clients expect (issue 22); mounted on demand.
  kvEngine,
  cubbyholeEngine,
  transitEngine,
  ldapEngine,
  // The public service registers its directory engine under both names.
  { ...ldapEngine, type: 'openldap' },
  ...planned,
];

/** The spec's default mounts, created in dev mode, and the public dev server's `secret/` (KV version 2). */
export const DEFAULT_MOUNTS: ReadonlyArray<Pick<MountEntry, 'path' | 'kind' | 'type'> & Partial<MountEntry>> = [
  { path: 'auth/jwt/', kind: 'auth', type: 'jwt' },
  ...planned.map(({ type }) => ({ path: `${type}/`, kind: 'secret' as const, type })),
  { path: 'secret/', kind: 'secret', type: 'kv', options: { version: '2' }, description: 'key/value secret storage' },
];
