import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { childOf, HAS_PROC, isRunning } from '../helpers/processes';
import { tempDir } from '../helpers/storage';
import { until } from '../helpers/until';

/**
 * A pipeline's Node.js may be older than the CLI needs (>= 22.12): the CLI then runs itself on a
 * newer one. These tests start the bundled CLI on the machine's own older Node.js (Debian's).
 */
const CLI = join(__dirname, '..', '..', 'assets', 'hangar.cjs');
const OLD_NODE = ['/usr/bin/node', '/usr/local/bin/node'].find((node) => {
  if (!existsSync(node)) return false;
  const [major, minor] = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim().split('.').map(Number);
  return major < 22 || (major === 22 && minor < 12);
});
if (!OLD_NODE) process.stderr.write('no Node.js older than 22.12 on this machine: the fallback tests are skipped\n');
const VERSION = spawnSync(process.execPath, [CLI, '--version'], { encoding: 'utf8' }).stdout;

/**
 * A pipeline's machine as the CLI meets it: its PATH without this project's node_modules/.bin (whose
 * Node.js 24 the runner put first; npm on it here took minutes), and what npm needs to reach the
 * registry (a private CA, a proxy, a registry of its own).
 */
const MACHINE_ENV: NodeJS.ProcessEnv = {
  PATH: (process.env.PATH ?? '').split(':').filter((dir) => !dir.endsWith('node_modules/.bin')).join(':'),
  HOME: process.env.HOME,
  ...Object.fromEntries(
    Object.entries(process.env).filter(([k]) => /^(NODE_EXTRA_CA_CERTS|SSL_CERT_(FILE|DIR)|(HTTPS?|NO)_PROXY|(https?|no)_proxy|npm_config_(registry|cafile|ca|proxy|https_proxy|noproxy|strict_ssl))$/.test(k)),
  ),
};

function run(cli: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string) {
  const res = spawnSync(OLD_NODE!, [cli, ...args], {
    encoding: 'utf8',
    cwd,
    timeout: 10 * 60_000,
    env: { ...MACHINE_ENV, NODE_OPTIONS: '', ...env },
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

(OLD_NODE ? describe : describe.skip)('the CLI on a Node.js older than 22.12', () => {
  jest.setTimeout(10 * 60_000);

  test('finds the npm package `node` installed beside it and runs on that', () => {
    expect(run(CLI, ['--version'], { XDG_CACHE_HOME: tempDir() })).toEqual({ code: 0, stdout: VERSION, stderr: '' });
  });

  test('runs on HANGAR_NODE when it is new enough', () => {
    const alone = join(tempDir(), 'hangar.cjs');
    copyFileSync(CLI, alone);
    const res = run(alone, ['--version'], { XDG_CACHE_HOME: tempDir(), HANGAR_NODE: process.execPath, HANGAR_NODE_DOWNLOAD: '0' }, tempDir());
    expect(res).toEqual({ code: 0, stdout: VERSION, stderr: '' });
  });

  test('with no newer Node.js around and downloads forbidden, refuses with a message to act on', () => {
    const alone = join(tempDir(), 'hangar.cjs');
    copyFileSync(CLI, alone);
    const res = run(alone, ['--version'], { XDG_CACHE_HOME: tempDir(), HANGAR_NODE_DOWNLOAD: '0' }, tempDir());
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/Node\.js >= 22\.12 is required \(this is v\d+\.\d+\.\d+\); install a newer Node\.js or point HANGAR_NODE at one/);
  });

  test('otherwise downloads Node.js 24 from the npm registry once, and reuses it', () => {
    const alone = join(tempDir(), 'hangar.cjs');
    copyFileSync(CLI, alone);
    const cache = tempDir();
    const first = run(alone, ['--version'], { XDG_CACHE_HOME: cache }, tempDir());
    expect(first.stderr).toMatch(/downloading Node\.js 24 from the npm registry \(node-linux-\w+\)/);
    expect(first).toMatchObject({ code: 0, stdout: VERSION });
    const again = run(alone, ['--version'], { XDG_CACHE_HOME: cache }, tempDir());
    expect(again).toEqual({ code: 0, stdout: VERSION, stderr: '' });
  });

  // The rerun waits in spawnSync, which passes no signal on (src/cli/rerun.ts).
  (HAS_PROC ? test : test.skip)('a server run again on a newer Node.js stops when the process that started it is killed', async () => {
    const args = ['server', '--dev', '--registry-addr', '127.0.0.1:0', '--secrets-addr', '127.0.0.1:0', '--catalog-addr', '127.0.0.1:0'];
    const parent = spawn(OLD_NODE!, [CLI, ...args], {
      env: { ...MACHINE_ENV, NODE_OPTIONS: '', XDG_CACHE_HOME: tempDir() },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    parent.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    await until('the server to be ready', () => /is ready/.test(stderr), { ms: 60_000, detail: () => stderr });
    const server = childOf(parent.pid!);
    expect(server).toBeDefined();
    parent.kill('SIGTERM');
    await once(parent, 'exit');
    try {
      await until('the server to stop after the process that started it', () => !isRunning(server!), { ms: 10_000 });
    } finally {
      // A server left behind would also hold this test's stderr pipe open.
      if (isRunning(server!)) process.kill(server!, 'SIGKILL');
    }
  });
});
