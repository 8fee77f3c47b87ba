import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATIONS, NewerSchemaError, openStorage, Storage, StorageConfig } from '../../src/engine/storage';
import { PostgresStorage } from '../../src/engine/storage/postgres/postgres-storage';
import { SqliteStorage } from '../../src/engine/storage/sqlite/sqlite-storage';
import { hangar } from '../helpers/cli';
import { freshStorage, FreshStorage, STORAGE_KINDS, tempDir } from '../helpers/storage';

const last = MIGRATIONS[MIGRATIONS.length - 1];
const storageArgs = (config: StorageConfig, dataDir: string) =>
  config.kind === 'postgres' ? ['--storage', 'postgres', '--postgres-url', config.url] : ['--data', dataDir];

/** A storage of an older build: the same code, knowing only the first migrations. */
function olderStorage(config: StorageConfig, known: number): Storage {
  const migrations = MIGRATIONS.slice(0, known);
  return config.kind === 'postgres' ? new PostgresStorage(config.url, migrations) : new SqliteStorage(join(config.dataDir, 'hangar.db'), migrations);
}

test('--dry-run on a new data directory lists every migration and creates nothing', () => {
  const dir = join(tempDir(), 'new');
  const res = hangar(['operator', 'migrate', '--dry-run', '--data', dir]);
  expect(res.code).toBe(0);
  expect(res.stdout).toMatch(new RegExp(`^${MIGRATIONS.length} pending migration\\(s\\): .* does not exist yet`));
  expect(res.stdout).toContain(`  ${last.version}  ${last.name}\n`);
  expect(existsSync(dir)).toBe(false);
});

describe.each(STORAGE_KINDS)('hangar operator migrate on %s', (kind) => {
  let fresh: FreshStorage;
  beforeEach(async () => {
    fresh = await freshStorage(kind);
  });
  afterEach(async () => fresh.cleanup());

  test('lists what an older build\'s database lacks, applies it, then has nothing to do', async () => {
    const older = olderStorage(fresh.config, MIGRATIONS.length - 2);
    await older.migrate();
    await older.close();
    const args = ['operator', 'migrate', ...storageArgs(fresh.config, fresh.dataDir)];

    const dry = hangar([...args, '-dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout.trim().split('\n').slice(1)).toEqual(MIGRATIONS.slice(-2).map((m) => `  ${m.version}  ${m.name}`));
    expect(hangar([...args, '--dry-run']).stdout).toBe(dry.stdout); // nothing was applied

    const run = hangar(args);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^applied 2 migration\(s\) to /);
    const done = hangar([...args, '--dry-run']);
    expect(done.stdout).toMatch(new RegExp(`is up to date \\(migration ${last.version}\\)`));
  });

  test('a database migrated by a newer build is refused, by the server and by migrate', async () => {
    const storage = await openStorage(fresh.config);
    await storage.tx((db) => db.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [last.version + 1, 'from_the_future', 0]));
    await storage.close();
    await expect(openStorage(fresh.config)).rejects.toThrow(NewerSchemaError);
    await expect(openStorage(fresh.config)).rejects.toThrow(
      `the database was migrated by a newer Hangar: this build does not know its migration(s) ${last.version + 1} (from_the_future)`,
    );
    const res = hangar(['operator', 'migrate', '--dry-run', ...storageArgs(fresh.config, fresh.dataDir)]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/newer Hangar.*from_the_future.*restore the backup taken before the upgrade/);
    const server = hangar(['server', '--registry-addr', '127.0.0.1:0', '--secrets-addr', '127.0.0.1:0', '--catalog-addr', '127.0.0.1:0', ...storageArgs(fresh.config, fresh.dataDir)]);
    expect(server.code).toBe(1);
    expect(server.stderr).toMatch(/newer Hangar/);
  });
});

test('reads the storage options of the server\'s configuration file', () => {
  const dir = tempDir();
  const file = join(dir, 'hangar.hcl');
  writeFileSync(file, `data = "${join(dir, 'data')}"\nworkers = 2\nlistener "secrets" { address = "127.0.0.1:1" }\n`);
  const res = hangar(['operator', 'migrate', '-config', file, '-dry-run']);
  expect(res.code).toBe(0);
  expect(res.stdout).toContain(join(dir, 'data', 'hangar.db'));
  const bad = hangar(['operator', 'migrate', '-config', join(__dirname, 'nope.hcl')]);
  expect(bad.code).toBe(2);
});
