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

/**
 * SQLite through node:sqlite: one file, WAL so readers never block the writer, and a busy timeout
 * so several processes (parallel custom resources, a running server) can write the same file.
 *
 * node:sqlite is synchronous, so transactions of this process are queued one after the other
 * (an async handler inside a transaction must not interleave with another's statements).
 *
 * The threads of one server (`--workers`) each have their connections and take a shared write lock
 * (ThreadLock) before BEGIN IMMEDIATE, so they queue for it without SQLite's sleeping busy handler.
 *
 * Read-only transactions run on a second connection, opened read-only: they refuse writes as
 * PostgreSQL's READ ONLY transactions do. (Switching one connection with `PRAGMA query_only`, as
 * before, made SQLite expire every prepared statement at each switch, and a mixed load re-parsed
 * its statements all the time.) In WAL mode a read transaction on it sees every committed write.
 */
export class SqliteStorage implements Storage {
  readonly dialect = 'sqlite' as const;
  private readonly writer: Connection;
  private readonly reader: Connection;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

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
    this.reader = new Connection(new DatabaseSync(file, { readOnly: true }));
  }

  tx<T>(fn: (db: Db) => Promise<T>, options: TxOptions = {}): Promise<T> {
    const run = this.queue.then(() => this.runTx(fn, options));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async runTx<T>(fn: (db: Db) => Promise<T>, options: TxOptions): Promise<T> {
    if (this.closed) throw new Error('storage is closed');
    const readOnly = options.readOnly === true;
    if (readOnly || !this.writeLock) return this.runAttempts(fn, readOnly);
    await this.writeLock.acquire();
    try {
      return await this.runAttempts(fn, readOnly);
    } finally {
      this.writeLock.release();
    }
  }

  private async runAttempts<T>(fn: (db: Db) => Promise<T>, readOnly: boolean): Promise<T> {
    const connection = readOnly ? this.reader : this.writer;
    for (let attempt = 0; ; attempt++) {
      try {
        // IMMEDIATE takes the write lock up front, so two processes never deadlock upgrading a read lock.
        connection.run(readOnly ? 'BEGIN DEFERRED' : 'BEGIN IMMEDIATE');
      } catch (err) {
        if (isBusy(err) && attempt < MAX_TX_ATTEMPTS) {
          await backoff(attempt);
          continue;
        }
        throw err;
      }
      try {
        // A Db object of its own per transaction, as on PostgreSQL: callers may key per-transaction memos on it.
        const result = await fn({ ...connection.db });
        connection.run('COMMIT');
        return result;
      } catch (err) {
        connection.run('ROLLBACK');
        if (isBusy(err) && attempt < MAX_TX_ATTEMPTS) {
          await backoff(attempt);
          continue;
        }
        throw err;
      }
    }
  }

  async migrate(): Promise<number> {
    // exec, not db.run: a migration may hold several statements.
    return this.tx((db) => applyMigrations(db, this.migrations, this.dialect, (sql) => this.writer.sqlite.exec(sql)));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.queue;
    this.closed = true;
    // The writer last: the last connection to close checkpoints the WAL into the database file.
    this.reader.sqlite.close();
    this.writer.sqlite.close();
  }
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
