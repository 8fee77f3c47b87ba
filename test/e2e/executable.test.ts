import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LEAK_WATCH_VAR } from '../../src/engine/leak-watch';
import { NESTED_TX_CHECK_VAR } from '../../src/engine/storage/nesting-check';
import { RunningServer, startServerProcess } from '../helpers/cli';
import { tempDir } from '../helpers/storage';

const ROOT = join(__dirname, '..', '..');
const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
const linuxX64 = process.platform === 'linux' && process.arch === 'x64';
if (!linuxX64) process.stderr.write('executable.test.ts skipped: the single-file hangar is built for linux-x64 only\n');

/**
 * The single-file `hangar` (scripts/build-executable: Node.js's single executable application with
 * the bundled CLI) on a machine without Node.js: run under `env -i`, so no PATH and no Node.js at
 * all, with only the test run's own bookkeeping variables (its temporary directory and leak watch).
 * The build is cached by its inputs' hash in .cache/executable, so only a changed CLI rebuilds it.
 */
(linuxX64 ? describe : describe.skip)('the single-file hangar executable', () => {
  jest.setTimeout(5 * 60_000);
  const out = tempDir('hangar-executable-');
  const exe = join(out, 'hangar-linux-x64');
  const bare = [LEAK_WATCH_VAR, NESTED_TX_CHECK_VAR, 'TMPDIR'].filter((k) => process.env[k]).map((k) => `${k}=${process.env[k]}`);
  let server: RunningServer | undefined;

  beforeAll(() => {
    execFileSync('bash', [join(ROOT, 'scripts', 'build-executable'), '--out', out], { cwd: ROOT, stdio: 'pipe', timeout: 5 * 60_000 });
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('is one file with its checksum, and answers --version with no Node.js anywhere', () => {
    const [sum, name] = readFileSync(`${exe}.sha256`, 'utf8').trim().split(/\s+/);
    expect(name).toBe('hangar-linux-x64');
    expect(execFileSync('sha256sum', [exe], { encoding: 'utf8' }).split(' ')[0]).toBe(sum);
    expect(execFileSync('env', ['-i', ...bare, exe, '--version'], { encoding: 'utf8' })).toBe(`hangar ${VERSION}\n`);
  });

  test('serves all three APIs in dev mode, with the server\'s V8 flags and malloc setting', async () => {
    server = await startServerProcess(['--dev', '--dev-root-token', 'root', '--data', tempDir('hangar-exe-data-')], {}, {
      program: { command: 'env', prefix: ['-i', ...bare, exe], env: {} },
    });
    const root = { 'Authorization': 'Bearer root', 'Content-Type': 'application/json' };
    const post = (url: string, body: unknown, headers: Record<string, string> = root, method = 'POST') =>
      fetch(url, { method, headers, body: typeof body === 'string' ? body : JSON.stringify(body) });

    // registry: a user, the organization the box belongs to, the box
    const { registry, secrets, catalog } = server.urls;
    expect((await post(`${registry}/api/v1/admin/users`, { user: { username: 'alice', password: 'correct horse' } })).status).toBe(200);
    expect((await post(`${registry}/api/v1/admin/organizations`, { organization: { username: 'acme', owner: 'alice' } })).status).toBe(200);
    expect((await post(`${registry}/api/v1/boxes`, { box: { username: 'acme', name: 'web', short_description: 'Nginx', is_private: false } })).status).toBe(200);
    expect(await (await fetch(`${registry}/api/v1/box/acme/web`)).json()).toMatchObject({ tag: 'acme/web', short_description: 'Nginx' });

    // secrets: KV version 2 at secret/
    const vault = { 'X-Vault-Token': 'root' };
    expect((await post(`${secrets}/v1/secret/data/app`, { data: { greeting: 'hello' } }, vault)).status).toBe(200);
    const kv = (await (await fetch(`${secrets}/v1/secret/data/app`, { headers: vault })).json()) as { data: { data: unknown } };
    expect(kv.data.data).toEqual({ greeting: 'hello' });

    // catalog: its key/value store
    expect(await (await post(`${catalog}/v1/kv/app/config`, 'listen 80', {}, 'PUT')).json()).toBe(true);
    expect(await (await fetch(`${catalog}/v1/kv/app/config?raw`)).text()).toBe('listen 80');

    // The server replaced itself (same PID) with one that has its malloc setting; its V8 flags are the executable's own.
    const environ = readFileSync(`/proc/${server.process.pid}/environ`, 'utf8').split('\0');
    expect(environ).toContain('GLIBC_TUNABLES=glibc.malloc.arena_max=2');
    const status = spawnSync('env', ['-i', ...bare, exe, 'status', '--json', '--registry-addr', registry.replace('http://', ''),
      '--secrets-addr', secrets.replace('http://', ''), '--catalog-addr', catalog.replace('http://', '')], { encoding: 'utf8' });
    expect(JSON.parse(status.stdout)).toMatchObject({ healthy: true });
  });
});
