import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { tempDir } from './storage';
import { until } from './until';
import { freePort } from '../setup/postgres';

const ROOT = join(__dirname, '..', '..');
/** Where scripts/setup installs the two registry servers (pinned in test/e2e/registries). */
const TOOLS = join(ROOT, '.cache', 'local-registries');
const VERDACCIO = join(TOOLS, 'npm', 'node_modules', 'verdaccio', 'bin', 'verdaccio');
const PYPI_SERVER = join(TOOLS, 'venv', 'bin', 'pypi-server');

/** Whether scripts/setup installed the registry servers; a failure under CI, a skip (with a message) elsewhere. */
export function localRegistriesAvailable(test: string): boolean {
  if (existsSync(VERDACCIO) && existsSync(PYPI_SERVER)) return true;
  if (process.env.CI) throw new Error(`${test}: verdaccio or pypiserver is missing in ${TOOLS}: run scripts/setup`);
  process.stderr.write(`${test} skipped: verdaccio or pypiserver is missing in ${TOOLS} (run scripts/setup)\n`);
  return false;
}


async function answers(url: string): Promise<boolean> {
  return fetch(url).then((res) => res.ok, () => false);
}

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  return exited;
}

/**
 * A real npm registry (verdaccio) on loopback with its storage in a temporary directory. It serves
 * the packages published to it (hangar-cdktf, hangar-cdktn: never looked up elsewhere) and proxies
 * every other package to the registry npm is configured with, as a company's registry would.
 */
export class LocalNpmRegistry {
  static async start(): Promise<LocalNpmRegistry> {
    const dir = tempDir('hangar-verdaccio-');
    const port = await freePort();
    const upstream = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim();
    const local = '{ access: $all, publish: $authenticated }';
    writeFileSync(join(dir, 'config.yaml'), [
      `storage: ${join(dir, 'storage')}`,
      `auth: { htpasswd: { file: ${join(dir, 'htpasswd')}, max_users: 10 } }`,
      `uplinks: { upstream: { url: "${upstream}", timeout: 60s, max_fails: 5 } }`,
      'packages:',
      `  'hangar-cdktf': ${local}`,
      `  'hangar-cdktn': ${local}`,
      "  '**': { access: $all, proxy: upstream }",
      'log: { type: stdout, format: json, level: warn }',
      '',
    ].join('\n'));
    const child = spawn(process.execPath, [VERDACCIO, '--config', join(dir, 'config.yaml'), '--listen', `127.0.0.1:${port}`], {
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: 'ignore',
    });
    const url = `http://127.0.0.1:${port}/`;
    await until('verdaccio to answer', () => answers(`${url}-/ping`), { ms: 60_000 });
    // A user for `npm publish` (verdaccio's own accounts, as `npm adduser` makes them).
    const res = await fetch(`${url}-/user/org.couchdb.user:hangar`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'hangar', password: 'hangar-publisher' }),
    });
    const { token } = (await res.json()) as { token: string };
    return new LocalNpmRegistry(child, url, token);
  }

  private constructor(
    private readonly child: ChildProcess,
    /** The registry's URL, ending with a slash, for npm's --registry. */
    readonly url: string,
    private readonly token: string,
  ) {}

  /** `npm publish TARBALL` to this registry. */
  publish(tarball: string): void {
    const auth = `--${this.url.replace(/^http:/, '')}:_authToken=${this.token}`;
    execFileSync('npm', ['publish', tarball, '--registry', this.url, auth, '--loglevel=error'], {
      stdio: 'pipe',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
  }

  stop(): Promise<void> {
    return stopped(this.child);
  }
}

/** A real package index (pypiserver) on loopback, serving the files published into its directory. */
export class LocalPackageIndex {
  static async start(): Promise<LocalPackageIndex> {
    const dir = tempDir('hangar-pypiserver-');
    const port = await freePort();
    const child = spawn(PYPI_SERVER, ['run', '--interface', '127.0.0.1', '--port', String(port), '--disable-fallback', dir], { stdio: 'ignore' });
    const url = `http://127.0.0.1:${port}/simple/`;
    await until('pypiserver to answer', () => answers(url), { ms: 60_000 });
    return new LocalPackageIndex(child, url, dir);
  }

  private constructor(
    private readonly child: ChildProcess,
    /** The index's simple API, for pip's --index-url / --extra-index-url. */
    readonly url: string,
    private readonly dir: string,
  ) {}

  /** Publishes a wheel or sdist: pypiserver serves the files of its directory. */
  publish(file: string): void {
    copyFileSync(file, join(this.dir, basename(file)));
  }

  stop(): Promise<void> {
    return stopped(this.child);
  }
}
