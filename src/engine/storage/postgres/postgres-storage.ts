import { Client, Pool, PoolClient, types as pgTypes } from 'pg';
import { applyMigrations } from '../apply-migrations';
import { backoff, MAX_TX_ATTEMPTS, UniqueViolation } from '../errors';
import { Db, Migration, SqlValue, Storage, TxOptions } from '../types';

/** Key of the advisory lock that serialises migrations across servers starting at once. */
const MIGRATION_LOCK = 4_271_001;

/** Pooled connections whose session default is READ ONLY (see `readOnlyTx`). */
const READ_ONLY_SESSIONS = new WeakSet<PoolClient>();

/** Pauses before reconnecting a lost listening connection: doubling from the first to the last. */
const LISTEN_RETRY_MS = [100, 5000] as const;

/** BIGINT columns hold epoch milliseconds and counters: well inside Number's exact range. */
const typeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 && format !== 'binary') return (value: string) => Number(value);
    return pgTypes.getTypeParser(oid, format);
  },
} as typeof pgTypes;

/**
 * PostgreSQL through pg: several Hangar servers share one database. Queries use the portable
 * `?` placeholders, rewritten here to `$n` (no SQL of ours has a literal `?`).
 */
export class PostgresStorage implements Storage {
  readonly dialect = 'postgres' as const;
  /** Each transaction commits alone here. */
  readonly generation = 0;
  private readonly pool: Pool;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly connectionString: string,
    private readonly migrations: readonly Migration[],
    maxConnections = 10,
  ) {
    this.pool = new Pool({ connectionString, max: maxConnections, types: typeParsers });
    // An idle client that loses its connection must not crash the process.
    this.pool.on('error', () => undefined);
  }

  async tx<T>(fn: (db: Db) => Promise<T>, options: TxOptions = {}): Promise<T> {
    if (options.readOnly) return this.readOnlyTx(fn);
    for (let attempt = 0; ; attempt++) {
      const client = await this.pool.connect();
      try {
        // READ WRITE said explicitly: the connection's session default may be read-only (below).
        await client.query('BEGIN READ WRITE');
        const result = await fn(connection(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        // READ COMMITTED lets two transactions (two servers) both find a row missing and both insert
        // it. A unique violation that the code did not turn into an answer means the other one won:
        // the next attempt sees its row (SQLite's writers take turns, so this does not happen there).
        if ((isRetryable(err) || err instanceof UniqueViolation) && attempt < MAX_TX_ATTEMPTS) {
          await backoff(attempt);
          continue;
        }
        throw err;
      } finally {
        client.release();
      }
    }
  }

  /**
   * A read-only transaction runs its statements one by one, each in its own implicit transaction,
   * on a connection whose session default is READ ONLY (set once per connection), so a write is
   * still refused. Under READ COMMITTED every statement of a BEGIN ... COMMIT block takes its own
   * snapshot anyway, so the reads see what they saw inside one; the BEGIN and the COMMIT, two round
   * trips of the three or four of a cheap request, are saved.
   */
  private async readOnlyTx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const client = await this.pool.connect();
      try {
        if (!READ_ONLY_SESSIONS.has(client)) {
          await client.query('SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY');
          READ_ONLY_SESSIONS.add(client);
        }
        return await fn(connection(client));
      } catch (err) {
        if (isRetryable(err) && attempt < MAX_TX_ATTEMPTS) {
          await backoff(attempt);
          continue;
        }
        throw err;
      } finally {
        client.release();
      }
    }
  }

  async migrate(): Promise<number> {
    return this.tx(async (db) => {
      await db.run('SELECT pg_advisory_xact_lock(?)', [MIGRATION_LOCK]);
      return applyMigrations(db, this.migrations, this.dialect, (sql) => db.run(sql));
    });
  }

  /**
   * One dedicated connection per channel LISTENs (a pooled one would be handed to transactions).
   * When it is lost (server restart, terminated backend, network), it reconnects with a growing
   * pause and reports the gap.
   */
  listen(channel: string, onMessage: (payload: string) => void, onGap: () => void): () => void {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid channel name "${channel}"`);
    let current: Client | undefined;
    let retry: NodeJS.Timeout | undefined;
    let pause: number = LISTEN_RETRY_MS[0];
    let stopped = false;
    const reconnectLater = (client: Client) => {
      if (stopped || current !== client) return;
      current = undefined;
      void client.end().catch(() => undefined);
      retry = setTimeout(connect, pause);
      retry.unref();
      pause = Math.min(pause * 2, LISTEN_RETRY_MS[1]);
    };
    const connect = () => {
      retry = undefined;
      const client = new Client({ connectionString: this.connectionString });
      current = client;
      client.on('error', () => reconnectLater(client));
      client.on('end', () => reconnectLater(client));
      client.on('notification', (msg) => {
        if (msg.channel === channel) onMessage(msg.payload ?? '');
      });
      client
        .connect()
        .then(() => client.query(`LISTEN ${channel}`))
        .then(() => {
          if (current !== client) return;
          pause = LISTEN_RETRY_MS[0];
          onGap();
        })
        .catch(() => reconnectLater(client));
    };
    const stop = () => {
      stopped = true;
      this.listeners.delete(stop);
      if (retry) clearTimeout(retry);
      void current?.end().catch(() => undefined);
      current = undefined;
    };
    this.listeners.add(stop);
    connect();
    return stop;
  }

  async close(): Promise<void> {
    for (const stop of [...this.listeners]) stop();
    if (this.pool.ended || this.pool.ending) return;
    await this.pool.end();
  }
}

function connection(client: PoolClient): Db {
  const query = async (sql: string, params: readonly SqlValue[]) => {
    try {
      return await client.query(toPositional(sql), params as SqlValue[]);
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new UniqueViolation(err);
      throw err;
    }
  };
  return {
    all: async <T>(sql: string, params: readonly SqlValue[] = []) => (await query(sql, params)).rows as T[],
    get: async <T>(sql: string, params: readonly SqlValue[] = []) => (await query(sql, params)).rows[0] as T | undefined,
    run: async (sql: string, params: readonly SqlValue[] = []) => (await query(sql, params)).rowCount ?? 0,
  };
}

function toPositional(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

function isRetryable(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === '40001' || code === '40P01';
}
