import { Pool, PoolClient } from 'pg';
import { ConnectionSettings, DatabasePlugin, PluginSession, redacted, splitStatements, StatementValues, substitute } from './types';

/** Connecting gives up after this long, so an unreachable database is a clear error, never a hung request. */
export const CONNECT_TIMEOUT_MS = 5_000;
/** A statement that runs longer is cancelled. */
const QUERY_TIMEOUT_MS = 30_000;

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The connection URL with `{{username}}`/`{{password}}` filled in (URL-escaped, as it is a URL). */
function connectionString(s: ConnectionSettings): string {
  return s.connection_url
    .replace(/\{\{\s*username\s*\}\}/g, encodeURIComponent(s.username))
    .replace(/\{\{\s*password\s*\}\}/g, encodeURIComponent(s.password));
}

/**
 * Runs statements as one transaction in one round trip: PostgreSQL's simple query protocol runs
 * several statements of one message as a single implicit transaction, rolled back when one fails.
 */
async function inTransaction(client: Pick<PoolClient, 'query'>, queries: readonly string[]): Promise<void> {
  if (queries.length) await client.query(queries.join(';\n'));
}

class PostgresSession implements PluginSession {
  private readonly pool: Pool;

  constructor(settings: ConnectionSettings) {
    this.pool = new Pool({
      connectionString: connectionString(settings),
      max: settings.max_open_connections,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      idleTimeoutMillis: 10_000,
      maxLifetimeSeconds: settings.max_connection_lifetime,
      // Idle connections do not keep a CLI process (in-process apply) alive.
      allowExitOnIdle: true,
    });
    this.pool.on('error', () => undefined);
  }

  async verify(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async exec(statements: readonly string[], values: StatementValues): Promise<void> {
    const queries = splitStatements(statements).map((s) => substitute(s, values));
    try {
      await inTransaction(this.pool, queries);
    } catch (err) {
      throw redacted(err, values);
    }
  }

  /**
   * Vault's default revocation: revoke what the role holds in every schema it has grants in, in
   * `public` and on the database, then drop it. Nothing to do when the role is already gone.
   * Vault's three lookups (the role, its schemas, the database) are one round trip here.
   */
  async dropUser(username: string): Promise<void> {
    const client = await this.pool.connect();
    try {
      const { rows } = await client.query<{ found: boolean; db: string; schemas: string[] }>(
        `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1) AS found, current_database() AS db,
           ARRAY(SELECT DISTINCT table_schema::text FROM information_schema.role_column_grants WHERE grantee = $1) AS schemas`,
        [username],
      );
      const { found, db: dbname, schemas } = rows[0];
      if (!found) return;
      const user = ident(username);
      const queries = [
        ...schemas.flatMap((schema) => [
          `REVOKE ALL PRIVILEGES ON ALL TABLES IN SCHEMA ${ident(schema)} FROM ${user}`,
          `REVOKE USAGE ON SCHEMA ${ident(schema)} FROM ${user}`,
        ]),
        `REVOKE ALL PRIVILEGES ON ALL TABLES IN SCHEMA public FROM ${user}`,
        `REVOKE ALL PRIVILEGES ON ALL SEQUENCES IN SCHEMA public FROM ${user}`,
        `REVOKE USAGE ON SCHEMA public FROM ${user}`,
        `REVOKE CONNECT ON DATABASE ${ident(dbname)} FROM ${user}`,
        `DROP ROLE IF EXISTS ${user}`,
      ];
      await inTransaction(client, queries);
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

const pad = (n: number) => String(n).padStart(2, '0');

/** `postgresql-database-plugin`: PostgreSQL through `pg`, with Vault's default statements. */
export const postgresqlPlugin: DatabasePlugin = {
  name: 'postgresql-database-plugin',
  defaultUsernameTemplate: '{{ printf "v-%s-%s-%s-%s" (.DisplayName | truncate 8) (.RoleName | truncate 8) (random 20) (unix_time) | truncate 63 }}',
  defaultRevocation: [],
  defaultRenew: ['ALTER ROLE "{{name}}" VALID UNTIL \'{{expiration}}\';'],
  defaultRotateRoot: ['ALTER ROLE "{{username}}" WITH PASSWORD \'{{password}}\';'],
  defaultRotateStatic: ['ALTER ROLE "{{name}}" WITH PASSWORD \'{{password}}\';'],
  // Go's "2006-01-02 15:04:05-0700", in UTC.
  expiration: (ms) => {
    const d = new Date(ms);
    return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}+0000`;
  },
  check: (s) => {
    try {
      const url = new URL(connectionString({ ...s, username: 'u', password: 'p' }));
      if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') return `connection_url: use postgresql://... , not ${url.protocol}`;
      return undefined;
    } catch {
      return 'connection_url: must be a URL such as postgresql://{{username}}:{{password}}@host:5432/db';
    }
  },
  open: (settings) => new PostgresSession(settings),
};
