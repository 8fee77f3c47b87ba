import { z } from 'zod';
import { HangarError } from '../../http/errors';
import { duration, rfc3339 } from '../core/durations';
import { badInput } from '../core/request';
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
  const lease = await req.core.leases.get(req.db, leaseId(req));
  if (!lease) throw badInput('invalid lease');
  return {
    data: {
      id: lease.id,
      issue_time: rfc3339(lease.issueTime),
      expire_time: rfc3339(lease.expireAt),
      last_renewal: lease.lastRenewalTime ? rfc3339(lease.lastRenewalTime) : null,
      renewable: lease.renewable,
      ttl: Math.max(0, Math.round((lease.expireAt - req.now) / 1000)),
    },
  };
}

async function renew(req: SecretsRequest<LeaseBody>): Promise<SecretsResponse> {
  const id = leaseId(req);
  const lease = await req.core.leases.get(req.db, id);
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
  if (!lease) return undefined;
  await req.core.leases.markRevoking(req.db, [id], req.now);
  return revokeAfterCommit(req, [id]);
}

/** Runs the engines' revocations once the marks are committed; failures stay marked for the job. */
function revokeAfterCommit(req: SecretsRequest, ids: string[]): undefined {
  req.afterCommit(async () => {
    const failures = await req.core.revokeLeases(ids);
    if (failures.length) {
      throw new HangarError(400, [
        `failed to revoke ${failures.length} lease(s); they stay marked and are retried in the background: ${failures.map((f) => `${f.id}: ${f.error}`).join('; ')}`,
      ]);
    }
  });
  return undefined;
}

async function revokePrefix(req: SecretsRequest, force = false): Promise<undefined> {
  const prefix = req.params.prefix;
  const ids = await req.core.leases.idsWithPrefix(req.db, prefix);
  if (force) {
    for (const id of ids) await req.core.leases.delete(req.db, id);
    return undefined;
  }
  await req.core.leases.markRevoking(req.db, ids, req.now);
  return revokeAfterCommit(req, ids);
}

async function listPrefix(req: SecretsRequest): Promise<SecretsResponse> {
  const prefix = `${(req.params.prefix ?? '').replace(/\/+$/, '')}/`;
  const ids = await req.core.leases.idsWithPrefix(req.db, prefix === '/' ? '' : prefix);
  const keys = new Set<string>();
  for (const id of ids) {
    const rest = id.slice(prefix === '/' ? 0 : prefix.length);
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
