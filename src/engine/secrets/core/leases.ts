import type { Barrier } from './barrier';
import { secondsLeft } from './durations';
import { LAST_CHAR } from './store';
import { SYSTEM_MAX_TTL } from './tokens';
import { LeaseRecord, LeaseSpec, MountEntry } from './types';
import { pooledRandomBytes } from '../../random';
import type { Db } from '../../storage';

interface SealedLease {
  readonly mountPath: string;
  readonly path: string;
  readonly issueTime: number;
  readonly maxExpireAt: number;
  readonly renewable: boolean;
  readonly lastRenewalTime?: number;
  readonly internal: unknown;
}

/** Retry delays of a failed revocation (the engine's system may be down): 5 s doubling to 1 h. */
const backoff = (attempts: number) => Math.min(3_600_000, 5_000 * 2 ** Math.min(attempts, 10));

/**
 * Leases: every lease-bearing response registers one; expiry and revocation go back to the engine
 * that issued it. Revocation is two-step and persistent: a transaction marks the lease `revoking`,
 * then the engine's revoke hook runs and a second transaction deletes the row. A failure (or a crash
 * in between) leaves the mark, and the background job tries again, also after a restart.
 */
export class LeaseStore {
  constructor(private readonly barrier: Barrier) {}

  async register(
    db: Db,
    args: { mount: MountEntry; path: string; tokenHash?: string; spec: LeaseSpec; now: number },
  ): Promise<{ id: string; ttl: number; renewable: boolean }> {
    const { mount, spec, now } = args;
    const mountMax = mount.maxLeaseTtl || SYSTEM_MAX_TTL;
    const max = spec.maxTtl && spec.maxTtl > 0 ? Math.min(spec.maxTtl, mountMax) : mountMax;
    const ttl = Math.min(spec.ttl && spec.ttl > 0 ? spec.ttl : mount.defaultLeaseTtl || SYSTEM_MAX_TTL, max);
    const id = `${mount.path}${args.path.replace(/\/+$/, '')}/${pooledRandomBytes(18).toString('base64url')}`;
    const sealed: SealedLease = {
      mountPath: mount.path,
      path: args.path,
      issueTime: now,
      maxExpireAt: now + max * 1000,
      renewable: spec.renewable ?? true,
      internal: spec.internal ?? null,
    };
    await db.run('INSERT INTO secrets_leases (id, token_hash, expire_at, sealed) VALUES (?, ?, ?, ?)', [
      id,
      args.tokenHash ?? null,
      now + ttl * 1000,
      await this.barrier.sealJson(db, sealed, `lease:${id}`),
    ]);
    return { id, ttl, renewable: sealed.renewable };
  }

  /** A lease not being revoked, or undefined. */
  async get(db: Db, id: string): Promise<(LeaseRecord & { tokenHash?: string }) | undefined> {
    const row = await db.get<{ token_hash: string | null; expire_at: number | string; revoking: number; sealed: string }>(
      'SELECT token_hash, expire_at, revoking, sealed FROM secrets_leases WHERE id = ?',
      [id],
    );
    if (!row || Number(row.revoking) === 1) return undefined;
    const s = await this.barrier.openJson<SealedLease>(db, row.sealed, `lease:${id}`);
    return { id, ...s, expireAt: Number(row.expire_at), tokenHash: row.token_hash ?? undefined };
  }

  /** Extends a lease by `increment` seconds (0: its original TTL), within its maximum. */
  async renew(db: Db, lease: LeaseRecord, increment: number, now: number): Promise<number> {
    if (!lease.renewable) throw new Error('lease is not renewable');
    const original = Math.round((lease.expireAt - (lease.lastRenewalTime ?? lease.issueTime)) / 1000);
    const ttl = Math.min(increment > 0 ? increment : original, secondsLeft(lease.maxExpireAt, now));
    if (ttl <= 0) throw new Error('lease has reached its maximum TTL and cannot be renewed');
    const sealed: SealedLease = {
      mountPath: lease.mountPath,
      path: lease.path,
      issueTime: lease.issueTime,
      maxExpireAt: lease.maxExpireAt,
      renewable: lease.renewable,
      lastRenewalTime: now,
      internal: lease.internal,
    };
    await db.run('UPDATE secrets_leases SET expire_at = ?, sealed = ? WHERE id = ?', [
      now + ttl * 1000,
      await this.barrier.sealJson(db, sealed, `lease:${lease.id}`),
      lease.id,
    ]);
    return ttl;
  }

  /** Lease ids under a prefix (`database/creds/ro/`), not being revoked unless `withRevoking`. */
  async idsWithPrefix(db: Db, prefix: string, withRevoking = false): Promise<string[]> {
    const rows = await db.all<{ id: string }>(`SELECT id FROM secrets_leases WHERE id >= ? AND id < ?${withRevoking ? '' : ' AND revoking = 0'} ORDER BY id`, [
      prefix,
      `${prefix}${LAST_CHAR}`,
    ]);
    return rows.map((r) => r.id);
  }

  async idsOfTokens(db: Db, tokenHashes: readonly string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const hash of tokenHashes) {
      const rows = await db.all<{ id: string }>('SELECT id FROM secrets_leases WHERE token_hash = ? AND revoking = 0', [hash]);
      ids.push(...rows.map((r) => r.id));
    }
    return ids;
  }

  /** Marks leases for revocation (step one, inside the caller's transaction). */
  async markRevoking(db: Db, ids: readonly string[], now: number): Promise<void> {
    for (const id of ids) await db.run('UPDATE secrets_leases SET revoking = 1, next_attempt_at = ? WHERE id = ?', [now, id]);
  }

  /** Expired leases not yet marked, marked now; returns their ids. */
  async markExpired(db: Db, now: number, limit: number): Promise<string[]> {
    const rows = await db.all<{ id: string }>('SELECT id FROM secrets_leases WHERE revoking = 0 AND expire_at <= ? LIMIT ?', [now, limit]);
    const ids = rows.map((r) => r.id);
    await this.markRevoking(db, ids, now);
    return ids;
  }

  /** Leases marked for revocation whose next attempt is due. */
  async due(db: Db, now: number, limit: number): Promise<string[]> {
    const rows = await db.all<{ id: string }>(
      'SELECT id FROM secrets_leases WHERE revoking = 1 AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?',
      [now, limit],
    );
    return rows.map((r) => r.id);
  }

  /** A marked lease with its sealed data, for the revoke hook. */
  async pending(db: Db, id: string): Promise<LeaseRecord | undefined> {
    const row = await db.get<{ expire_at: number | string; sealed: string }>(
      'SELECT expire_at, sealed FROM secrets_leases WHERE id = ? AND revoking = 1',
      [id],
    );
    if (!row) return undefined;
    const s = await this.barrier.openJson<SealedLease>(db, row.sealed, `lease:${id}`);
    return { id, ...s, expireAt: Number(row.expire_at) };
  }

  async delete(db: Db, id: string): Promise<void> {
    await db.run('DELETE FROM secrets_leases WHERE id = ?', [id]);
  }

  async failed(db: Db, id: string, now: number): Promise<void> {
    const row = await db.get<{ attempts: number | string }>('SELECT attempts FROM secrets_leases WHERE id = ?', [id]);
    const attempts = Number(row?.attempts ?? 0) + 1;
    await db.run('UPDATE secrets_leases SET attempts = ?, next_attempt_at = ? WHERE id = ?', [attempts, now + backoff(attempts), id]);
  }
}
