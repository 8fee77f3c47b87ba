import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HAS_PROC, isRunning } from '../helpers/processes';

/** A private PostgreSQL cluster for the tests: its own directory, port and superuser. */
export interface TestCluster {
  readonly url: string;
  readonly dir: string;
  readonly pid: number;
}

/** The PostgreSQL binaries of the machine (Debian puts them in /usr/lib/postgresql/N/bin). */
export function findPostgresBin(): string | undefined {
  if (process.env.HANGAR_PG_BIN) return process.env.HANGAR_PG_BIN;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  return versions.map((v) => join(root, v, 'bin')).find((bin) => existsSync(join(bin, 'initdb')));
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/**
 * initdb + postgres on 127.0.0.1 and a free port; runs as the postgres user when we are root.
 * With `password`, TCP logins need a password (scram-sha-256; the superuser's is `password`), so
 * tests can see a wrong or rotated password refused; without it, every login is trusted.
 */
export async function startCluster(bin: string, options: { password?: string } = {}): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'hangar-pg-'));
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] as const : [cmd, args] as const;
  if (asRoot) execFileSync('chown', ['postgres:postgres', dir]);
  const data = join(dir, 'data');
  const auth = ['--auth=trust'];
  if (options.password !== undefined) {
    writeFileSync(join(dir, 'pwfile'), `${options.password}\n`, { mode: 0o644 });
    auth.push('--auth-host=scram-sha-256', `--pwfile=${join(dir, 'pwfile')}`);
  }
  const [initCmd, initArgs] = run(join(bin, 'initdb'), ['-D', data, '-U', 'hangar', ...auth, '-E', 'UTF8', '--no-sync']);
  execFileSync(initCmd, initArgs, { stdio: 'pipe' });
  const port = await freePort();
  const [pgCmd, pgArgs] = run(join(bin, 'postgres'), [
    '-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir,
    '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300',
  ]);
  const child = spawn(pgCmd, pgArgs, { stdio: 'ignore', detached: true });
  child.unref();
  const user = options.password === undefined ? 'hangar' : `hangar:${encodeURIComponent(options.password)}`;
  const url = `postgres://${user}@127.0.0.1:${port}/postgres`;
  await waitForPostgres(url);
  return { url, dir, pid: child.pid! };
}

async function waitForPostgres(url: string): Promise<void> {
  const { Client } = await import('pg');
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export function stopCluster(cluster: TestCluster): void {
  try {
    // The process group (postgres was spawned detached): as root, `pid` is the runuser wrapper, which
    // does not pass SIGINT on, and a postmaster signalled through it alone outlived its deleted directory.
    process.kill(-cluster.pid, 'SIGINT');
  } catch {
    // already gone
  }
  // Our own child: once exited it stays a zombie until the event loop reaps it, which this
  // synchronous wait does not let happen, so a zombie counts as gone.
  const alive = () => {
    if (HAS_PROC) return isRunning(cluster.pid);
    try {
      process.kill(cluster.pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && alive()) execFileSync('sleep', ['0.1']);
  rmSync(cluster.dir, { recursive: true, force: true });
}
