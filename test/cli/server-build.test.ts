import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

/**
 * `npm run server` on a fresh clone installs only what building the CLI takes (scripts/server-build.mjs,
 * scripts/bootstrap-server). That list must name every package the bundles take in, or the build
 * fails on a fresh clone while passing here, where every dependency is installed.
 */
const ROOT = join(__dirname, '..', '..');

/** The packages (by name) whose files an esbuild bundle of `entryPoints` takes in. */
async function bundledPackages(entryPoints: string[], platform: 'node' | 'browser'): Promise<Set<string>> {
  const result = await build({
    entryPoints: entryPoints.map((entry) => join(ROOT, entry)),
    bundle: true,
    platform,
    format: platform === 'node' ? 'cjs' : 'esm',
    external: ['pg-native'],
    write: false,
    metafile: true,
    outdir: join(ROOT, 'assets', 'unused'),
    logLevel: 'silent',
    loader: { '.css': 'css' },
  });
  const names = new Set<string>();
  for (const input of Object.keys(result.metafile.inputs)) {
    const match = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match) names.add(match[1]);
  }
  return names;
}

test('the server build installs every package the CLI and the web UI bundle', async () => {
  const listed = new Set(execFileSync(process.execPath, [join(ROOT, 'scripts', 'server-build.mjs'), '--list'], { encoding: 'utf8' }).trim().split('\n'));
  const cli = await bundledPackages(['src/cli/bin.ts', 'src/cli/entry.ts'], 'node');
  const ui = await bundledPackages(['registry', 'secrets', 'catalog'].map((name) => `src/ui/${name}/main.ts`), 'browser');
  // Packages the bundles take in that depend on a listed one come with it (npm installs them).
  type Lock = { packages: Record<string, { dependencies?: Record<string, string> }> };
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as Lock;
  const topLevel = [...cli, ...ui].filter((name) => lock.packages[`node_modules/${name}`] && !isDependencyOfListed(name, listed, lock.packages));
  expect(topLevel.filter((name) => !listed.has(name)).sort()).toEqual([]);
  expect(listed.has('esbuild')).toBe(true);
});

/** Whether `name` is a dependency (direct or not, optional or not) of a listed package in the lock file. */
type LockEntry = { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
function isDependencyOfListed(name: string, listed: Set<string>, packages: Record<string, LockEntry>): boolean {
  const seen = new Set<string>();
  const queue = [...listed];
  while (queue.length > 0) {
    const current = queue.pop()!;
    if (seen.has(current)) continue;
    seen.add(current);
    const entry = packages[`node_modules/${current}`];
    for (const dep of Object.keys({ ...entry?.dependencies, ...entry?.optionalDependencies })) {
      if (dep === name) return true;
      queue.push(dep);
    }
  }
  return false;
}
