import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { runSuite, SuiteRun } from './compat';
import { findPostgresBin, startCluster, stopCluster } from '../setup/postgres';

/**
 * A private PostgreSQL that a secrets engine manages (the database engine's target), apart from
 * Hangar's own storage: TCP logins need a password, so a revoked user or a rotated password is
 * really refused. `psql` is the judge of logins and grants.
 */
export interface TargetPostgres {
  readonly host: string;
  readonly port: number;
  readonly adminUser: string;
  readonly adminPassword: string;
  /** The server's process (its backends are its children): benchmarks read its CPU time. */
  readonly pid: number;
  /** `postgresql://{{username}}:{{password}}@host:port/app?sslmode=disable` for Vault's plugin. */
  readonly urlTemplate: string;
  /** Runs SQL as the superuser in the `app` database. */
  admin(sql: string, values?: unknown[]): Promise<{ rows: any[] }>;
  /** `psql -U user -d app -c sql` with a password: status 0 when the login (and the SQL) succeeded. */
  psql(user: string, password: string, sql: string): Promise<SuiteRun>;
  stop(): Promise<void>;
}

/** The machine's PostgreSQL binaries; under CI missing ones are a failure, never a skip. */
export function havePostgres(): boolean {
  const found = findPostgresBin() !== undefined;
  if (!found && process.env.CI) throw new Error('PostgreSQL binaries not found: run scripts/setup');
  return found;
}

export async function startTargetPostgres(): Promise<TargetPostgres> {
  const adminPassword = randomBytes(12).toString('hex');
  const cluster = await startCluster(findPostgresBin()!, { password: adminPassword });
  const url = new URL(cluster.url);
  const boot = new Client({ connectionString: cluster.url });
  await boot.connect();
  await boot.query('CREATE DATABASE app');
  await boot.end();
  url.pathname = '/app';
  const admin = new Client({ connectionString: url.toString() });
  await admin.connect();
  const host = url.hostname;
  const port = Number(url.port);
  return {
    host,
    port,
    adminUser: 'hangar',
    adminPassword,
    pid: cluster.pid,
    urlTemplate: `postgresql://{{username}}:{{password}}@${host}:${port}/app?sslmode=disable`,
    admin: (sql, values) => admin.query(sql, values),
    psql: (user, password, sql) =>
      runSuite('psql', ['-h', host, '-p', String(port), '-U', user, '-d', 'app', '-w', '-tA', '-v', 'ON_ERROR_STOP=1', '-c', sql], '/', {
        PGPASSWORD: password,
      }),
    async stop() {
      await admin.end().catch(() => undefined);
      stopCluster(cluster);
    },
  };
}
