import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { openStorage } from '../../../src/engine/storage';
import { MIGRATIONS } from '../../../src/engine/storage/migrations';
import { SqliteStorage } from '../../../src/engine/storage/sqlite/sqlite-storage';
import { ThreadLock } from '../../../src/engine/storage/sqlite/thread-lock';
import { tempDir } from '../../helpers/storage';

/** The write lock the threads of one server (`hangar server --workers N`) share. */
describe('ThreadLock', () => {
  test('a second holder waits without blocking its thread, and gets the lock when it is released', async () => {
    const first = new ThreadLock();
    const second = new ThreadLock(first.buffer);
    await first.acquire();
    let acquired = false;
    const waiting = second.acquire().then(() => (acquired = true));
    // The event loop goes on while the second waits.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(acquired).toBe(false);
    first.release();
    await waiting;
    expect(acquired).toBe(true);
    second.release();
  });

  test('a lock held by a thread that is gone can be taken back', async () => {
    const lock = new ThreadLock();
    // Another thread takes the lock and exits without releasing it.
    const worker = new Worker(
      `const { workerData, threadId } = require('node:worker_threads');
       Atomics.store(new Int32Array(workerData, 0, 1), 0, threadId + 1);`,
      { eval: true, workerData: lock.buffer },
    );
    const id = worker.threadId;
    await new Promise((resolve) => worker.once('exit', resolve));
    let acquired = false;
    const waiting = lock.acquire().then(() => (acquired = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(acquired).toBe(false);
    lock.releaseHeldBy(id + 1); // not the holder: nothing changes
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(acquired).toBe(false);
    lock.releaseHeldBy(id);
    await waiting;
    lock.release();
  });

  test('two storages on one SQLite file queue their writes on the lock instead of blocking in SQLite', async () => {
    const dir = tempDir();
    const lock = new ThreadLock();
    const a = new SqliteStorage(join(dir, 'hangar.db'), MIGRATIONS, new ThreadLock(lock.buffer));
    const b = new SqliteStorage(join(dir, 'hangar.db'), MIGRATIONS, new ThreadLock(lock.buffer));
    try {
      await a.migrate();
      await a.tx((db) => db.run('CREATE TABLE t (n INTEGER)'));
      // A holds the write lock across an await; without the shared lock B's BEGIN IMMEDIATE would
      // block this thread in SQLite's busy handler, and A could never finish.
      let releaseA!: () => void;
      const holding = new Promise<void>((resolve) => (releaseA = resolve));
      const writeA = a.tx(async (db) => {
        await db.run('INSERT INTO t (n) VALUES (1)');
        await holding;
        await db.run('INSERT INTO t (n) VALUES (2)');
      });
      let bDone = false;
      const writeB = b.tx((db) => db.run('INSERT INTO t (n) VALUES (3)')).then(() => (bDone = true));
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(bDone).toBe(false);
      // Reads go on meanwhile (WAL: readers never wait for the writer), and see nothing uncommitted.
      const c = new SqliteStorage(join(dir, 'hangar.db'), MIGRATIONS, new ThreadLock(lock.buffer));
      expect(await c.tx((db) => db.all('SELECT n FROM t'), { readOnly: true })).toEqual([]);
      await c.close();
      releaseA();
      await Promise.all([writeA, writeB]);
      expect(await b.tx((db) => db.all('SELECT n FROM t ORDER BY n'), { readOnly: true })).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    } finally {
      await a.close();
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Without a lock, B's BEGIN IMMEDIATE would hold this thread in SQLite's busy handler for its
  // whole busy timeout (10 s), longer than this test may take.
  test('storages that openStorage opens in one thread on one file share a write lock unasked', async () => {
    const dir = tempDir();
    const a = await openStorage({ kind: 'sqlite', dataDir: dir });
    const b = await openStorage({ kind: 'sqlite', dataDir: join(dir, '.') });
    try {
      let releaseA!: () => void;
      const holding = new Promise<void>((resolve) => (releaseA = resolve));
      const writeA = a.tx(async (db) => {
        await db.run("INSERT INTO settings (name, value) VALUES ('a', '1')");
        await holding;
      });
      let bDone = false;
      const writeB = b.tx((db) => db.run("INSERT INTO settings (name, value) VALUES ('b', '1')")).then(() => (bDone = true));
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(bDone).toBe(false);
      releaseA();
      await Promise.all([writeA, writeB]);
      expect(await b.tx((db) => db.all("SELECT name FROM settings WHERE name IN ('a', 'b') ORDER BY name"), { readOnly: true })).toEqual([{ name: 'a' }, { name: 'b' }]);
    } finally {
      await a.close();
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 5_000);
});
