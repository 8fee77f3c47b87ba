import type { SqlValue } from '../storage';

/**
 * Tables a backup leaves out, although the schema has them: the record of applied migrations (a
 * backup records its schema version instead), the holds of running backups, and the box files
 * waiting for removal (their files are not in the backup either). Every other table is in it,
 * found in the schema itself, so that a new table is backed up without a change here.
 */
export const INTERNAL_TABLES: ReadonlySet<string> = new Set(['schema_migrations', 'backup_holds', 'registry_blob_garbage']);

/** The column that names a box file (registry providers and uploads): a backup copies the files its rows name. */
export const BLOB_COLUMN = 'blob_id';

export interface TableShape {
  readonly name: string;
  /** Its stored columns in order; columns computed from others (generated, FTS) are not. */
  readonly columns: readonly string[];
}

type All = <T>(sql: string, params?: readonly SqlValue[]) => Promise<T[]>;

/**
 * Hangar's tables in dependency order (a table after those its foreign keys point to), as the
 * database's own catalog lists them: SQLite's pragma_table_list (virtual and shadow tables, such as
 * the registry's full-text index, are not tables of data), PostgreSQL's information_schema (the
 * current schema's base tables).
 */
export async function listTables(all: All, dialect: 'sqlite' | 'postgres'): Promise<TableShape[]> {
  const shapes = new Map<string, { columns: string[]; parents: string[] }>();
  if (dialect === 'sqlite') {
    const tables = await all<{ name: string }>(
      "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    );
    for (const { name } of tables) {
      // hidden: 0 a stored column, 2 and 3 generated ones.
      const columns = await all<{ name: string }>('SELECT name FROM pragma_table_xinfo(?) WHERE hidden = 0 ORDER BY cid', [name]);
      const parents = await all<{ parent: string }>('SELECT DISTINCT "table" AS parent FROM pragma_foreign_key_list(?)', [name]);
      shapes.set(name, { columns: columns.map((c) => c.name), parents: parents.map((p) => p.parent) });
    }
  } else {
    const tables = await all<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
    );
    for (const { name } of tables) {
      const columns = await all<{ name: string }>(
        `SELECT column_name AS name FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name = ? AND is_generated = 'NEVER' ORDER BY ordinal_position`,
        [name],
      );
      const parents = await all<{ parent: string }>(
        `SELECT DISTINCT p.relname AS parent FROM pg_constraint c
         JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class p ON p.oid = c.confrelid JOIN pg_namespace n ON n.oid = t.relnamespace
         WHERE c.contype = 'f' AND t.relname = ? AND n.nspname = current_schema()`,
        [name],
      );
      shapes.set(name, { columns: columns.map((c) => c.name), parents: parents.map((p) => p.parent) });
    }
  }
  const ordered: TableShape[] = [];
  const placed = new Set<string>();
  const place = (name: string, path: string[]) => {
    if (placed.has(name) || path.includes(name)) return;
    const shape = shapes.get(name)!;
    // A table pointing at itself orders nothing here.
    for (const parent of shape.parents) if (parent !== name && shapes.has(parent)) place(parent, [...path, name]);
    placed.add(name);
    if (!INTERNAL_TABLES.has(name)) ordered.push({ name, columns: shape.columns });
  };
  for (const name of shapes.keys()) place(name, []);
  return ordered;
}

/** The newest migration applied to a database; 0 when it has none (no schema yet). */
export async function schemaVersion(all: All, dialect: 'sqlite' | 'postgres'): Promise<number> {
  const exists =
    dialect === 'sqlite'
      ? await all("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
      : await all("SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'schema_migrations'");
  if (exists.length === 0) return 0;
  const [row] = await all<{ version: number | string | null }>('SELECT MAX(version) AS version FROM schema_migrations');
  return Number(row?.version ?? 0);
}

/** An identifier of the schema, quoted for both dialects. */
export function quoted(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
