import type { Barrier } from './barrier';
import type { Db } from '../../storage';

/** Sorts after every character: `prefix <= key < prefix + LAST_CHAR` selects the keys under prefix. */
export const LAST_CHAR = '\u{10ffff}';

/**
 * Sealed key-value storage, Vault's logical storage: every value is encrypted by the barrier and
 * bound to its key. Each mount gets its own prefix (`logical/<uuid>/`), so engines never see each
 * other's data and disabling a mount removes all of it.
 */
export class MountStore {
  constructor(
    private readonly db: Db,
    private readonly barrier: Barrier,
    readonly prefix: string,
  ) {}

  async get<T>(key: string): Promise<T | undefined> {
    const full = this.prefix + key;
    const row = await this.db.get<{ sealed: string }>('SELECT sealed FROM secrets_entries WHERE path = ?', [full]);
    return row ? this.barrier.openJson<T>(this.db, row.sealed, `entry:${full}`) : undefined;
  }

  /**
   * `get`, with the opened value (or what `derive` makes of it) kept in `memo` while the stored
   * ciphertext stays the same. Every write seals anew (fresh IV), so a changed value, even one
   * written by another server, is never served stale: only the decryption and parsing are saved.
   */
  async getMemo<T, V = T>(key: string, memo: SealedMemo<V>, derive: (value: T) => V = (value) => value as unknown as V): Promise<V | undefined> {
    const full = this.prefix + key;
    const row = await this.db.get<{ sealed: string }>('SELECT sealed FROM secrets_entries WHERE path = ?', [full]);
    if (!row) return undefined;
    const hit = memo.get(full, row.sealed);
    if (hit) return hit.value;
    const value = derive(await this.barrier.openJson<T>(this.db, row.sealed, `entry:${full}`));
    memo.set(full, row.sealed, value);
    return value;
  }

  /** Stores a value; `expireAt` (epoch ms) lets the background job delete it (OIDC states). */
  async put(key: string, value: unknown, expireAt?: number): Promise<void> {
    const full = this.prefix + key;
    const sealed = await this.barrier.sealJson(this.db, value, `entry:${full}`);
    await this.db.run(
      'INSERT INTO secrets_entries (path, expire_at, sealed) VALUES (?, ?, ?) ON CONFLICT (path) DO UPDATE SET expire_at = excluded.expire_at, sealed = excluded.sealed',
      [full, expireAt ?? null, sealed],
    );
  }

  /** Deletes a value; false when there was none. */
  async delete(key: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM secrets_entries WHERE path = ?', [this.prefix + key])) > 0;
  }

  async exists(key: string): Promise<boolean> {
    return (await this.db.get('SELECT 1 AS x FROM secrets_entries WHERE path = ?', [this.prefix + key])) !== undefined;
  }

  /** The names directly under `dir` (`role/` lists `role/a`, `role/b`), sub-folders with a trailing slash. */
  async list(dir: string): Promise<string[]> {
    const start = this.prefix + dir;
    const rows = await this.db.all<{ path: string }>('SELECT path FROM secrets_entries WHERE path >= ? AND path < ? ORDER BY path', [
      start,
      `${start}${LAST_CHAR}`,
    ]);
    const names = new Set<string>();
    for (const { path } of rows) {
      const rest = path.slice(start.length);
      const slash = rest.indexOf('/');
      names.add(slash < 0 ? rest : rest.slice(0, slash + 1));
    }
    return [...names];
  }

  /** Removes everything under this store's prefix. */
  async clear(): Promise<void> {
    await this.db.run('DELETE FROM secrets_entries WHERE path >= ? AND path < ?', [this.prefix, `${this.prefix}${LAST_CHAR}`]);
  }
}

/**
 * Opened values of `MountStore.getMemo`, each with the ciphertext it came from; at most `size` kept,
 * and with `maxSealedChars` only values whose ciphertext is at most that long (user data of any size).
 */
export class SealedMemo<V> {
  private readonly entries = new Map<string, { sealed: string; value: V }>();
  constructor(
    private readonly size = 256,
    private readonly maxSealedChars = Infinity,
  ) {}

  get(path: string, sealed: string): { value: V } | undefined {
    const hit = this.entries.get(path);
    return hit?.sealed === sealed ? hit : undefined;
  }

  set(path: string, sealed: string, value: V): void {
    if (sealed.length > this.maxSealedChars) {
      this.entries.delete(path);
      return;
    }
    if (!this.entries.has(path) && this.entries.size >= this.size) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(path, { sealed, value });
  }
}

/** Freezes a JSON value and everything in it: a value a memo shares between requests cannot be changed by mistake. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
