/**
 * The first run of a newcomer (README, "The two commands"): a fresh clone of this repository's HEAD,
 * then `npm run server -- --dev` until the server says it is ready. Cold: empty npm cache and an empty
 * cache directory (so Node.js 24 is downloaded too, when the machine's Node.js is older), as on a fresh
 * machine; warm: the same command again in that clone. Baselines in the same run: `npm install esbuild`
 * into an empty directory with an empty npm cache (the least any npm-based first run pays) for the cold
 * run, `node -e 0` for the warm one. Goals: cold <= 60 s, warm <= 2 s (issue 41).
 *
 *   npx ts-node --transpile-only bench/first-run.ts
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { record } from './autocannon';
import { timeCommand } from './util';
import { tempDir } from '../test/helpers/storage';

const ROOT = join(__dirname, '..');

/** The environment of a person's shell: no node_modules/.bin of this checkout on PATH. */
function shellEnv(caches: string): NodeJS.ProcessEnv {
  const path = (process.env.PATH ?? '').split(':').filter((dir) => !dir.includes('node_modules')).join(':');
  const { NODE_OPTIONS, ...rest } = process.env;
  void NODE_OPTIONS;
  return { ...rest, PATH: path, npm_config_cache: join(caches, 'npm'), XDG_CACHE_HOME: join(caches, 'xdg') };
}

/** Milliseconds from `npm run server -- --dev` to its "is ready" line; the server is stopped after. */
function timeFirstStart(clone: string, env: NodeJS.ProcessEnv): Promise<number> {
  const started = process.hrtime.bigint();
  // Ports the system picks: the README's command with the defaults would clash with other servers here.
  const ports = ['registry', 'secrets', 'catalog'].flatMap((api) => [`--${api}-addr`, '127.0.0.1:0']);
  const child = spawn('npm', ['run', 'server', '--', '--dev', ...ports], { cwd: clone, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let ready: number | undefined;
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready === undefined && /is ready: registry/.test(output)) {
        ready = Number(process.hrtime.bigint() - started) / 1e6;
        process.kill(-child.pid!, 'SIGTERM');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      if (ready !== undefined) resolve(ready);
      else reject(new Error(`npm run server exited (${code}) before it was ready:\n${output}`));
    });
  });
}

async function main(): Promise<void> {
  const work = tempDir();
  const caches = join(work, 'caches');
  const env = shellEnv(caches);
  const empty = join(work, 'esbuild-only');
  mkdirSync(empty);
  const [install] = timeCommand('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', empty, 'esbuild'], 1, { ...env, npm_config_cache: join(work, 'npm-esbuild') });

  const clone = join(work, 'clone');
  execFileSync('git', ['clone', '--quiet', ROOT, clone]);
  const cold = await timeFirstStart(clone, env);
  record({
    group: 'First run',
    name: 'npm run server -- --dev, fresh clone, cold caches',
    figure: `${(cold / 1000).toFixed(1)} s`,
    baseline: `npm install esbuild, cold cache ${(install / 1000).toFixed(1)} s`,
    ratio: cold / install,
    goal: '<= 60 s',
    met: cold <= 60_000,
  });
  const warm = await timeFirstStart(clone, env);
  const [node] = timeCommand(process.execPath, ['-e', '0'], 1);
  record({
    group: 'First run',
    name: 'npm run server -- --dev, again',
    figure: `${(warm / 1000).toFixed(2)} s`,
    baseline: `node -e 0 ${node.toFixed(0)} ms`,
    ratio: warm / node,
    goal: '<= 2 s',
    met: warm <= 2000,
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
