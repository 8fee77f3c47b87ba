import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { runSuite, SuiteRun } from './compat';
import { freePort } from '../setup/postgres';

/**
 * A private MariaDB for a test file: Debian's mariadbd on a temporary directory, 127.0.0.1 and a
 * free port, with an administrator `hangar`@`%` (password login over TCP, all privileges with
 * grant option). The `mysql` command-line client is the judge of logins and grants.
 */
export interface TestMariaDb {
  readonly host: string;
  readonly port: number;
  readonly adminUser: string;
  readonly adminPassword: string;
  /** A Go DSN template for Vault's mysql plugin (`{{username}}:{{password}}@tcp(host:port)/`). */
  readonly dsnTemplate: string;
  /** Runs SQL as the administrator. */
  admin(sql: string): Promise<unknown>;
  /** `mysql -u user -p... -e sql`: status 0 when the login (and the SQL) succeeded. */
  mysql(user: string, password: string, sql: string): Promise<SuiteRun>;
  stop(): Promise<void>;
}

const BIN = '/usr/sbin/mariadbd';

/** True when MariaDB is installed; under CI a missing one is a failure, never a skip. */
export function haveMariaDb(): boolean {
  const found = existsSync(BIN) && existsSync('/usr/bin/mariadb-install-db');
  if (!found && process.env.CI) throw new Error('mariadb-server is not installed: run scripts/setup');
  return found;
}

export async function startMariaDb(): Promise<TestMariaDb> {
  const dir = mkdtempSync(join(tmpdir(), 'hangar-mariadb-'));
  const data = join(dir, 'data');
  const socket = join(dir, 'mysqld.sock');
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? ['--user=root'] : [];
  execFileSync('mariadb-install-db', ['--no-defaults', `--datadir=${data}`, '--auth-root-authentication-method=normal', '--skip-test-db', ...user], {
    stdio: 'pipe',
  });
  const port = await freePort();
  const child = spawn(
    BIN,
    [
      '--no-defaults', `--datadir=${data}`, `--socket=${socket}`, `--port=${port}`, '--bind-address=127.0.0.1',
      '--skip-networking=0', '--skip-name-resolve', `--pid-file=${join(dir, 'mysqld.pid')}`, `--log-error=${join(dir, 'error.log')}`,
      '--innodb-buffer-pool-size=16M', '--innodb-flush-log-at-trx-commit=0', '--skip-log-bin', ...user,
    ],
    { stdio: 'ignore', detached: true },
  );
  child.unref();
  const stop = async () => {
    try {
      process.kill(child.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      try {
        process.kill(child.pid!, 0);
      } catch {
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const adminPassword = randomBytes(12).toString('hex');
  try {
    const root = await waitFor(() => createConnection({ socketPath: socket, user: 'root' }));
    await root.query(`CREATE USER 'hangar'@'%' IDENTIFIED BY '${adminPassword}'`);
    await root.query('GRANT ALL PRIVILEGES ON *.* TO \'hangar\'@\'%\' WITH GRANT OPTION');
    await root.query('CREATE DATABASE app');
    await root.end();
  } catch (err) {
    await stop();
    throw err;
  }
  const host = '127.0.0.1';
  return {
    host,
    port,
    adminUser: 'hangar',
    adminPassword,
    dsnTemplate: `{{username}}:{{password}}@tcp(${host}:${port})/`,
    async admin(sql) {
      const c = await createConnection({ host, port, user: 'hangar', password: adminPassword });
      try {
        return (await c.query(sql))[0];
      } finally {
        await c.end();
      }
    },
    mysql: (u, p, sql) =>
      runSuite('mysql', ['--no-defaults', '-h', host, '-P', String(port), '-u', u, '--batch', '--skip-column-names', '-e', sql], dir, { MYSQL_PWD: p }),
    stop,
  };
}

async function waitFor<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
