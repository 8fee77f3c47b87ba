import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Runs the official client suites (Go modules and pytest files under test/compat/) against a
 * Hangar that the calling jest test started. scripts/setup installs their modules and virtualenv.
 */

const ROOT = join(__dirname, '..', '..');
export const COMPAT_DIR = join(ROOT, 'test', 'compat');
const VENV_PYTHON = join(ROOT, '.cache', 'compat-venv', 'bin', 'python');

export interface SuiteRun {
  readonly status: number | null;
  readonly output: string;
}

/**
 * The virtualenv's python, or undefined when scripts/setup has not made it (the caller skips);
 * under CI a missing virtualenv is a failure, never a skip.
 */
export function compatPython(): string | undefined {
  if (existsSync(VENV_PYTHON)) return VENV_PYTHON;
  if (process.env.CI) throw new Error(`${VENV_PYTHON} is missing: run scripts/setup`);
  return undefined;
}

/** True when `go` is on PATH; under CI a missing Go is a failure. */
export function haveGo(): boolean {
  const found = (process.env.PATH ?? '').split(':').some((dir) => dir && existsSync(join(dir, 'go')));
  if (!found && process.env.CI) throw new Error('go is not on PATH: run scripts/setup');
  return found;
}

/**
 * Runs a command without blocking the event loop (the server under test lives in this process)
 * and collects its output.
 */
export function runSuite(command: string, args: readonly string[], cwd: string, env: Record<string, string>): Promise<SuiteRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, output }));
  });
}

/**
 * `go test -count=1 -v <packages>` in the Go module test/compat/<module> (`vault-go`, `consul-go`),
 * e.g. goTest('vault-go', ['./pki/...'], env).
 */
export function goTest(module: string, packages: readonly string[], env: Record<string, string>): Promise<SuiteRun> {
  return runSuite('go', ['test', '-count=1', '-v', ...packages], join(COMPAT_DIR, module), env);
}

/** pytest on files under test/compat/python with the compat virtualenv's python. */
export function pytest(python: string, files: readonly string[], env: Record<string, string>): Promise<SuiteRun> {
  return runSuite(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', ...files], join(COMPAT_DIR, 'python'), env);
}
