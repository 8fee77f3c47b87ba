import { z } from 'zod';
import { HangarError } from '../../http/errors';
import type { OpenedLease } from '../core/core';
import { duration, rfc3339, secondsLeft } from '../core/durations';
import { badInput } from '../core/request';
import { tokenLeaseId } from '../core/tokens';
import { EngineRoute, SecretsRequest, SecretsResponse } from '../core/types';

const LeaseBody = z.object({ lease_id: z.string().optional(), increment: duration().optional(), sync: z.unknown().optional() });
type LeaseBody = z.infer<typeof LeaseBody>;


/** The lease id from the body, else from the path (`sys/leases/renew/<id>`). */
function leaseId(req: SecretsRequest<LeaseBody>): string {
  const id = req.body.lease_id ?? req.params.id;
  if (!id) throw badInput('lease_id is required');
  return id;
}

async function lookup(req: SecretsRequest<LeaseBody>): Promise<SecretsResponse> {
  const id = leaseId(req);
  const lease = await req.core.leases.get(req.db, id);
  const token = lease ? undefined : await req.core.tokens.byLeaseId(req.db, id);
  const times = lease
    ? { issue: lease.issueTime, expire: lease.expireAt, renewal: lease.lastRenewalTime, renewable: lease.renewable }
    : token && { issue: token.creationTime, expire: token.expireAt, renewal: token.lastRenewalTime, renewable: token.renewable };
  if (!times) throw badInput('invalid lease');
  return {
    data: {
      id,
      issue_time: rfc3339(times.issue),
      expire_time: rfc3339(times.expire),
      last_renewal: times.renewal ? rfc3339(times.renewal) : null,
      renewable: times.renewable,
      ttl: secondsLeft(times.expire, req.now),
    },
  };
}

async function renew(req: SecretsRequest<LeaseBody>): Promise<SecretsResponse> {
  const id = leaseId(req);
  const lease = await req.core.leases.get(req.db, id);
  if (!lease && (await req.core.tokens.byLeaseId(req.db, id))) throw badInput('tokens cannot be renewed through this endpoint: use auth/token/renew');
  if (!lease || lease.expireAt <= req.now) throw badInput('lease not found or lease is not renewable');
  const mount = await req.core.mounts.get(req.db, lease.mountPath);
  const type = mount && req.core.engineType(mount.kind, mount.type);
  try {
    if (mount && type?.renew) await type.renew(lease, req.core.contextIn(req.db, mount, req.now));
    const ttl = await req.core.leases.renew(req.db, lease, req.body.increment ?? 0, req.now);
    return { renewed: { id, ttl, renewable: lease.renewable } };
  } catch (err) {
    if (err instanceof HangarError) throw err;
    throw badInput((err as Error).message);
  }
}

async function revoke(req: SecretsRequest<LeaseBody>): Promise<SecretsResponse | undefined> {
  const id = leaseId(req);
  const lease = await req.core.leases.get(req.db, id);
  if (!lease) {
    // A token's lease id revokes the token (and its children, and their leases), as in Vault.
    const token = await req.core.tokens.byLeaseId(req.db, id);
    return token ? revokeAfterCommit(req, await req.core.revokeToken(req.db, token.idHash, req.now)) : undefined;
  }
  await req.core.leases.markRevoking(req.db, [id], req.now);
  // Read and opened here already: the revocation after the commit needs no transaction to find it again.
  const mount = await req.core.mounts.get(req.db, lease.mountPath);
  const type = mount && req.core.engineType(mount.kind, mount.type);
  const prepared = mount && type?.prepareRevoke ? await type.prepareRevoke(lease, req.core.contextIn(req.db, mount, req.now)) : undefined;
  return revokeAfterCommit(req, [id], new Map([[id, { lease, mount, prepared }]]));
}

/** Runs the engines' revocations once the marks are committed; failures stay marked for the job. */
function revokeAfterCommit(req: SecretsRequest, ids: string[], opened?: ReadonlyMap<string, OpenedLease>): undefined {
  req.afterCommit(async () => {
    const failures = await req.core.revokeLeases(ids, opened);
    if (failures.length) {
      throw new HangarError(400, [
        `failed to revoke ${failures.length} lease(s); they stay marked and are retried in the background: ${failures.map((f) => `${f.id}: ${f.error}`).join('; ')}`,
      ]);
    }
  });
  return undefined;
}

/** Vault's prefix: a lease id itself, else a path whose leases (and tokens) sit below it. */
async function normalizedPrefix(req: SecretsRequest, raw: string): Promise<string> {
  const trimmed = raw.replace(/\/+$/, '');
  if ((await req.core.leases.get(req.db, trimmed)) || (await req.core.tokens.byLeaseId(req.db, trimmed))) return trimmed;
  return `${trimmed}/`;
}

/** Revokes the leases and the tokens under a prefix (`auth/jwt/` revokes what logins there issued). */
async function revokePrefix(req: SecretsRequest, force = false): Promise<undefined> {
  const prefix = await normalizedPrefix(req, req.params.prefix);
  const ids = await req.core.leases.idsWithPrefix(req.db, prefix);
  const fromTokens = await req.core.revokeTokensUnder(req.db, prefix, req.now);
  if (force) {
    // revoke-force: the engines are not asked; the rows go.
    for (const id of [...ids, ...fromTokens]) await req.core.leases.delete(req.db, id);
    return undefined;
  }
  await req.core.leases.markRevoking(req.db, ids, req.now);
  return revokeAfterCommit(req, [...ids, ...fromTokens]);
}

/** The next level of lease ids under a prefix, tokens' included (`sys/leases/lookup/auth/jwt/login/`). */
async function listPrefix(req: SecretsRequest): Promise<SecretsResponse> {
  const prefix = `${(req.params.prefix ?? '').replace(/\/+$/, '')}/`;
  const under = prefix === '/' ? '' : prefix;
  const ids = await req.core.leases.idsWithPrefix(req.db, under);
  for (const t of await req.core.tokens.withLeasePrefix(req.db, under)) {
    const id = tokenLeaseId(t);
    if (id && t.expireAt > req.now) ids.push(id);
  }
  const keys = new Set<string>();
  for (const id of ids.sort()) {
    const rest = id.slice(under.length);
    const slash = rest.indexOf('/');
    keys.add(slash < 0 ? rest : rest.slice(0, slash + 1));
  }
  if (keys.size === 0) throw new HangarError(404, []);
  return { data: { keys: [...keys] } };
}

const renewRoute = (pattern: string): EngineRoute => ({ pattern, body: LeaseBody, write: renew });
const revokeRoute = (pattern: string): EngineRoute => ({ pattern, body: LeaseBody, write: revoke });

/** `sys/leases/*`, and the older `sys/renew`, `sys/revoke`, `sys/revoke-prefix` that clients still call. */
export const leaseSystemRoutes: EngineRoute[] = [
  { pattern: 'leases/lookup', body: LeaseBody, readOnly: true, write: lookup, list: listPrefix },
  { pattern: 'leases/lookup/*prefix', sudo: true, readOnly: true, list: listPrefix },
  renewRoute('leases/renew'),
  renewRoute('leases/renew/*id'),
  renewRoute('renew'),
  renewRoute('renew/*id'),
  revokeRoute('leases/revoke'),
  revokeRoute('leases/revoke/*id'),
  revokeRoute('revoke'),
  revokeRoute('revoke/*id'),
  { pattern: 'leases/revoke-prefix/*prefix', sudo: true, write: (req) => revokePrefix(req) },
  { pattern: 'revoke-prefix/*prefix', sudo: true, write: (req) => revokePrefix(req) },
  { pattern: 'leases/revoke-force/*prefix', sudo: true, write: (req) => revokePrefix(req, true) },
  { pattern: 'revoke-force/*prefix', sudo: true, write: (req) => revokePrefix(req, true) },
];
