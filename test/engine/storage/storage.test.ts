import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from 'pg';
import { createCounter, increment, newStorage, readCounter } from './fixtures/counter-worker';
import { sha256Hex } from '../../../src/engine/crypto';
import { Engine } from '../../../src/engine/engine';
import { ROOT_TOKEN_FILE } from '../../../src/engine/root-token';
import { allIn, IN_LIST_MAX, openStorage, Storage, StorageConfig } from '../../../src/engine/storage';
import { UniqueViolation } from '../../../src/engine/storage/errors';
import { MIGRATIONS } from '../../../src/engine/storage/migrations';
import { PostgresStorage } from '../../../src/engine/storage/postgres/postgres-storage';
import { openRawSqlite, SQLITE_FILE, storedText } from '../../helpers/raw-db';
import { ROOT_TOKEN, startTestServer } from '../../helpers/server';
import { FreshStorage, freshStorage, STORAGE_KINDS, tempDir } from '../../helpers/storage';

const WRITERS = 4;
const INCREMENTS = 50;

describe.each(STORAGE_KINDS)('storage (%s)', (kind) => {
  let fresh: Awaited<ReturnType<typeof freshStorage>>;
  let opened: Storage[];

  /** A storage on this test's database, closed after the test. */
  const track = (storage: Storage) => {
    opened.push(storage);
    return storage;
  };
  const open = async () => track(await openStorage(fresh.config));

  beforeEach(async () => {
    fresh = await freshStorage(kind);
    opened = [];
  });
  afterEach(async () => {
    for (const storage of opened) await storage.close();
    await fresh.cleanup();
  });

  // Issue 49: one `IN (?, …)` per value refused more than 32,766 values on SQLite (a 500).
  test('allIn reads a list longer than a statement takes variables, in slices', async () => {
    const storage = await open();
    const values = Array.from({ length: 70_000 }, (_, i) => `box-${i}`);
    await storage.tx((db) => db.run("INSERT INTO registry_owners (id, kind, username, username_lower, created_at, updated_at) VALUES ('box-5', 'user', 'u5', 'u5', 0, 0), ('box-69999', 'user', 'u9', 'u9', 0, 0)"));
    const plain = storage.tx((db) => db.all(`SELECT id FROM registry_owners WHERE id IN (${values.map(() => '?').join(', ')})`, values), { readOnly: true });
    await expect(plain).rejects.toThrow();
    const rows = await storage.tx((db) => allIn(values, (placeholders, slice) => db.all<{ id: string }>(`SELECT id FROM registry_owners WHERE id IN (${placeholders})`, slice)), { readOnly: true });
    expect(rows.map((r) => r.id)).toEqual(['box-5', 'box-69999']);
    expect(IN_LIST_MAX).toBeLessThan(32_766);
  });

  describe('migrations', () => {
    test('a fresh storage reaches the latest version, and migrating again applies nothing', async () => {
      const storage = await open();
      expect(await appliedVersions(storage)).toEqual(MIGRATIONS.map((m) => m.version));
      const boxes = await storage.tx((db) => db.get<{ n: number }>('SELECT COUNT(*) AS n FROM registry_boxes'));
      expect(Number(boxes!.n)).toBe(0);
      expect(await storage.migrate()).toBe(0);
      expect(await appliedVersions(storage)).toEqual(MIGRATIONS.map((m) => m.version));
    });

    test('storages opened at once on one database all succeed and apply each migration once', async () => {
      // SQLite: separate processes, as parallel custom resources are. PostgreSQL: separate pools, as servers are.
      const applied =
        kind === 'sqlite'
          ? (await runWorkers(fresh.config, 4, 0)).map((r) => r.migrated)
          : await Promise.all([1, 2, 3, 4].map(() => track(newStorage(fresh.config)).migrate()));
      expect(applied.reduce((a, b) => a + b, 0)).toBe(MIGRATIONS.length);
      expect(applied.filter((n) => n > 0)).toHaveLength(1);
      expect(await appliedVersions(await open())).toEqual(MIGRATIONS.map((m) => m.version));
    });
  });

  describe('transactions', () => {
    test('a transaction that throws after a write leaves nothing', async () => {
      const storage = await open();
      const failing = storage.tx(async (db) => {
        await putSetting(db, 'half-done', 'x');
        expect(await getSetting(db, 'half-done')).toBe('x');
        throw new Error('boom');
      });
      await expect(failing).rejects.toThrow('boom');
      expect(await storage.tx((db) => getSetting(db, 'half-done'))).toBeUndefined();
    });

    test('committed writes are visible to a second storage instance', async () => {
      const first = await open();
      const second = await open();
      await first.tx((db) => putSetting(db, 'shared', 'from first'));
      expect(await second.tx((db) => getSetting(db, 'shared'), { readOnly: true })).toBe('from first');
    });

    test('a duplicate primary key is a UniqueViolation and rolls the transaction back', async () => {
      const storage = await open();
      await storage.tx((db) => putSetting(db, 'dup', 'one'));
      const duplicate = storage.tx(async (db) => {
        await putSetting(db, 'before-dup', 'x');
        await putSetting(db, 'dup', 'two');
      });
      await expect(duplicate).rejects.toBeInstanceOf(UniqueViolation);
      expect(await storage.tx((db) => getSetting(db, 'dup'))).toBe('one');
      expect(await storage.tx((db) => getSetting(db, 'before-dup'))).toBeUndefined();
      // The storage is usable after the violation.
      await storage.tx((db) => putSetting(db, 'after-dup', 'y'));
      expect(await storage.tx((db) => getSetting(db, 'after-dup'))).toBe('y');
    });

    test('a read-only transaction refuses writes in both dialects, and the next write transaction works', async () => {
      const storage = await open();
      await expect(storage.tx((db) => putSetting(db, 'ro', 'x'), { readOnly: true })).rejects.toThrow(/read-only|readonly/i);
      await storage.tx((db) => putSetting(db, 'rw', 'y'));
      expect(await storage.tx((db) => getSetting(db, 'rw'), { readOnly: true })).toBe('y');
      expect(await storage.tx((db) => getSetting(db, 'ro'))).toBeUndefined();
    });

    test('closing twice is harmless', async () => {
      const storage = await open();
      await storage.close();
      await expect(storage.close()).resolves.toBeUndefined();
    });

    test('a read-only transaction reads committed data without waiting for a writer', async () => {
      const writer = await open();
      const reader = await open();
      await writer.tx((db) => putSetting(db, 'k', 'committed'));

      let release!: () => void;
      let written!: () => void;
      const holding = new Promise<void>((resolve) => (release = resolve));
      const hasWritten = new Promise<void>((resolve) => (written = resolve));
      const writing = writer.tx(async (db) => {
        await db.run('UPDATE settings SET value = ? WHERE name = ?', ['uncommitted', 'k']);
        written();
        await holding;
      });
      await hasWritten;
      expect(await reader.tx((db) => getSetting(db, 'k'), { readOnly: true })).toBe('committed');
      release();
      await writing;
      expect(await reader.tx((db) => getSetting(db, 'k'), { readOnly: true })).toBe('uncommitted');
    });
  });

  describe('concurrent writers', () => {
    test(`${WRITERS} writers doing ${INCREMENTS} read-modify-write transactions each lose no update`, async () => {
      const storage = await open();
      await createCounter(storage);
      if (kind === 'sqlite') {
        // Separate processes on one file: the case WAL and the busy timeout are there for.
        await runWorkers(fresh.config, WRITERS, INCREMENTS);
      } else {
        const writers = Array.from({ length: WRITERS }, () => track(newStorage(fresh.config)));
        await Promise.all(
          writers.map(async (writer) => {
            for (let i = 0; i < INCREMENTS; i++) await increment(writer);
          }),
        );
      }
      expect(await readCounter(storage)).toBe(WRITERS * INCREMENTS);
    });
  });

  describe('secrets at rest', () => {
    test('the root token is stored only as its SHA-256', async () => {
      const engine = await Engine.open({ storage: fresh.config, dataDir: fresh.dataDir, devRootToken: 'abc' });
      try {
        const stored = await storedText(engine.storage, fresh.dataDir);
        expect(stored).toContain(sha256Hex('abc'));
        expect(stored).not.toContain('abc');
      } finally {
        await engine.close();
      }
      if (kind === 'sqlite') expect(await storedText(await open(), fresh.dataDir)).not.toContain('abc');
    });

    test('a generated root token is written only to the root-token file, with mode 0600', async () => {
      const engine = await Engine.open({ storage: fresh.config, dataDir: fresh.dataDir, createRootToken: true });
      try {
        const token = engine.createdRootToken!;
        expect(token).toBeTruthy();
        const file = join(fresh.dataDir, ROOT_TOKEN_FILE);
        expect(readFileSync(file, 'utf8').trim()).toBe(token);
        expect(permissions(file)).toBe('600');
        const stored = await storedText(engine.storage, fresh.dataDir);
        expect(stored).toContain(sha256Hex(token));
        expect(stored).not.toContain(token);
      } finally {
        await engine.close();
      }
    });

    test('registry passwords are stored only as scrypt hashes', async () => {
      const server = await startTestServer(kind);
      try {
        const created = await server.call('registry', 'POST', '/api/v1/admin/users', {
          body: { user: { username: 'hunter', password: 'hunter2-secret', email: 'hunter@example.com' } },
          headers: { authorization: `Bearer ${ROOT_TOKEN}` },
        });
        expect(created.status).toBe(200);
        const row = await server.engine.storage.tx((db) =>
          db.get<{ password_hash: string }>("SELECT password_hash FROM registry_owners WHERE username = 'hunter'"),
        );
        expect(row!.password_hash).toMatch(/^scrypt\$/);
        const stored = await storedText(server.engine.storage, server.dataDir);
        expect(stored).toContain(row!.password_hash);
        expect(stored).not.toContain('hunter2-secret');
      } finally {
        await server.close();
      }
    });
  });
});

describe('SQLite file', () => {
  let base: string;
  let dataDir: string;
  let storage: Storage | undefined;

  beforeEach(() => {
    base = tempDir();
    dataDir = join(base, 'nested', 'data');
  });
  afterEach(async () => {
    await storage?.close();
    storage = undefined;
    rmSync(base, { recursive: true, force: true });
  });

  test('is created in the data directory (made if missing, mode 0700) and uses WAL and a busy timeout', async () => {
    storage = await openStorage({ kind: 'sqlite', dataDir });
    expect(existsSync(join(dataDir, SQLITE_FILE))).toBe(true);
    expect(permissions(dataDir)).toBe('700');
    expect(await storage.tx((db) => db.get('PRAGMA journal_mode'))).toEqual({ journal_mode: 'wal' });
    const busy = await storage.tx((db) => db.get<{ timeout: number }>('PRAGMA busy_timeout'));
    expect(Number(busy!.timeout)).toBeGreaterThan(0);
    // WAL is a property of the file: any other connection (another process) sees it too.
    const raw = openRawSqlite(dataDir);
    try {
      expect(raw.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    } finally {
      raw.close();
    }
  });
});

const describeIfPostgres = STORAGE_KINDS.includes('postgres') ? describe : describe.skip;

describeIfPostgres('PostgreSQL prepared statements and lanes', () => {
  let fresh: FreshStorage;
  let storage: PostgresStorage;
  /** A second connection, as another server (or its migration) would have. */
  let other: Client;
  /** More storages on the test's database, closed after it. */
  const opened: PostgresStorage[] = [];
  let url: string;

  beforeEach(async () => {
    fresh = await freshStorage('postgres');
    url = fresh.config.kind === 'postgres' ? fresh.config.url : '';
    // One connection: the one whose statements the tests make stale.
    storage = new PostgresStorage(url, [], 1);
    other = new Client({ connectionString: url });
    await other.connect();
    await other.query("CREATE TABLE prepared_rows (name TEXT PRIMARY KEY); INSERT INTO prepared_rows VALUES ('a')");
  });
  afterEach(async () => {
    for (const more of opened.splice(0)) await more.close();
    await other.end();
    await storage.close();
    await fresh.cleanup();
  });

  const rows = (readOnly: boolean) => storage.tx((db) => db.all<Record<string, unknown>>('SELECT * FROM prepared_rows WHERE name = ?', ['a']), { readOnly });
  const prepared = () =>
    storage.tx((db) => db.all<{ name: string }>('SELECT name FROM pg_prepared_statements WHERE statement NOT LIKE ?', ['%pg_prepared%']), { readOnly: true });

  test('a statement is prepared by name once per connection', async () => {
    for (const readOnly of [true, false, true]) expect(await rows(readOnly)).toEqual([{ name: 'a' }]);
    expect(await prepared()).toEqual([{ name: expect.stringMatching(/^hangar_0_\d+$/) }]);
  });

  test.each([true, false])('a column added under a prepared SELECT * is answered with it (read-only: %s)', async (readOnly) => {
    expect(await rows(readOnly)).toEqual([{ name: 'a' }]);
    await other.query('ALTER TABLE prepared_rows ADD COLUMN added INTEGER NOT NULL DEFAULT 7');
    expect(await rows(readOnly)).toEqual([{ name: 'a', added: 7 }]);
    expect(await rows(!readOnly)).toEqual([{ name: 'a', added: 7 }]);
  });

  test('a connection that loses its prepared statements (a pooler in transaction mode) ends their use', async () => {
    await rows(false);
    // What a pooler handing the next transaction to another server connection looks like.
    await storage.tx((db) => db.run('DEALLOCATE ALL'));
    expect(await rows(false)).toEqual([{ name: 'a' }]);
    expect(await rows(true)).toEqual([{ name: 'a' }]);
    expect(await prepared()).toEqual([]);
  });

  test('the write transactions of one lane enter two at a time; others and reads do not wait for them', async () => {
    const wide = new PostgresStorage(url, [], 10);
    opened.push(wide);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const entered: string[] = [];
    const write = (name: string, lane?: string) =>
      wide.tx(
        async (db) => {
          entered.push(name);
          await db.run('INSERT INTO prepared_rows (name) VALUES (?)', [name]);
          await held;
        },
        { lane },
      );
    const laned = ['l1', 'l2', 'l3', 'l4'].map((name) => write(name, 'rows'));
    const free = write('free');
    try {
      await waitFor(() => entered.length === 3);
      expect(entered.sort()).toEqual(['free', 'l1', 'l2']);
      expect(await wide.tx((db) => db.get<{ n: number }>('SELECT COUNT(*) AS n FROM prepared_rows'), { readOnly: true })).toEqual({ n: 1 });
    } finally {
      release();
      await Promise.all([...laned, free]);
    }
    expect(entered.sort()).toEqual(['free', 'l1', 'l2', 'l3', 'l4']);
  });

  test('a failing transaction gives its place in the lane to the next', async () => {
    const failing = [1, 2].map(() => storage.tx(() => Promise.reject(new Error('boom')), { lane: 'rows' }));
    const next = storage.tx((db) => db.run('INSERT INTO prepared_rows (name) VALUES (?)', ['after']), { lane: 'rows' });
    for (const f of failing) await expect(f).rejects.toThrow('boom');
    await expect(next).resolves.toBe(1);
  });
});

/** Resolves once `done()` holds (polled every 10 ms, for at most 5 s). */
async function waitFor(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 10) {
    if (waited > 5000) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('SQLite transaction groups', () => {
  let dataDir: string;
  let storage: Storage;

  beforeEach(async () => {
    dataDir = tempDir();
    storage = await openStorage({ kind: 'sqlite', dataDir });
  });
  afterEach(async () => {
    await storage.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe('group commit', () => {
    let commits: { count: number };

    beforeEach(() => {
      commits = counting(storage, 'writer', 'COMMIT');
    });

    test('write transactions queued while one runs commit together; a failing one rolls back alone', async () => {
      const raw = openRawSqlite(dataDir);
      const seen: (string | undefined)[] = [];
      try {
        const writes = ['a', 'b', 'fails', 'c'].map((name) =>
          storage
            .tx(async (db) => {
              await putSetting(db, `group-${name}`, name);
              if (name === 'fails') throw new Error('boom');
              return name;
            })
          // A caller learns of its write only once it is committed: another connection sees it then.
            .then((value) => {
              seen.push((raw.prepare('SELECT value FROM settings WHERE name = ?').get(`group-${value}`) as { value: string } | undefined)?.value);
              return value;
            }),
        );
        const results = await Promise.allSettled(writes);
        expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['a', 'b', 'boom', 'c']);
        expect(seen).toEqual(['a', 'b', 'c']);
        expect(commits.count).toBe(1);
        expect(raw.prepare("SELECT name FROM settings WHERE name LIKE 'group-%' ORDER BY name").all()).toEqual([
          { name: 'group-a' }, { name: 'group-b' }, { name: 'group-c' },
        ]);
      } finally {
        raw.close();
      }
    });

    test('a group whose COMMIT fails fails every one of its transactions and moves the generation on', async () => {
      await storage.tx(async (db) => {
        await db.run('CREATE TABLE parents (id INTEGER PRIMARY KEY)');
        await db.run('CREATE TABLE children (parent INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)');
      });
      const generation = storage.generation;
      // The first leaves a deferred foreign key unmet, checked at COMMIT only; the second is fine alone.
      const broken = storage.tx((db) => db.run('INSERT INTO children (parent) VALUES (42)'));
      const fine = storage.tx((db) => putSetting(db, 'group-fine', 'x'));
      await expect(broken).rejects.toThrow(/FOREIGN KEY/);
      await expect(fine).rejects.toThrow(/FOREIGN KEY/);
      expect(storage.generation).toBe(generation + 1);
      expect(await storage.tx((db) => getSetting(db, 'group-fine'), { readOnly: true })).toBeUndefined();
      // The next transaction commits as usual.
      await storage.tx((db) => putSetting(db, 'group-after', 'y'));
      expect(await storage.tx((db) => getSetting(db, 'group-after'), { readOnly: true })).toBe('y');
    });

    test('a read-only transaction does not wait for a write transaction in progress', async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const write = storage.tx(async (db) => {
        await putSetting(db, 'group-slow', 'x');
        await held;
      });
      expect(await storage.tx((db) => getSetting(db, 'group-slow'), { readOnly: true })).toBeUndefined();
      release();
      await write;
      expect(await storage.tx((db) => getSetting(db, 'group-slow'), { readOnly: true })).toBe('x');
    });
  });

  describe('read groups', () => {
    let begins: { count: number };

    beforeEach(async () => {
      await storage.tx((db) => putSetting(db, 'read-x', '1'));
      begins = counting(storage, 'reader', 'BEGIN DEFERRED');
    });

    const read = (fn: (db: Db) => Promise<unknown>) => storage.tx(fn, { readOnly: true });

    test('reads asked for together share one transaction; a caller\'s failure is its own, and SQLite\'s ends the group', async () => {
      const results = await Promise.allSettled([
        read((db) => getSetting(db, 'read-x')),
        read(async () => {
          throw new Error('boom');
        }),
        read((db) => getSetting(db, 'read-x')),
        read((db) => db.get('SELECT * FROM no_such_table')),
        read((db) => getSetting(db, 'read-x')),
      ]);
      expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([
        '1', 'boom', '1', expect.stringMatching(/no such table/), '1',
      ]);
      // The first four in one transaction; after SQLite's error the last ran in a new one.
      expect(begins.count).toBe(2);
    });

    test('a group whose BEGIN fails fails its reads, and the next group reads as usual', async () => {
      const reader = (storage as unknown as { reader: { run(sql: string): void } }).reader;
      // A transaction left open on the read connection: the next BEGIN fails.
      reader.run('BEGIN DEFERRED');
      await expect(read((db) => getSetting(db, 'read-x'))).rejects.toThrow(/within a transaction/);
      expect(await read((db) => getSetting(db, 'read-x'))).toBe('1');
    });

    test('a read asked for while a group runs sees every write committed before it was asked for', async () => {
      const raw = openRawSqlite(dataDir);
      try {
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        const first = read(async (db) => {
          const before = await getSetting(db, 'read-x');
          await held;
          return before;
        });
        // Asked for with the first: same group, same snapshot.
        const mate = read(async (db) => getSetting(db, 'read-x'));
        await new Promise((resolve) => setImmediate(resolve));
        // Committed by another connection while the group runs, then a read is asked for.
        raw.prepare("UPDATE settings SET value = '2' WHERE name = 'read-x'").run();
        const after = read((db) => getSetting(db, 'read-x'));
        release();
        expect(await Promise.all([first, mate, after])).toEqual(['1', '1', '2']);
        expect(begins.count).toBe(2);
      } finally {
        raw.close();
      }
    });
  });
});

// ---------------------------------------------------------------------------------------------

type Db = Parameters<Parameters<Storage['tx']>[0]>[0];

/** Counts the statements `sql` that one of a SQLite storage's connections runs from now on (its transactions' BEGINs and COMMITs). */
function counting(storage: Storage, connection: 'reader' | 'writer', sql: string): { count: number } {
  const counter = { count: 0 };
  const target = (storage as unknown as Record<typeof connection, { run(sql: string): void }>)[connection];
  const run = target.run.bind(target);
  target.run = (statement: string) => {
    if (statement === sql) counter.count++;
    run(statement);
  };
  return counter;
}

/** The permission bits of a file, in octal: '600'. */
function permissions(path: string): string {
  return statSync(path).mode.toString(8).slice(-3);
}

async function appliedVersions(storage: Storage): Promise<number[]> {
  const rows = await storage.tx((db) => db.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version'));
  return rows.map((r) => Number(r.version));
}

async function putSetting(db: Db, name: string, value: string): Promise<void> {
  await db.run('INSERT INTO settings (name, value) VALUES (?, ?)', [name, value]);
}

async function getSetting(db: Db, name: string): Promise<string | undefined> {
  return (await db.get<{ value: string }>('SELECT value FROM settings WHERE name = ?', [name]))?.value;
}

const WORKER = join(__dirname, 'fixtures', 'counter-worker.ts');

/**
 * Runs `count` worker processes on one database, released together once all have loaded, and
 * resolves to what each printed. Rejects with the worker's stderr when one fails.
 */
async function runWorkers(config: StorageConfig, count: number, increments: number): Promise<{ migrated: number }[]> {
  const workers = Array.from({ length: count }, () =>
    spawn(process.execPath, ['--require', require.resolve('ts-node/register/transpile-only'), WORKER, JSON.stringify(config), String(increments)], {
      cwd: join(__dirname, '..', '..', '..'),
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  const results = workers.map(collect);
  await Promise.all(results.map((r) => r.ready));
  for (const worker of workers) worker.stdin!.write('go\n');
  return Promise.all(results.map((r) => r.done));
}

function collect(worker: ChildProcess): { ready: Promise<void>; done: Promise<{ migrated: number }> } {
  const lines: string[] = [];
  let stderr = '';
  worker.stderr!.on('data', (chunk) => (stderr += chunk));
  const output = createInterface({ input: worker.stdout! });
  output.on('line', (line) => lines.push(line));
  const exited = new Promise<number | null>((resolve) => worker.on('close', resolve));
  const ready = new Promise<void>((resolve, reject) => {
    output.on('line', (line) => line === 'ready' && resolve());
    void exited.then(() => reject(new Error(`worker exited before it was ready:\n${stderr}`)));
  });
  const done = exited.then((code) => {
    if (code !== 0) throw new Error(`worker exited with ${code}:\n${stderr}`);
    return JSON.parse(lines[lines.length - 1]) as { migrated: number };
  });
  return { ready, done };
}
