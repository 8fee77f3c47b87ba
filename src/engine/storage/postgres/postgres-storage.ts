import { Client, Pool, PoolClient, types as pgTypes } from 'pg';
import { applyMigrations } from '../apply-migrations';
import { backoff, MAX_TX_ATTEMPTS, UniqueViolation } from '../errors';
import { Db, Migration, SqlValue, Storage, TxOptions } from '../types';

/** Key of the advisory lock that serialises migrations across servers starting at once. */
const MIGRATION_LOCK = 4_271_001;

/** Pooled connections whose session default is READ ONLY (see `readOnlyTx`). */
const READ_ONLY_SESSIONS = new WeakSet<PoolClient>();

/**
 * Write transactions of one lane (TxOptions.lane) in PostgreSQL at once, per server. They wait for
 * one row lock there, and PostgreSQL spends more CPU on a transaction waiting for a row lock than on
 * the write itself; two keep the lock busy (one holds it while the next one starts). KV PUT with 50
 * clients on one server (docs/performance.md): 1,387–1,532/s with every transaction let in, 1,124–1,205/s
 * with one at a time, 1,587–1,965/s with two, 1,656–2,201/s with three or four (fewer per server leave
 * more room for the other servers on the database).
 */
const LANE_WIDTH = 2;

/**
 * Distinct statement texts prepared by name on each connection, at most (as the SQLite storage keeps
 * its prepared statements): texts with `IN (?, ?, …)` lists vary with the input. Later ones run unnamed.
 */
const NAMED_STATEMENTS_MAX = 1000;

/** Statements worth preparing: one plannable statement (a migration's text may hold several, or DDL). */
const PREPARABLE = /^\s*(?:SELECT|INSERT|UPDATE|DELETE|WITH)\b[^;]*$/i;

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
 * A statement as sent: its text with `$n` placeholders and, when it is prepared by name, the name.
 */
interface Statement {
  readonly text: string;
  readonly name?: string;
}

/**
 * The statements of one storage, named once for all its connections. A named statement is parsed and
 * planned once per connection and then only bound and executed: an unnamed one is parsed and planned
 * again on every execution, about half of PostgreSQL's CPU for a catalog KV GET (docs/performance.md).
 */
class Statements {
  private known = new Map<string, Statement>();
  private generation = 0;
  /** Off once the server refused a named statement (a pooler in transaction mode, where names do not last). */
  naming = true;

  of(sql: string): Statement {
    const known = this.known.get(sql);
    if (known) return this.naming || !known.name ? known : { text: known.text };
    const text = toPositional(sql);
    if (this.known.size >= NAMED_STATEMENTS_MAX) return { text };
    const statement = this.naming && PREPARABLE.test(sql) ? { text, name: `hangar_${this.generation}_${this.known.size}` } : { text };
    this.known.set(sql, statement);
    return statement;
  }

  /**
   * New names for every statement: the plans prepared under the old ones may be stale on every
   * connection (a migration changed a table), and a connection prepares a name only once.
   */
  renew(): void {
    this.generation++;
    this.known = new Map();
  }
}

/**
 * PostgreSQL through pg: several Hangar servers share one database. Queries use the portable
 * `?` placeholders, rewritten here to `$n` (no SQL of ours has a literal `?`), and are prepared by
 * name on each connection (Statements).
 */
export class PostgresStorage implements Storage {
  readonly dialect = 'postgres' as const;
  /** Each transaction commits alone here. */
  readonly generation = 0;
  private readonly pool: Pool;
  private readonly listeners = new Set<() => void>();
  private readonly lanes = new Map<string, Lane>();
  private readonly statements = new Statements();

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
    if (options.lane === undefined) return this.writeTx(fn);
    let lane = this.lanes.get(options.lane);
    if (!lane) this.lanes.set(options.lane, (lane = new Lane(LANE_WIDTH)));
    return lane.run(() => this.writeTx(fn));
  }

  private writeTx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    // READ COMMITTED lets two transactions (two servers) both find a row missing and both insert
    // it. A unique violation that the code did not turn into an answer means the other one won:
    // the next attempt sees its row (SQLite's writers take turns, so this does not happen there).
    const retryable = (err: unknown) => isRetryable(err) || err instanceof UniqueViolation;
    return this.attempts(retryable, async (client) => {
      try {
        // READ WRITE said explicitly: the connection's session default may be read-only (below).
        await client.query('BEGIN READ WRITE');
        const result = await fn(this.connection(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
  }

  /**
   * A read-only transaction runs its statements one by one, each in its own implicit transaction,
   * on a connection whose session default is READ ONLY (set once per connection), so a write is
   * still refused. Under READ COMMITTED every statement of a BEGIN ... COMMIT block takes its own
   * snapshot anyway, so the reads see what they saw inside one; the BEGIN and the COMMIT, two round
   * trips of the three or four of a cheap request, are saved.
   */
  private readOnlyTx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return this.attempts(isRetryable, async (client) => {
      if (!READ_ONLY_SESSIONS.has(client)) {
        await client.query('SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY');
        READ_ONLY_SESSIONS.add(client);
      }
      return fn(this.connection(client));
    });
  }

  /**
   * Runs a transaction on a pooled connection until it succeeds: again after a pause when it failed
   * in a way `retryable` says another attempt may not, and at once on another connection when its
   * prepared statements could not be used (staleStatements); at most MAX_TX_ATTEMPTS times.
   */
  private async attempts<T>(retryable: (err: unknown) => boolean, run: (client: PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const client = await this.pool.connect();
      let discard: Error | undefined;
      try {
        return await run(client);
      } catch (err) {
        discard = this.staleStatements(err);
        if ((discard || retryable(err)) && attempt < MAX_TX_ATTEMPTS) {
          if (!discard) await backoff(attempt);
          continue;
        }
        throw err;
      } finally {
        client.release(discard);
      }
    }
  }

  /**
   * The error, when it means that prepared statements cannot be used as they are, and the transaction
   * runs again at once (its connection is closed, and its statements with it):
   * - a table's columns changed under a prepared `SELECT *` (another server's migration, during a
   *   rolling upgrade), which PostgreSQL refuses to answer with the plan it has: every statement is
   *   prepared anew under a new name;
   * - a statement prepared on this connection is unknown to the server, or one not yet prepared
   *   exists: a pooler in transaction mode hands each transaction to any server connection.
   *   Statements are no longer named from then on.
   */
  private staleStatements(err: unknown): Error | undefined {
    const { code, message } = (err ?? {}) as { code?: string; message?: string };
    if (code === '0A000' && /cached plan must not change result type/.test(message ?? '')) {
      this.statements.renew();
      return err as Error;
    }
    if (code === '26000' || code === '42P05') {
      this.statements.naming = false;
      return err as Error;
    }
    return undefined;
  }

  private connection(client: PoolClient): Db {
    const query = async (sql: string, params: readonly SqlValue[]) => {
      const { text, name } = this.statements.of(sql);
      try {
        return await client.query({ text, name, values: params as SqlValue[] });
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

/** Runs at most `width` tasks at once; the others wait their turn, first come first served. */
class Lane {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly width: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.width) this.running++;
    // The slot is handed over by the task that ends (see below), so `running` stays as it is.
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

function toPositional(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

function isRetryable(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === '40001' || code === '40P01';
}
