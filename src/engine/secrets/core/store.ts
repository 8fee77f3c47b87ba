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
