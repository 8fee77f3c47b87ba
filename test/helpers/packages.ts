import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);

/** Every file under `dir`, sorted, for hashing. */
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/**
 * The jsii-pacmak outputs (dist/js with the npm tarball, dist/python with the wheel and sdist) of the
 * current sources, built once per content of src/, package.json, .npmignore and the bundled CLI, and kept in
 * .cache/packages: the test files that install them (packages.test.ts, readme.test.ts) share one build.
 */
export function builtPackages(): string {
  const hash = createHash('sha256');
  for (const file of [...files(join(ROOT, 'src')), ...['package.json', '.npmignore', join('assets', 'hangar.cjs')].map((f) => join(ROOT, f))]) {
    hash.update(file.slice(ROOT.length)).update(readFileSync(file));
  }
  const dist = join(ROOT, '.cache', 'packages', hash.digest('hex').slice(0, 16));
  if (existsSync(join(dist, 'python'))) return dist;
  const run = (cmd: string, args: string[]) =>
    execFileSync(cmd, args, { cwd: ROOT, stdio: 'pipe', env: { ...process.env, NODE_OPTIONS: '' }, timeout: 10 * 60_000 });
  const temp = `${dist}.${process.pid}`;
  rmSync(temp, { recursive: true, force: true });
  mkdirSync(temp, { recursive: true });
  run(bin('jsii'), ['--silence-warnings=reserved-word']);
  run(bin('jsii-pacmak'), ['--target', 'js', '--target', 'python', '--outdir', temp]);
  try {
    renameSync(temp, dist);
  } catch {
    // another test file built the same packages meanwhile
    rmSync(temp, { recursive: true, force: true });
  }
  // Builds of earlier sources go (a finished build only: others may be under way).
  for (const old of readdirSync(join(dist, '..'))) {
    if (/^[0-9a-f]{16}$/.test(old) && join(dist, '..', old) !== dist) rmSync(join(dist, '..', old), { recursive: true, force: true });
  }
  return dist;
}
