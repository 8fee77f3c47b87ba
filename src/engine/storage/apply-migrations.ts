import { Db, Migration, Row } from './types';

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
  await exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
  const applied = new Set((await db.all<Row>('SELECT version FROM schema_migrations')).map((r) => Number(r.version)));
  let count = 0;
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    await exec(migration[dialect] ?? migration.sql);
    await db.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [migration.version, migration.name, Date.now()]);
    count++;
  }
  return count;
}
