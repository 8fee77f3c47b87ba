import type { Pool, PoolConnection } from 'mysql2';
import type { PoolConnection as PromiseConnection } from 'mysql2/promise';
import { CONNECT_TIMEOUT_MS } from './postgresql';
import { ConnectionSettings, DatabasePlugin, PluginSession, redacted, splitStatements, StatementValues, substitute } from './types';

interface Dsn {
  readonly user: string;
  readonly password: string;
  readonly host?: string;
  readonly port?: number;
  readonly socketPath?: string;
  readonly database?: string;
}

/**
 * Go's MySQL DSN, which Vault's mysql plugin takes as `connection_url`:
 * `[user[:password]@][tcp(host:port)|unix(/path)]/[dbname][?params]`, with `{{username}}` and
 * `{{password}}` filled in first. Throws a message naming the field.
 */
export function parseDsn(s: ConnectionSettings): Dsn {
  const dsn = s.connection_url.replace(/\{\{\s*username\s*\}\}/g, s.username).replace(/\{\{\s*password\s*\}\}/g, s.password);
  const slash = dsn.lastIndexOf('/');
  if (slash < 0) throw new Error('connection_url: use a DSN such as {{username}}:{{password}}@tcp(127.0.0.1:3306)/');
  const head = dsn.slice(0, slash);
  const database = dsn.slice(slash + 1).split('?')[0] || undefined;
  const at = head.lastIndexOf('@');
  const creds = at < 0 ? '' : head.slice(0, at);
  const address = at < 0 ? head : head.slice(at + 1);
  const colon = creds.indexOf(':');
  const user = colon < 0 ? creds : creds.slice(0, colon);
  const password = colon < 0 ? '' : creds.slice(colon + 1);
  const m = /^(tcp|unix)?(?:\((.*)\))?$/.exec(address);
  if (!m) throw new Error(`connection_url: the address "${address}" is not tcp(host:port) or unix(/path)`);
  if (m[1] === 'unix') return { user, password, socketPath: m[2], database };
  const [host, port] = (m[2] || '127.0.0.1:3306').split(/:(?=\d+$)/);
  return { user, password, host: host.replace(/^\[|\]$/g, ''), port: Number(port ?? 3306), database };
}

class MysqlSession implements PluginSession {
  private readonly pool: Pool;

  constructor(settings: ConnectionSettings) {
    const limit = settings.max_open_connections;
    // Loaded on first use: mysql2 is the largest library a server without a MySQL connection would keep.
    const { createPool } = require('mysql2') as typeof import('mysql2');
    this.pool = createPool({
      ...parseDsn(settings),
      connectionLimit: limit,
      // As many idle as open: mysql2 otherwise keeps a timer that holds the process open.
      maxIdle: limit,
      connectTimeout: CONNECT_TIMEOUT_MS,
      multipleStatements: false,
    });
    // Idle connections do not keep a CLI process (in-process apply) alive; busy ones do.
    const stream = (c: PoolConnection) => (c as unknown as { stream?: { ref(): void; unref(): void } }).stream;
    this.pool.on('acquire', (c) => stream(c)?.ref());
    this.pool.on('release', (c) => stream(c)?.unref());
  }

  private async withConnection<T>(fn: (c: PromiseConnection) => Promise<T>): Promise<T> {
    const conn = await this.pool.promise().getConnection();
    try {
      return await fn(conn);
    } finally {
      conn.release();
    }
  }

  async verify(): Promise<void> {
    await this.withConnection((c) => c.query('SELECT 1'));
  }

  async exec(statements: readonly string[], values: StatementValues): Promise<void> {
    const queries = splitStatements(statements).map((s) => substitute(s, values));
    await this.withConnection(async (c) => {
      await c.beginTransaction();
      try {
        for (const q of queries) await c.query(q);
        await c.commit();
      } catch (err) {
        await c.rollback().catch(() => undefined);
        throw redacted(err, values);
      }
    });
  }

  async close(): Promise<void> {
    await this.pool.promise().end();
  }
}

/** `mysql-database-plugin`: MySQL and MariaDB through `mysql2`, with Vault's default statements. */
export const mysqlPlugin: DatabasePlugin = {
  name: 'mysql-database-plugin',
  defaultUsernameTemplate: '{{ printf "v-%s-%s-%s-%s" (.DisplayName | truncate 10) (.RoleName | truncate 10) (random 20) (unix_time) | truncate 32 }}',
  defaultRevocation: ['REVOKE ALL PRIVILEGES, GRANT OPTION FROM \'{{name}}\'@\'%\'; DROP USER \'{{name}}\'@\'%\''],
  // MySQL users have no expiry that Vault sets: renewal changes nothing in the database.
  defaultRenew: [],
  defaultRotateRoot: ['ALTER USER \'{{username}}\'@\'%\' IDENTIFIED BY \'{{password}}\';'],
  defaultRotateStatic: ['ALTER USER \'{{name}}\'@\'%\' IDENTIFIED BY \'{{password}}\';'],
  expiration: (ms) => new Date(ms).toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, ''),
  check: (s) => {
    try {
      parseDsn(s);
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  },
  open: (settings) => new MysqlSession(settings),
};

/**
 * Vault's other MySQL plugins: the same plugin, whose usernames fit the 16 characters of MySQL before
 * 5.7 (its `DefaultLegacyUserNameTemplate`): `mysql-legacy-database-plugin`, and the RDS and Aurora ones.
 */
export const mysqlLegacyPlugins: readonly DatabasePlugin[] = ['mysql-legacy-database-plugin', 'mysql-rds-database-plugin', 'mysql-aurora-database-plugin'].map((name) => ({
  ...mysqlPlugin,
  name,
  defaultUsernameTemplate: '{{ printf "v-%s-%s-%s" (.RoleName | truncate 4) (random 20) | truncate 16 }}',
}));
