import { resolve } from 'node:path';
import { MIGRATIONS } from './migrations';
import { checkNesting, NESTED_TX_CHECK_VAR } from './nesting-check';
import { SqliteStorage } from './sqlite/sqlite-storage';
import { ThreadLock } from './sqlite/thread-lock';
import { Migration, Storage } from './types';

export * from './types';
export { UniqueViolation } from './errors';
export { NewerSchemaError, pendingMigrations } from './apply-migrations';
export { MIGRATIONS } from './migrations';
export { allIn, IN_LIST_MAX } from './in-list';

export type StorageConfig =
  /** `writeLock`: shared by the threads of one server (`--workers`), see ThreadLock; one per file and thread when absent. */
  | { readonly kind: 'sqlite'; readonly dataDir: string; readonly writeLock?: SharedArrayBuffer }
  | { readonly kind: 'postgres'; readonly url: string };

/**
 * The write locks of the SQLite files this thread opened, by path. Two storages of one thread on
 * one file (two engines of a test, the in-process transport beside a server) would otherwise meet
 * in SQLite's busy handler, which sleeps synchronously: the holder, on the same thread, cannot go
 * on, so the waiter blocks the thread for the whole busy timeout before it retries.
 */
const fileLocks = new Map<string, SharedArrayBuffer>();

function sqliteStorage(config: Extract<StorageConfig, { kind: 'sqlite' }>, migrations: readonly Migration[]): SqliteStorage {
  const file = resolve(config.dataDir, 'hangar.db');
  let lock = config.writeLock ?? fileLocks.get(file);
  if (!lock) fileLocks.set(file, (lock = new SharedArrayBuffer(4)));
  return new SqliteStorage(file, migrations, new ThreadLock(lock));
}

/**
/**
 * Opens the configured storage and brings its schema up to date: unless `migrate` is false (for
 * looking at what is pending), or only up to migration `upTo` (a restore fills the schema its backup
 * was taken with, then migrates it the rest of the way). A database a newer build migrated is
 * refused (NewerSchemaError).
 */
export async function openStorage(
  config: StorageConfig,
  options: { readonly migrate?: boolean; readonly upTo?: number } = {},
): Promise<Storage> {
  const { migrate = true, upTo } = options;
  const migrations = upTo === undefined ? MIGRATIONS : MIGRATIONS.filter((m) => m.version <= upTo);
  const storage =
    config.kind === 'sqlite'
      ? sqliteStorage(config, migrations)
      : // Loaded only when configured: a SQLite server does not build the PostgreSQL storage and its pool.
      new (require('./postgres/postgres-storage') as typeof import('./postgres/postgres-storage')).PostgresStorage(config.url, migrations);
  if (process.env[NESTED_TX_CHECK_VAR]) checkNesting(storage);
  try {
    if (migrate) await storage.migrate();
  } catch (err) {
    await storage.close().catch(() => undefined);
    throw err;
  }
  return storage;
}
