import { join } from 'node:path';
import { MIGRATIONS } from './migrations';
import { PostgresStorage } from './postgres/postgres-storage';
import { SqliteStorage } from './sqlite/sqlite-storage';
import { Storage } from './types';

export * from './types';
export { UniqueViolation } from './errors';

export type StorageConfig =
  | { readonly kind: 'sqlite'; readonly dataDir: string }
  | { readonly kind: 'postgres'; readonly url: string };

/** Opens the configured storage and brings its schema up to date. */
export async function openStorage(config: StorageConfig): Promise<Storage> {
  const storage =
    config.kind === 'sqlite'
      ? new SqliteStorage(join(config.dataDir, 'hangar.db'), MIGRATIONS)
      : new PostgresStorage(config.url, MIGRATIONS);
  try {
    await storage.migrate();
  } catch (err) {
    await storage.close().catch(() => undefined);
    throw err;
  }
  return storage;
}
