import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, StatementSync } from 'node:sqlite';
import type { Client as PgClient } from 'pg';
import type { SqlValue, StorageConfig } from '../storage';

/** The SQLite file of a data directory (as the storage opens it). */
export const SQLITE_FILE = 'hangar.db';

/** How long a SQLite write waits for the lock, at most, and its pause between attempts. */
const BUSY_WAIT_MS = 10_000;
const BUSY_PAUSE_MS = 10;

/** Rows read from a snapshot at a time: a bounded batch, whatever the table's size. */
const BATCH_ROWS = 500;

/**
 * A connection of its own to Hangar's database, beside the storage layer (whose transactions are
 * request-sized): a backup reads every table in one long read-only snapshot, a restore checks the
 * target before anything opens it. Each statement outside `beginSnapshot`..`endSnapshot` commits alone.
 */
export interface RawConnection {
  readonly dialect: 'sqlite' | 'postgres';
  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  run(sql: string, params?: readonly SqlValue[]): Promise<void>;
  /** Begins a read-only transaction whose reads all see one moment (its first read). */
  beginSnapshot(): Promise<void>;
  /** The rows of a SELECT as arrays in column order, a bounded batch at a time, with exact integers. */
  batches(sql: string): AsyncIterable<SqlValue[][]>;
  endSnapshot(): Promise<void>;
  close(): Promise<void>;
}

/** Opens a raw connection; undefined when the SQLite database does not exist. */
export async function openRawConnection(config: StorageConfig, dataDir: string): Promise<RawConnection | undefined> {
  if (config.kind === 'sqlite') {
    const file = join(dataDir, SQLITE_FILE);
    return existsSync(file) ? new SqliteConnection(file) : undefined;
  }
  const { Client } = require('pg') as typeof import('pg');
  // pg's own parsers (BIGINT as text, made exact in `batches`), not the storage's (BIGINT as Number).
  const client = new Client({ connectionString: config.url });
  client.on('error', () => undefined);
  await client.connect();
  return new PostgresConnection(client);
}

/** A row value as a backup keeps it: integers exact (a number while it is safe, else its digits). */
function exact(value: unknown): SqlValue {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  return value as SqlValue;
}

class SqliteConnection implements RawConnection {
  readonly dialect = 'sqlite' as const;
  private readonly db: DatabaseSync;

  constructor(file: string) {
    // No busy timeout: SQLite's busy handler sleeps, blocking the thread, whose other work (a server
    // in the same process, in tests) may be what holds the lock. A busy write waits here instead.
    this.db = new DatabaseSync(file);
  }

  async all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return this.db.prepare(sql).all(...(params as SqlValue[])) as T[];
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<void> {
    for (let waited = 0; ; waited += BUSY_PAUSE_MS) {
      try {
        this.db.prepare(sql).run(...(params as SqlValue[]));
        return;
      } catch (err) {
        if (!/database is locked|SQLITE_BUSY/i.test((err as Error).message) || waited >= BUSY_WAIT_MS) throw err;
        await new Promise((resolve) => setTimeout(resolve, BUSY_PAUSE_MS));
      }
    }
  }

  async beginSnapshot(): Promise<void> {
    // WAL: a read transaction sees the database as of its first read, while writers go on.
    this.db.exec('BEGIN DEFERRED');
  }

  async *batches(sql: string): AsyncIterable<SqlValue[][]> {
    const statement: StatementSync = this.db.prepare(sql);
    statement.setReadBigInts(true);
    // Rows as arrays where node:sqlite can (Node.js >= 24): no object with named fields per row.
    const arrays = typeof statement.setReturnArrays === 'function';
    if (arrays) statement.setReturnArrays(true);
    let batch: SqlValue[][] = [];
    for (const row of statement.iterate()) {
      batch.push((arrays ? (row as unknown as unknown[]) : Object.values(row)).map(exact));
      if (batch.length >= BATCH_ROWS) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  async endSnapshot(): Promise<void> {
    this.db.exec('COMMIT');
  }

  async close(): Promise<void> {
    if (this.db.isTransaction) this.db.exec('ROLLBACK');
    this.db.close();
  }
}

class PostgresConnection implements RawConnection {
  readonly dialect = 'postgres' as const;

  constructor(private readonly client: PgClient) {}

  async all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return (await this.client.query(toPositional(sql), params as SqlValue[])).rows as T[];
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<void> {
    await this.client.query(toPositional(sql), params as SqlValue[]);
  }

  async beginSnapshot(): Promise<void> {
    await this.client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  }

  async *batches(sql: string): AsyncIterable<SqlValue[][]> {
    // A cursor: the table streams through in batches instead of arriving whole.
    await this.client.query(`DECLARE hangar_backup NO SCROLL CURSOR FOR ${sql}`);
    const int8 = 20;
    try {
      for (;;) {
        const result = await this.client.query({ text: `FETCH ${BATCH_ROWS} FROM hangar_backup`, rowMode: 'array' });
        if (result.rows.length === 0) break;
        const bigints = result.fields.map((f) => f.dataTypeID === int8);
        yield (result.rows as unknown[][]).map((row) =>
          row.map((v, i) => (bigints[i] && typeof v === 'string' ? exact(BigInt(v)) : (v as SqlValue))),
        );
      }
    } finally {
      await this.client.query('CLOSE hangar_backup');
    }
  }

  async endSnapshot(): Promise<void> {
    await this.client.query('COMMIT');
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }
}

function toPositional(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
