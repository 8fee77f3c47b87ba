import { EngineType, MountEntry } from '../core/types';
import { identityEngine } from '../identity';
import { systemEngine } from '../system';
import { jwtEngine } from './jwt';
import { tokenEngine } from './token/routes';

/**
 * Secrets engines of the spec that later work fills in. Until then each is a known type without
 * routes, so that `--dev` mounts the spec's default paths and `sys/mounts` lists them.
 * An engine replaces its placeholder here by its own EngineType (routes plus revoke hook).
 */
const PLANNED: ReadonlyArray<[string, string]> = [
  ['transform', 'format-preserving encryption, masking and tokenization'],
  ['ssh', 'one-time passwords and SSH certificates'],
  ['database', 'dynamic and static database credentials'],
  ['ad', 'directory service account passwords and check-out'],
  ['pki', 'certificate authority'],
  ['rabbitmq', 'dynamic message broker credentials'],
];

const planned: EngineType[] = PLANNED.map(([type, description]) => ({ type, kind: 'secret', description, routes: [] }));

/** Every engine type the secrets service knows. */
export const ENGINE_TYPES: readonly EngineType[] = [
  systemEngine,
  tokenEngine,
  identityEngine,
  jwtEngine,
  // `oidc` is the same login method under the name the public service also accepts.
  { ...jwtEngine, type: 'oidc' },
  ...planned,
];

/** The spec's default mounts, created in dev mode. */
export const DEFAULT_MOUNTS: ReadonlyArray<Pick<MountEntry, 'path' | 'kind' | 'type'>> = [
  { path: 'auth/jwt/', kind: 'auth', type: 'jwt' },
  ...PLANNED.map(([type]) => ({ path: `${type}/`, kind: 'secret' as const, type })),
];
