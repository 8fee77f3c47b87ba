import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, StatementSync } from 'node:sqlite';
import { BoundedMap } from '../../bounded-map';
import { applyMigrations } from '../apply-migrations';
import { backoff, MAX_TX_ATTEMPTS, UniqueViolation } from '../errors';
import { Db, Migration, Row, SqlValue, Storage, TxOptions } from '../types';

const BUSY_TIMEOUT_MS = 10_000;
export const STATEMENTS_MAX = 1000;

/**
 * SQLite through node:sqlite: one file, WAL so readers never block the writer, and a busy timeout
 * so several processes (parallel custom resources, a running server) can write the same file.
 *
 * node:sqlite is synchronous, so transactions of this process are queued one after the other
 * (an async handler inside a transaction must not interleave with another's statements).
 */
export class SqliteStorage implements Storage {
  readonly dialect = 'sqlite' as const;
  private readonly db: DatabaseSync;
  /** Prepared statements by SQL text; bounded, as texts with `IN (?, ?, …)` lists vary with the input. */
  private readonly statements = new BoundedMap<string, StatementSync>(STATEMENTS_MAX);
  private queue: Promise<unknown> = Promise.resolve();
  /** The connection's query_only setting, once set by `begin`. */
  private queryOnly?: boolean;
  private closed = false;

  /** The statements of a transaction; only used between BEGIN and COMMIT. */
  private readonly connection: Db = {
    all: async <T>(sql: string, params: readonly SqlValue[] = []) =>
      this.call(() => this.statement(sql).all(...(params as SqlValue[])) as T[]),
    get: async <T>(sql: string, params: readonly SqlValue[] = []) =>
      this.call(() => this.statement(sql).get(...(params as SqlValue[])) as T | undefined),
    run: async (sql: string, params: readonly SqlValue[] = []) =>
      this.call(() => Number(this.statement(sql).run(...(params as SqlValue[])).changes)),
  };

  constructor(readonly file: string, private readonly migrations: readonly Migration[]) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // Owner-only from the first byte: SQLite creates the -wal and -shm files with the database file's mode.
    closeSync(openSync(file, 'a', 0o600));
    this.db = new DatabaseSync(file);
    this.db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Switching a new database to WAL takes an exclusive lock that the busy timeout does not wait
    // for: processes opening one fresh file at once retry it.
    for (let waited = 0; ; waited += 20) {
      try {
        this.db.exec('PRAGMA journal_mode = WAL');
        break;
      } catch (err) {
        if (!isBusy(err) || waited >= BUSY_TIMEOUT_MS) throw err;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
      }
    }
    this.db.exec('PRAGMA synchronous = NORMAL');
    this.db.exec('PRAGMA foreign_keys = ON');
  }

  tx<T>(fn: (db: Db) => Promise<T>, options: TxOptions = {}): Promise<T> {
    const run = this.queue.then(() => this.runTx(fn, options));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async runTx<T>(fn: (db: Db) => Promise<T>, options: TxOptions): Promise<T> {
    if (this.closed) throw new Error('storage is closed');
    for (let attempt = 0; ; attempt++) {
      try {
        // A read-only transaction refuses writes as PostgreSQL's BEGIN READ ONLY does (query_only).
        // IMMEDIATE takes the write lock up front, so two processes never deadlock upgrading a read lock.
        this.begin(options.readOnly === true);
      } catch (err) {
        if (isBusy(err) && attempt < MAX_TX_ATTEMPTS) {
          await backoff(attempt);
          continue;
        }
        throw err;
      }
      try {
        // A Db object of its own per transaction, as on PostgreSQL: callers may key per-transaction memos on it.
        const result = await fn({ ...this.connection });
        this.statement('COMMIT').run();
        return result;
      } catch (err) {
        this.statement('ROLLBACK').run();
        if (isBusy(err) && attempt < MAX_TX_ATTEMPTS) {
          await backoff(attempt);
          continue;
        }
        throw err;
      }
    }
  }


  /**
   * Starts a transaction with prepared statements (every request runs at least one: parsing the
   * SQL each time showed in profiles), setting query_only only when it differs from the last one's.
   */
  private begin(readOnly: boolean): void {
    if (this.queryOnly !== readOnly) {
      this.statement(`PRAGMA query_only = ${readOnly ? 1 : 0}`).run();
      this.queryOnly = readOnly;
    }
    this.statement(readOnly ? 'BEGIN DEFERRED' : 'BEGIN IMMEDIATE').run();
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
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  async migrate(): Promise<number> {
    // exec, not db.run: a migration may hold several statements.
    return this.tx((db) => applyMigrations(db, this.migrations, this.dialect, (sql) => this.db.exec(sql)));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.queue;
    this.closed = true;
    this.db.close();
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
