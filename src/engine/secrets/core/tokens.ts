import { BlockList, isIP } from 'node:net';
import type { Barrier } from './barrier';
import { secondsLeft } from './durations';
import { SealedMemo } from './store';
import { TokenEntry } from './types';
import { sha256Hex } from '../../crypto';
import { pooledRandomBytes } from '../../random';
import type { RootTokenHash } from '../../root-token';
import type { Db } from '../../storage';

/** Vault's system default and maximum TTL: 768h (32 days). */
export const SYSTEM_MAX_TTL = 768 * 3600;

const SERVICE_PREFIX = 'hvs.';
const BATCH_PREFIX = 'hvb.';

export interface NewToken {
  readonly policies: readonly string[];
  readonly meta?: Readonly<Record<string, string>>;
  readonly displayName: string;
  readonly numUses?: number;
  /** Seconds; 0: the default (mount default, or none for root-policy tokens). */
  readonly ttl?: number;
  /** Cap on renewals in seconds (mount or role max TTL); 0: the system maximum. */
  readonly maxTtl?: number;
  readonly explicitMaxTtl?: number;
  readonly period?: number;
  readonly renewable?: boolean;
  readonly type?: 'service' | 'batch';
  readonly parent?: TokenEntry;
  readonly path: string;
  readonly boundCidrs?: readonly string[];
  readonly role?: string;
  readonly groupIds?: readonly string[];
  /** Epoch ms the token may not outlive (its parent's expiry), kept exact rather than in whole seconds. */
  readonly expireBy?: number;
}

/** A token and its entry, as creation returns them. */
export interface IssuedToken {
  readonly token: string;
  readonly entry: TokenEntry;
}

/**
 * The token store. Service tokens are random and stored only as their SHA-256, with their entry
 * sealed; batch tokens are not stored at all: the entry is sealed into the token itself. Expiry
 * reads the engine clock: an expired token stops working at once, the background job revokes it.
 */
export class TokenStore {
  /**
   * Opened entries by token hash with the ciphertext they came from: a token is read on every
   * request, and its row changes (a fresh IV) on every write, so only the decryption is saved.
   */
  private readonly opened = new SealedMemo<TokenEntry>(4096);

  constructor(private readonly barrier: Barrier) {}

  /** Creates a token; the caller has checked the parent's right to do so. */
  async create(db: Db, spec: NewToken, now: number): Promise<IssuedToken> {
    const type = spec.type ?? 'service';
    const period = spec.period ?? 0;
    const explicitMax = spec.explicitMaxTtl ?? 0;
    const rootPolicy = spec.policies.includes('root');
    let ttl = period > 0 ? period : spec.ttl ?? 0;
    const maxTtl = spec.maxTtl && spec.maxTtl > 0 ? spec.maxTtl : SYSTEM_MAX_TTL;
    if (ttl === 0 && !rootPolicy) ttl = maxTtl;
    // The hard limit: the explicit max TTL always; the max TTL too, except for periodic tokens.
    let hardTtl = explicitMax > 0 ? explicitMax : 0;
    if (period === 0 && !(rootPolicy && ttl === 0)) hardTtl = hardTtl > 0 ? Math.min(hardTtl, maxTtl) : maxTtl;
    if (hardTtl > 0 && (ttl === 0 || ttl > hardTtl)) ttl = hardTtl;
    const by = spec.expireBy ?? 0;
    const capped = (at: number) => (by > 0 && (at === 0 || at > by) ? by : at);
    const expireAt = capped(ttl > 0 ? now + ttl * 1000 : 0);
    const entry: TokenEntry = {
      idHash: '',
      accessor: type === 'batch' ? '' : pooledRandomBytes(18).toString('base64url'),
      parentHash: spec.parent?.idHash,
      policies: [...spec.policies],
      meta: { ...(spec.meta ?? {}) },
      displayName: spec.displayName,
      numUses: spec.numUses ?? 0,
      creationTime: now,
      creationTtl: expireAt ? secondsLeft(expireAt, now) : 0,
      expireAt,
      maxExpireAt: capped(hardTtl > 0 ? now + hardTtl * 1000 : 0),
      explicitMaxTtl: explicitMax,
      period,
      renewable: type === 'service' && expireAt > 0 && (spec.renewable ?? true),
      type,
      orphan: !spec.parent,
      path: spec.path,
      boundCidrs: [...(spec.boundCidrs ?? [])],
      ...(spec.role ? { role: spec.role } : {}),
      ...(spec.groupIds?.length ? { groupIds: [...spec.groupIds] } : {}),
    };
    if (type === 'batch') {
      const sealed = await this.barrier.sealCompact(db, Buffer.from(JSON.stringify(entry), 'utf8'), 'batch-token');
      const token = `${BATCH_PREFIX}${sealed.toString('base64url')}`;
      return { token, entry: { ...entry, idHash: sha256Hex(token) } };
    }
    const token = `${SERVICE_PREFIX}${pooledRandomBytes(32).toString('base64url')}`;
    const stored = { ...entry, idHash: sha256Hex(token) };
    await this.save(db, stored, true);
    return { token, entry: stored };
  }

  /** The entry of a token that is valid now (not expired, not used up), or undefined. */
  async lookup(db: Db, token: string, now: number): Promise<TokenEntry | undefined> {
    let entry: TokenEntry | undefined;
    if (token.startsWith(BATCH_PREFIX)) {
      const opened = await this.barrier.openCompact(db, Buffer.from(token.slice(BATCH_PREFIX.length), 'base64url'), 'batch-token');
      if (!opened) return undefined;
      entry = { ...(JSON.parse(opened.toString('utf8')) as TokenEntry), idHash: sha256Hex(token) };
      // A batch token lives no longer than its parent.
      if (entry.parentHash && !(await this.byHash(db, entry.parentHash, now))) return undefined;
    } else {
      entry = await this.byHash(db, sha256Hex(token), now);
    }
    return entry && isLive(entry, now) ? entry : undefined;
  }

  /** A stored token's entry; with `now`, only while it is valid. */
  async byHash(db: Db, idHash: string, now?: number): Promise<TokenEntry | undefined> {
    const row = await db.get<{ sealed: string }>('SELECT sealed FROM secrets_tokens WHERE id_hash = ?', [idHash]);
    if (!row) return undefined;
    let entry = this.opened.get(idHash, row.sealed)?.value;
    if (!entry) {
      entry = await this.barrier.openJson<TokenEntry>(db, row.sealed, `token:${idHash}`);
      this.opened.set(idHash, row.sealed, entry);
    }
    return now === undefined || isLive(entry, now) ? entry : undefined;
  }

  async byAccessor(db: Db, accessor: string, now: number): Promise<TokenEntry | undefined> {
    const row = await db.get<{ id_hash: string }>('SELECT id_hash FROM secrets_tokens WHERE accessor_hash = ?', [sha256Hex(`accessor:${accessor}`)]);
    return row ? this.byHash(db, row.id_hash, now) : undefined;
  }

  /** Stores a changed entry (renewal, a use counted). */
  async save(db: Db, entry: TokenEntry, insert = false): Promise<void> {
    const sealed = await this.barrier.sealJson(db, entry, `token:${entry.idHash}`);
    const expireAt = entry.expireAt || null;
    if (insert) {
      await db.run('INSERT INTO secrets_tokens (id_hash, accessor_hash, parent_hash, expire_at, sealed) VALUES (?, ?, ?, ?, ?)', [
        entry.idHash,
        sha256Hex(`accessor:${entry.accessor}`),
        entry.parentHash ?? null,
        expireAt,
        sealed,
      ]);
    } else {
      await db.run('UPDATE secrets_tokens SET expire_at = ?, sealed = ? WHERE id_hash = ?', [expireAt, sealed, entry.idHash]);
    }
  }

  /**
   * Counts one use of a limited token: the uses left (0 when this was the last), or -1 when
   * another request took the last use first.
   */
  async use(db: Db, entry: TokenEntry): Promise<number> {
    const fresh = await this.byHash(db, entry.idHash);
    if (!fresh || fresh.numUses <= 0) return -1;
    const left = fresh.numUses - 1;
    // -1 marks "used up": lookups then refuse the token until its revocation removes it.
    await this.save(db, { ...fresh, numUses: left === 0 ? -1 : left });
    return left;
  }

  /**
   * Renews a token: the new TTL is the increment (or the period, or the creation TTL), never past
   * the token's hard limit. Throws a message when it may not be renewed.
   */
  async renew(db: Db, entry: TokenEntry, increment: number, now: number): Promise<TokenEntry> {
    if (!entry.renewable) throw new Error('lease is not renewable');
    let ttl = entry.period > 0 ? entry.period : increment > 0 ? increment : entry.creationTtl;
    if (entry.maxExpireAt > 0) ttl = Math.min(ttl, secondsLeft(entry.maxExpireAt, now));
    if (ttl <= 0) throw new Error('token has reached its maximum TTL and cannot be renewed');
    const renewed: TokenEntry = { ...entry, expireAt: now + ttl * 1000, lastRenewalTime: now };
    await this.save(db, renewed);
    return renewed;
  }

  /** The hashes of a token and all its descendants, children first. */
  async tree(db: Db, idHash: string): Promise<string[]> {
    const out: string[] = [];
    const visit = async (hash: string) => {
      const children = await db.all<{ id_hash: string }>('SELECT id_hash FROM secrets_tokens WHERE parent_hash = ?', [hash]);
      for (const c of children) await visit(c.id_hash);
      out.push(hash);
    };
    await visit(idHash);
    return out;
  }

  /** Deletes tokens (their leases are the caller's business); orphan mode keeps children alive as orphans. */
  async remove(db: Db, hashes: readonly string[]): Promise<void> {
    for (const hash of hashes) await db.run('DELETE FROM secrets_tokens WHERE id_hash = ?', [hash]);
  }

  /** Makes the children of a token orphans (revoke-orphan). */
  async orphanChildren(db: Db, idHash: string): Promise<void> {
    const children = await db.all<{ id_hash: string }>('SELECT id_hash FROM secrets_tokens WHERE parent_hash = ?', [idHash]);
    for (const { id_hash } of children) {
      await db.run('UPDATE secrets_tokens SET parent_hash = NULL WHERE id_hash = ?', [id_hash]);
      const child = await this.byHash(db, id_hash);
      if (child) await this.save(db, { ...child, parentHash: undefined, orphan: true });
    }
  }

  /** Stored tokens whose `<path>/<hash>` (their lease id when they have one) starts with a prefix: a scan, for admin operations. */
  async withLeasePrefix(db: Db, prefix: string): Promise<TokenEntry[]> {
    // Every token is created under an auth mount: other prefixes (`pki/issue/`) need no scan.
    if (!prefix.startsWith('auth/') && !'auth/'.startsWith(prefix)) return [];
    const rows = await db.all<{ id_hash: string }>('SELECT id_hash FROM secrets_tokens ORDER BY id_hash');
    const out: TokenEntry[] = [];
    for (const { id_hash } of rows) {
      const entry = await this.byHash(db, id_hash);
      if (entry && `${entry.path}/${entry.idHash}`.startsWith(prefix)) out.push(entry);
    }
    return out;
  }

  /** The token a lease id of `tokenLeaseId` stands for, while it is stored. */
  async byLeaseId(db: Db, leaseId: string): Promise<TokenEntry | undefined> {
    const hash = /\/([0-9a-f]{64})$/.exec(leaseId)?.[1];
    const entry = hash ? await this.byHash(db, hash) : undefined;
    return entry && tokenLeaseId(entry) === leaseId ? entry : undefined;
  }

  /** Tokens past their expiry (for the background job). */
  async expired(db: Db, now: number, limit: number): Promise<string[]> {
    const rows = await db.all<{ id_hash: string }>('SELECT id_hash FROM secrets_tokens WHERE expire_at IS NOT NULL AND expire_at <= ? LIMIT ?', [
      now,
      limit,
    ]);
    return rows.map((r) => r.id_hash);
  }

  /** Whether a token is the root token of the engine. */
  isRoot(db: Db, token: string, rootToken: RootTokenHash): Promise<boolean> {
    return token.startsWith(SERVICE_PREFIX) || token.startsWith(BATCH_PREFIX) ? Promise.resolve(false) : rootToken.matchesToken(db, token);
  }
}

/**
 * A service token's lease id, as Vault shows tokens among leases: its creation path and its hash
 * (`auth/jwt/login/<sha256>`), so `sys/leases/lookup/auth/...` lists it and revoke-prefix reaches it.
 */
export function tokenLeaseId(entry: TokenEntry): string | undefined {
  return entry.type === 'service' && entry.expireAt > 0 ? `${entry.path}/${entry.idHash}` : undefined;
}

function isLive(entry: TokenEntry, now: number): boolean {
  if (entry.numUses < 0) return false;
  return entry.expireAt === 0 || entry.expireAt > now;
}

/** The root token's entry: root policy, no expiry, an accessor derived from it. */
export function rootEntry(token: string | undefined, now: number): TokenEntry {
  return {
    idHash: token ? sha256Hex(token) : 'local-admin',
    accessor: token ? sha256Hex(`accessor:${token}`).slice(0, 24) : '',
    policies: ['root'],
    meta: {},
    displayName: 'root',
    numUses: 0,
    creationTime: now,
    creationTtl: 0,
    expireAt: 0,
    maxExpireAt: 0,
    explicitMaxTtl: 0,
    period: 0,
    renewable: false,
    type: 'service',
    orphan: true,
    path: 'auth/token/root',
    boundCidrs: [],
  };
}

/** Whether an IP address is inside one of the CIDR blocks (or equal to one of the addresses). */
export function ipAllowed(ip: string, cidrs: readonly string[]): boolean {
  if (cidrs.length === 0) return true;
  const addr = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  const family = isIP(addr);
  if (!family) return false;
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [base, bits] = cidr.split('/');
    const type = isIP(base) === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(base, type);
    else list.addSubnet(base, Number(bits), type);
  }
  return list.check(addr, family === 4 ? 'ipv4' : 'ipv6');
}

/** Validates a CIDR block or address; returns an error message or undefined. */
export function checkCidr(cidr: string): string | undefined {
  const [base, bits] = cidr.split('/');
  const family = isIP(base);
  if (!family) return `"${cidr}" is not an IP address or CIDR block`;
  if (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128))) return `"${cidr}" has an invalid prefix length`;
  return undefined;
}
