import { mountInfo } from './mounts';
import { HangarError } from '../../http/errors';
import type { Acl } from '../core/policies';
import { permissionDenied } from '../core/request';
import { EngineRoute, MountEntry, SecretsRequest, SecretsResponse } from '../core/types';

/** A mount's key in Vault's answers: auth mounts without their `auth/`. */
const shownPath = (m: MountEntry) => (m.kind === 'auth' ? m.path.slice('auth/'.length) : m.path);

async function aclOf(req: SecretsRequest): Promise<Acl | undefined> {
  return req.caller && req.core.acl(req.db, req.caller.entry, req.caller.root);
}

/**
 * `sys/internal/ui/mounts`: the mounts a caller may use (any capability on or under them), in full
 * with a token; without one, only those tuned `listing_visibility: unauth`, in short.
 */
async function listMounts(req: SecretsRequest): Promise<SecretsResponse> {
  const acl = await aclOf(req);
  const secret: Record<string, unknown> = {};
  const auth: Record<string, unknown> = {};
  for (const m of await req.core.mounts.all(req.db)) {
    if (m.tune?.listing_visibility !== 'unauth' && !acl?.hasMountAccess(m.path)) continue;
    const info = acl ? mountInfo(m, true) : { type: m.type, description: m.description, options: Object.keys(m.options).length ? m.options : null };
    (m.kind === 'auth' ? auth : secret)[shownPath(m)] = info;
  }
  return { data: { secret, auth } };
}

/**
 * `sys/internal/ui/mounts/<path>`: the mount serving a path, for a token with some capability on
 * or under it (the `vault kv` CLI and the Terraform provider learn a KV mount's version here).
 * Anything else is a 403, a missing mount included, so the path cannot probe for mounts.
 */
async function readMount(req: SecretsRequest): Promise<SecretsResponse> {
  const acl = await aclOf(req);
  if (!acl) throw permissionDenied();
  const path = `${req.params.path.replace(/^[/\\]+/, '').replace(/\/+$/, '')}/`;
  const m = await req.core.mounts.resolve(req.db, path);
  if (!m || !acl.hasMountAccess(m.path)) {
    throw new HangarError(403, [`preflight capability check returned 403, please ensure client's policies grant access to path "${path}"`]);
  }
  return { data: { ...mountInfo(m, true), path: shownPath(m) } };
}

/** What Vault's UI and CLI read about mounts without needing `sys/mounts`. */
export const internalUiSystemRoutes: EngineRoute[] = [
  { pattern: 'internal/ui/mounts', unauthenticated: true, optionalToken: true, readOnly: true, read: listMounts },
  { pattern: 'internal/ui/mounts/*path', unauthenticated: true, optionalToken: true, readOnly: true, read: readMount },
];
