import { Barrier } from './barrier';
import { LeaseStore } from './leases';
import { BUILTIN_MOUNTS, MountTable } from './mounts';
import { Acl, PolicyStore } from './policies';
import { MountStore } from './store';
import { rootEntry, TokenStore } from './tokens';
import { EngineContext, EngineType, LeaseRecord, MountEntry, TokenEntry } from './types';
import type { Engine } from '../../engine';
import type { Db } from '../../storage';
import { groupPolicies } from '../identity/store';

/** How many rows one round of the expiry job handles per kind. */
const BATCH = 100;

/**
 * Older names Vault still mounts under (its mountAliases): the mount keeps the name it was given
 * (reads show `generic`, as Vault's do), the engine is the one aliased.
 */
const SECRETS_TYPE_ALIASES: Readonly<Record<string, string>> = { generic: 'kv' };

/** A lease marked for revocation, as read in the transaction that marked it, and its mount. */
export interface OpenedLease {
  readonly lease: LeaseRecord;
  readonly mount: MountEntry | undefined;
  /** What the engine's `prepareRevoke` read in the marking transaction. */
  readonly prepared?: unknown;
}

/**
 * The secrets service's core, one per Engine: the barrier, tokens, policies, mounts, leases and the
 * registry of engine types. Created on first use (the key file appears then) by `secretsCore`.
 */
export class SecretsCore {
  readonly tokens: TokenStore;
  readonly policies: PolicyStore;
  readonly mounts: MountTable;
  readonly leases: LeaseStore;
  private readonly types = new Map<string, EngineType>();
  /** What dev mode mounted at start (the spec's default mounts), by path and type. */
  private devMounts: ReadonlyArray<Pick<MountEntry, 'path' | 'kind' | 'type'>> = [];

  constructor(
    readonly engine: Engine,
    readonly barrier: Barrier,
    types: readonly EngineType[],
  ) {
    this.tokens = new TokenStore(barrier);
    this.policies = new PolicyStore(barrier);
    this.mounts = new MountTable(barrier);
    this.leases = new LeaseStore(barrier);
    types.forEach((t) => this.register(t));
  }

  /** Adds an engine type (the six engines; tests add their own). */
  register(type: EngineType): void {
    this.types.set(`${type.kind}:${type.type}`, type);
  }

  engineType(kind: 'secret' | 'auth', type: string): EngineType | undefined {
    return this.types.get(`${kind}:${(kind === 'secret' && SECRETS_TYPE_ALIASES[type]) || type}`);
  }

  typeNames(kind: 'secret' | 'auth'): string[] {
    return [...this.types.values()].filter((t) => t.kind === kind && !BUILTIN_MOUNTS.some((m) => m.type === t.type)).map((t) => t.type);
  }

  /** Keyring, built-in mounts, and in dev mode the spec's default mounts. */
  async init(defaultMounts: ReadonlyArray<Pick<MountEntry, 'path' | 'kind' | 'type'> & Partial<MountEntry>>): Promise<void> {
    const now = this.engine.clock.now();
    await this.barrier.init(this.engine.storage, now);
    await this.engine.storage.tx(async (db) => {
      const existing = new Set((await this.mounts.all(db)).map((m) => m.path));
      if (this.engine.devMode) this.devMounts = defaultMounts;
      const wanted = [...BUILTIN_MOUNTS, ...this.devMounts];
      for (const m of wanted) {
        if (existing.has(m.path)) continue;
        const entry = this.mounts.newEntry(m, now);
        await this.mounts.put(db, entry);
        const type = this.engineType(entry.kind, entry.type);
        if (type?.mounted) await type.mounted(this.contextIn(db, entry, now));
      }
    });
  }

  /** Whether dev mode mounted this path with this type at start. */
  devMount(m: Pick<MountEntry, 'path' | 'kind' | 'type'>): boolean {
    return this.devMounts.some((d) => d.path === m.path && d.kind === m.kind && d.type === m.type);
  }

  store(db: Db, mount: MountEntry): MountStore {
    return new MountStore(db, this.barrier, `logical/${mount.uuid}/`);
  }

  /** The context of an engine's hooks, in its own transactions. */
  context(mount: MountEntry): EngineContext {
    return {
      engine: this.engine,
      core: this,
      mount,
      now: this.engine.clock.now(),
      tx: (fn, options) => this.engine.storage.tx((db) => fn(this.store(db, mount), db), options),
    };
  }

  /** The context of an engine's hooks inside an open transaction. */
  contextIn(db: Db, mount: MountEntry, now: number): EngineContext {
    return { engine: this.engine, core: this, mount, now, tx: (fn) => fn(this.store(db, mount), db) };
  }

  /** A token's entry while it is valid (the engine's root token included), or undefined. */
  async tokenEntry(db: Db, token: string, now: number): Promise<{ entry: TokenEntry; root: boolean } | undefined> {
    if (await this.tokens.isRoot(db, token, this.engine.rootToken)) return { entry: rootEntry(token, now), root: true };
    const entry = await this.tokens.lookup(db, token, now);
    return entry && { entry, root: entry.policies.includes('root') };
  }

  /** The policies a token gets from its identity groups (Vault's `identity_policies`). */
  identityPolicies(db: Db, entry: TokenEntry): Promise<string[]> {
    return groupPolicies(this, db, entry.groupIds);
  }

  /** The ACL of a token: its own policies and its groups'. */
  async acl(db: Db, entry: TokenEntry, root: boolean): Promise<Acl> {
    if (root) return new Acl([], true);
    const identity = await this.identityPolicies(db, entry);
    return this.policies.acl(db, identity.length ? [...new Set([...entry.policies, ...identity])] : entry.policies);
  }

  /**
   * Revokes a token and, unless `orphan`, its descendants; their leases are marked for revocation.
   * Returns the marked lease ids: the caller runs `revokeLeases` on them once the transaction commits.
   */
  async revokeToken(db: Db, idHash: string, now: number, orphan = false): Promise<string[]> {
    let hashes: string[];
    if (orphan) {
      await this.tokens.orphanChildren(db, idHash);
      hashes = [idHash];
    } else {
      hashes = await this.tokens.tree(db, idHash);
    }
    const leaseIds = await this.leases.idsOfTokens(db, hashes);
    await this.leases.markRevoking(db, leaseIds, now);
    await this.tokens.remove(db, hashes);
    for (const mount of await this.mounts.all(db)) {
      const type = this.engineType(mount.kind, mount.type);
      if (type?.tokensRevoked) await type.tokensRevoked(this.contextIn(db, mount, now), hashes);
    }
    return leaseIds;
  }

  /** Revokes every token whose lease id starts with a prefix (revoke-prefix, disabling an auth mount). */
  async revokeTokensUnder(db: Db, prefix: string, now: number): Promise<string[]> {
    const leaseIds: string[] = [];
    for (const t of await this.tokens.withLeasePrefix(db, prefix)) {
      // An earlier one's tree may have taken it already.
      if (await this.tokens.byHash(db, t.idHash)) leaseIds.push(...(await this.revokeToken(db, t.idHash, now)));
    }
    return leaseIds;
  }

  /**
   * Step two of revocation: each marked lease goes back to its engine's revoke hook, then its row
   * is deleted. Failures stay marked (with a back-off) for the background job. Returns the failures.
   * `opened`: leases the caller read (with their mounts) in the transaction that marked them, which
   * then need no transaction and no decryption here.
   */
  async revokeLeases(ids: readonly string[], opened?: ReadonlyMap<string, OpenedLease>): Promise<{ id: string; error: string }[]> {
    const failures: { id: string; error: string }[] = [];
    for (const id of ids) {
      const { storage, clock, logger } = this.engine;
      const found: OpenedLease | undefined =
        opened?.get(id) ??
        (await storage.tx(async (db) => {
          const lease = await this.leases.pending(db, id);
          return lease && { lease, mount: await this.mounts.get(db, lease.mountPath) };
        }));
      if (!found) continue;
      const type = found.mount && this.engineType(found.mount.kind, found.mount.type);
      try {
        if (found.mount && type?.revoke) await type.revoke(found.lease, this.context(found.mount), found.prepared);
        await storage.tx((db) => this.leases.delete(db, id));
      } catch (err) {
        const error = (err as Error).message;
        logger.warn({ lease: id, error }, 'lease revocation failed; it will be retried');
        await storage.tx((db) => this.leases.failed(db, id, clock.now()));
        failures.push({ id, error });
      }
    }
    return failures;
  }

  /** One round of the background job: expired tokens and leases, due revocations, stale entries. */
  async expire(): Promise<void> {
    const { storage, clock } = this.engine;
    const now = clock.now();
    await storage.tx(async (db) => {
      for (const hash of await this.tokens.expired(db, now, BATCH)) {
        if (await this.tokens.byHash(db, hash)) await this.revokeToken(db, hash, now);
      }
      await this.leases.markExpired(db, now, BATCH);
      await db.run('DELETE FROM secrets_entries WHERE expire_at IS NOT NULL AND expire_at <= ?', [now]);
    });
    const due = await storage.tx((db) => this.leases.due(db, now, BATCH), { readOnly: true });
    await this.revokeLeases(due);
  }
}
