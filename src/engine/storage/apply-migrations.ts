import { Db, Migration, Row } from './types';

/**
 * A database that a newer build migrated: this build does not know some of its migrations, so it
 * cannot know what their tables mean. It refuses to start rather than write beside them.
 */
export class NewerSchemaError extends Error {
  constructor(readonly unknown: ReadonlyArray<{ version: number; name: string }>) {
    super(
      `the database was migrated by a newer Hangar: this build does not know its migration(s) ${unknown.map((m) => `${m.version} (${m.name})`).join(', ')}. ` +
        'Run the newer build, or restore the backup taken before the upgrade (docs/operations.md, "Upgrades and rollbacks")',
    );
    this.name = 'NewerSchemaError';
  }
}

const CREATE_TABLE = 'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)';

/** The versions schema_migrations lists; throws NewerSchemaError if one is not in `migrations`. */
async function appliedVersions(db: Db, migrations: readonly Migration[]): Promise<Set<number>> {
  const rows = (await db.all<Row>('SELECT version, name FROM schema_migrations ORDER BY version')).map((r) => ({ version: Number(r.version), name: String(r.name) }));
  const known = new Set(migrations.map((m) => m.version));
  const unknown = rows.filter((r) => !known.has(r.version));
  if (unknown.length > 0) throw new NewerSchemaError(unknown);
  return new Set(rows.map((r) => r.version));
}

/**
 * Applies, inside the caller's transaction, the migrations that schema_migrations does not list yet,
 * in order, recording each; answers how many ran. `exec` runs a migration's (possibly multi-statement)
 * SQL, and `dialect` picks its `postgres`/`sqlite` override.
 */
export async function applyMigrations(
  db: Db,
  migrations: readonly Migration[],
  dialect: 'postgres' | 'sqlite',
  exec: (sql: string) => unknown,
): Promise<number> {
  await exec(CREATE_TABLE);
  const applied = await appliedVersions(db, migrations);
  let count = 0;
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    await exec(migration[dialect] ?? migration.sql);
    await db.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [migration.version, migration.name, Date.now()]);
    count++;
  }
  return count;
}

/** The migrations applyMigrations would apply, without changing anything (a read-only transaction will do). */
export async function pendingMigrations(db: Db, migrations: readonly Migration[], dialect: 'postgres' | 'sqlite'): Promise<Migration[]> {
  const table =
    dialect === 'sqlite'
      ? await db.get("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
      : await db.get("SELECT 1 AS found FROM pg_tables WHERE tablename = 'schema_migrations' AND schemaname = ANY (current_schemas(false))");
  if (!table) return [...migrations];
  const applied = await appliedVersions(db, migrations);
  return migrations.filter((m) => !applied.has(m.version));
}
