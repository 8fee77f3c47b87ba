import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, StatementSync } from 'node:sqlite';
import { BoundedMap } from '../../bounded-map';
import { applyMigrations } from '../apply-migrations';
import { backoff, MAX_TX_ATTEMPTS, UniqueViolation } from '../errors';
import { Db, Migration, Row, SqlValue, Storage, TxOptions } from '../types';
import { ThreadLock } from './thread-lock';

const BUSY_TIMEOUT_MS = 10_000;
/**
 * Each connection's page cache, in KiB (SQLite's default is 2 MiB). A search page of 100 boxes out
 * of 1,100 matches reads about 1,300 pages: with 2 MiB they are read from the OS again on every
 * search (6.1 ms of server CPU per search over 100,000 boxes, against 4.8 ms with 8 MiB). The
 * cache grows only as pages are read, so a small database costs no more.
 */
const PAGE_CACHE_KIB = 8192;
export const STATEMENTS_MAX = 1000;

/**
 * One node:sqlite connection with its prepared statements (every request runs several: parsing the
 * SQL each time showed in profiles), bounded, as texts with `IN (?, ?, …)` lists vary with the input.
 */
class Connection {
  private readonly statements = new BoundedMap<string, StatementSync>(STATEMENTS_MAX);

  /** The statements of a transaction; only used between BEGIN and COMMIT. */
  readonly db: Db = {
    all: async <T>(sql: string, params: readonly SqlValue[] = []) =>
      this.call(() => this.statement(sql).all(...(params as SqlValue[])) as T[]),
    get: async <T>(sql: string, params: readonly SqlValue[] = []) =>
      this.call(() => this.statement(sql).get(...(params as SqlValue[])) as T | undefined),
    run: async (sql: string, params: readonly SqlValue[] = []) =>
      this.call(() => Number(this.statement(sql).run(...(params as SqlValue[])).changes)),
  };

  constructor(readonly sqlite: DatabaseSync) {
    sqlite.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    sqlite.exec(`PRAGMA cache_size = -${PAGE_CACHE_KIB}`);
  }

  run(sql: string): void {
    this.statement(sql).run();
  }

  private call<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      if (/UNIQUE constraint failed/.test(errorMessage(err))) throw new UniqueViolation(err);
      throw err;
    }
  }

  private statement(sql: string): StatementSync {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.sqlite.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}

/** Write transactions committed together at most (group commit), so that none waits long for its commit. */
const GROUP_MAX = 32;

interface PendingWrite {
  readonly fn: (db: Db) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

interface PendingRead extends PendingWrite {
  /** Times it met SQLITE_BUSY so far. */
  attempts: number;
}

/**
 * Transactions waiting for a connection, and the loop that runs them (in groups): the first one
 * queued starts it, it runs until none is left, and one queued as it ends starts it again.
 */
class TxQueue<P> {
  readonly pending: P[] = [];
  private running?: Promise<void>;

  constructor(private readonly drain: () => Promise<void>) {}

  push(tx: P): void {
    this.pending.push(tx);
    this.start();
  }

  /** Resolves once the loop is not running. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private start(): void {
    if (this.running) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.pending.length > 0) this.start();
    });
  }
}

/**
 * SQLite through node:sqlite: one file, WAL so readers never block the writer, and a busy timeout
 * so several processes (parallel custom resources, a running server) can write the same file.
 *
 * node:sqlite is synchronous, so the transactions of one connection are queued one after the other
 * (an async handler inside a transaction must not interleave with another's statements).
 *
 * Read-only transactions run on a second connection, opened read-only, with a queue of its own:
 * they refuse writes as PostgreSQL's READ ONLY transactions do, never wait for a write transaction
 * of this process, and (WAL) see every write committed before they began. (Switching one connection
 * with `PRAGMA query_only`, as before, made SQLite expire every prepared statement at each switch.)
 * The reads asked for in one turn of the event loop share one SQLite transaction (readGroups): a
 * transaction's start and end cost more than a cheap read's statements (the WAL's read lock, taken
 * and released with two `fcntl` calls; the check of the page cache against the WAL).
 *
 * Write transactions are committed in groups: while one runs, the next ones queue, and once it is
 * done the queued ones run in the same SQLite transaction, each inside a SAVEPOINT of its own (its
 * failure rolls back its own writes only), and one COMMIT ends them all. Each caller's promise
 * settles only after that COMMIT, so nobody learns of a write before it is durable. A commit writes
 * every page a transaction changed to the WAL: pages that the writes of a group share (the catalog's
 * index row, a table's last leaf, its indexes' pages) are written once for the group, and a busy
 * server spends a fraction of the time in commits (docs/performance.md). If a group's COMMIT fails, every
 * transaction of the group fails, and `generation` moves on: a transaction of a group may have read
 * the uncommitted writes of the ones before it, so memos keyed by counters read in a transaction
 * (catalog authorizers) include the generation.
 *
 * The threads of one server (`--workers`) each have their connections and take a shared write lock
 * (ThreadLock) before BEGIN IMMEDIATE, so they queue for it without SQLite's sleeping busy handler.
 */
export class SqliteStorage implements Storage {
  readonly dialect = 'sqlite' as const;
  private readonly writer: Connection;
  private readonly reader: Connection;
  private readonly reads = new TxQueue<PendingRead>(() => this.readGroups());
  private readonly writes = new TxQueue<PendingWrite>(() => this.writeGroups());
  private closed = false;
  private failedGroups = 0;

  constructor(
    readonly file: string,
    private readonly migrations: readonly Migration[],
    private readonly writeLock?: ThreadLock,
  ) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // Owner-only from the first byte: SQLite creates the -wal and -shm files with the database file's mode.
    closeSync(openSync(file, 'a', 0o600));
    this.writer = new Connection(new DatabaseSync(file));
    // Switching a new database to WAL takes an exclusive lock that the busy timeout does not wait
    // for: processes opening one fresh file at once retry it.
    for (let waited = 0; ; waited += 20) {
      try {
        this.writer.sqlite.exec('PRAGMA journal_mode = WAL');
        break;
      } catch (err) {
        if (!isBusy(err) || waited >= BUSY_TIMEOUT_MS) throw err;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
      }
    }
    this.writer.sqlite.exec('PRAGMA synchronous = NORMAL');
    this.writer.sqlite.exec('PRAGMA foreign_keys = ON');
    // A savepoint's journal (the pages it changed, to roll back to) in memory, not in a temporary file.
    this.writer.sqlite.exec('PRAGMA temp_store = MEMORY');
    this.reader = new Connection(new DatabaseSync(file, { readOnly: true }));
  }

  /** The groups whose COMMIT failed so far (see above). */
  get generation(): number {
    return this.failedGroups;
  }

  tx<T>(fn: (db: Db) => Promise<T>, options: TxOptions = {}): Promise<T> {
    if (options.readOnly === true) {
      if (this.closed) return Promise.reject(new Error('storage is closed'));
      return new Promise<T>((resolve, reject) => this.reads.push({ fn, resolve: resolve as (value: unknown) => void, reject, attempts: 0 }));
    }
    return new Promise<T>((resolve, reject) => this.writes.push({ fn, resolve: resolve as (value: unknown) => void, reject }));
  }

  /**
   * Runs the queued read transactions, a group per SQLite transaction. Each request's read runs
   * from BEGIN to COMMIT within one turn of the event loop, so reads never queued behind each other:
   * the first group waits for the turn's end, and takes the reads of every request read meanwhile.
   * A group takes the reads queued when it begins and no later one: its snapshot is taken at its
   * first statement, so it holds every write committed before any of them was asked for (one asked
   * for later may follow a write it must see, committed meanwhile by another thread or process).
   */
  private async readGroups(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    while (this.reads.pending.length > 0) {
      const group = this.reads.pending.splice(0, GROUP_MAX);
      if (this.closed) {
        for (const read of group) read.reject(new Error('storage is closed'));
        continue;
      }
      await this.readGroup(group);
    }
  }

  /**
   * One read transaction for several callers, one after the other, each with a Db of its own (as
   * on PostgreSQL: callers may key per-transaction memos on it). A caller's failure is its own,
   * unless SQLite's: then the transaction ends, and the callers after it go back to the queue.
   */
  private async readGroup(group: PendingRead[]): Promise<void> {
    const settled: (() => void)[] = [];
    try {
      this.reader.run('BEGIN DEFERRED');
    } catch (err) {
      // A transaction left open (it should not be) is ended, and this group fails, as a write's does.
      rollback(this.reader);
      for (const read of group) read.reject(err);
      return;
    }
    let i = 0;
    for (; i < group.length; i++) {
      const read = group[i];
      try {
        const result = await read.fn({ ...this.reader.db });
        settled.push(() => read.resolve(result));
      } catch (err) {
        if (!isSqliteError(err)) {
          settled.push(() => read.reject(err));
          continue;
        }
        rollback(this.reader);
        this.reads.pending.unshift(...group.slice(i + 1));
        if (isBusy(err) && read.attempts < MAX_TX_ATTEMPTS) {
          await backoff(read.attempts++);
          this.reads.pending.unshift(read);
        } else {
          settled.push(() => read.reject(err));
        }
        break;
      }
    }
    if (i === group.length) {
      try {
        this.reader.run('COMMIT');
      } catch {
        // Nothing to keep: a read-only transaction that cannot commit is rolled back.
        rollback(this.reader);
      }
    }
    for (const settle of settled) settle();
  }

  /** Runs the queued write transactions, a group per SQLite transaction, until none is left. */
  private async writeGroups(): Promise<void> {
    while (this.writes.pending.length > 0) {
      if (this.closed) {
        for (const write of this.writes.pending.splice(0)) write.reject(new Error('storage is closed'));
        return;
      }
      await this.writeLock?.acquire();
      try {
        await this.writeGroup();
      } finally {
        this.writeLock?.release();
      }
    }
  }

  private async writeGroup(): Promise<void> {
    try {
      await this.begin();
    } catch (err) {
      this.writes.pending.shift()!.reject(err);
      return;
    }
    const done: { write: PendingWrite; result: unknown }[] = [];
    let yielded = false;
    for (;;) {
      // Once the queue is empty, the event loop gets one turn before the COMMIT: a busy server has
      // requests waiting to be read, whose writes then join this group (one thread's requests
      // otherwise never queue behind a transaction, which runs from BEGIN to COMMIT in one turn).
      if (this.writes.pending.length === 0 && !yielded) {
        yielded = true;
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (done.length >= GROUP_MAX || this.writes.pending.length === 0) break;
      const write = this.writes.pending.shift()!;
      for (let attempt = 0; ; attempt++) {
        this.writer.run('SAVEPOINT tx');
        try {
          const result = await write.fn({ ...this.writer.db });
          this.writer.run('RELEASE tx');
          done.push({ write, result });
          break;
        } catch (err) {
          this.writer.run('ROLLBACK TO tx');
          this.writer.run('RELEASE tx');
          if (isBusy(err) && attempt < MAX_TX_ATTEMPTS) {
            await backoff(attempt);
            continue;
          }
          write.reject(err);
          break;
        }
      }
    }
    try {
      this.writer.run('COMMIT');
    } catch (err) {
      this.failedGroups++;
      rollback(this.writer);
      for (const { write } of done) write.reject(err);
      return;
    }
    for (const { write, result } of done) write.resolve(result);
  }

  /** BEGIN IMMEDIATE: the write lock up front, so two processes never deadlock upgrading a read lock. */
  private async begin(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        this.writer.run('BEGIN IMMEDIATE');
        return;
      } catch (err) {
        if (!isBusy(err) || attempt >= MAX_TX_ATTEMPTS) throw err;
        await backoff(attempt);
      }
    }
  }

  async migrate(): Promise<number> {
    // exec, not db.run: a migration may hold several statements.
    return this.tx((db) => applyMigrations(db, this.migrations, this.dialect, (sql) => this.writer.sqlite.exec(sql)));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.writes.idle();
    await this.reads.idle();
    this.closed = true;
    // The writer last: the last connection to close checkpoints the WAL into the database file.
    this.reader.sqlite.close();
    this.writer.sqlite.close();
  }
}

/** Ends a connection's transaction, if one is open (a failed BEGIN or COMMIT may have left none). */
function rollback(connection: Connection): void {
  try {
    connection.run('ROLLBACK');
  } catch {
    // No transaction was open.
  }
}

/** An error of SQLite itself (node:sqlite's code), after which a transaction may have ended. */
function isSqliteError(err: unknown): boolean {
  return (err as { code?: unknown } | null | undefined)?.code === 'ERR_SQLITE_ERROR' || isBusy(err);
}

function isBusy(err: unknown): boolean {
  return /database is locked|SQLITE_BUSY/i.test(errorMessage(err));
}

/**
 * The message of an error of node:sqlite. Not `err instanceof Error`: node:sqlite makes its errors
 * in Node's own realm, so that check is false where the code runs in another (jest's vm contexts).
 */
function errorMessage(err: unknown): string {
  const message = (err as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' ? message : '';
}

/** Used by tests and tools that need a raw look at a row. */
export type { Row };
