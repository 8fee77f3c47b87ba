import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Storage } from '../../src/engine/storage';

/** The file the engine keeps its SQLite database in, inside its data directory. */
export const SQLITE_FILE = 'hangar.db';

/**
 * What a copy of the database would show an attacker, as one searchable string.
 * SQLite: the bytes of the database file and its WAL (committed rows may not be checkpointed yet),
 * decoded as latin1 so any ASCII secret is found wherever it sits. PostgreSQL: every row of every
 * table of the public schema, as text.
 */
export async function storedText(storage: Storage, dataDir: string): Promise<string> {
  if (storage.dialect === 'sqlite') return sqliteFileText(dataDir);
  return storage.tx(
    async (db) => {
      const tables = await db.all<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
      );
      const rows: string[] = [];
      for (const { name } of tables) {
        const table = await db.all<{ row: string }>(`SELECT t::text AS row FROM "${name}" t`);
        rows.push(...table.map((r) => `${name}: ${r.row}`));
      }
      return rows.join('\n');
    },
    { readOnly: true },
  );
}

/** The raw bytes of the SQLite files of a data directory (database, WAL, shared memory), as latin1. */
export function sqliteFileText(dataDir: string): string {
  return readdirSync(dataDir)
    .filter((name) => name.startsWith(SQLITE_FILE))
    .map((name) => readFileSync(join(dataDir, name)).toString('latin1'))
    .join('\n');
}

/** Opens the SQLite database of a data directory directly, outside the engine; the caller closes it. */
export function openRawSqlite(dataDir: string): DatabaseSync {
  return new DatabaseSync(join(dataDir, SQLITE_FILE));
}
