import { join } from 'node:path';
import { MIGRATIONS } from './migrations';
import { checkNesting, NESTED_TX_CHECK_VAR } from './nesting-check';
import { SqliteStorage } from './sqlite/sqlite-storage';
import { ThreadLock } from './sqlite/thread-lock';
import { Storage } from './types';

export * from './types';
export { UniqueViolation } from './errors';

export type StorageConfig =
  /** `writeLock`: shared by the threads of one server (`--workers`), see ThreadLock. */
  | { readonly kind: 'sqlite'; readonly dataDir: string; readonly writeLock?: SharedArrayBuffer }
  | { readonly kind: 'postgres'; readonly url: string };

/** Opens the configured storage and brings its schema up to date. */
export async function openStorage(config: StorageConfig): Promise<Storage> {
  const storage =
    config.kind === 'sqlite'
      ? new SqliteStorage(join(config.dataDir, 'hangar.db'), MIGRATIONS, config.writeLock && new ThreadLock(config.writeLock))
      : // Loaded only when configured: a SQLite server does not build the PostgreSQL storage and its pool.
      new (require('./postgres/postgres-storage') as typeof import('./postgres/postgres-storage')).PostgresStorage(config.url, MIGRATIONS);
  if (process.env[NESTED_TX_CHECK_VAR]) checkNesting(storage);
  try {
    await storage.migrate();
  } catch (err) {
    await storage.close().catch(() => undefined);
    throw err;
  }
  return storage;
}
