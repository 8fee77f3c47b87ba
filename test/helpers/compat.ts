import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT_TOKEN, startTestServer, TestServer } from './server';

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

/** What a client suite runner starts: the environment the suites get, and how to stop it all. */
export interface CompatTarget {
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

/** The official Vault client suites (Go client and hvac) that one runner judges a Hangar with. */
export interface OfficialClientSuites {
  /** Packages of the Go module test/compat/vault-go, e.g. ['./pki/...']. */
  readonly goPackages: readonly string[];
  /** pytest files under test/compat/python. */
  readonly pythonFiles: readonly string[];
  /** Further checks of the Go suite's output (expected test names), after exit status 0. */
  readonly checkGo?: (output: string) => void;
  /** Further checks of pytest's output (expected counts), after exit status 0. */
  readonly checkPython?: (output: string) => void;
  /** @default 120_000 */
  readonly pythonTimeoutMs?: number;
  /** False when a component the suites need is missing (its helper throws under CI): skips all. @default true */
  readonly runnable?: boolean;
}

/**
 * A Hangar on SQLite with the secrets API's address and root token in VAULT_ADDR/VAULT_TOKEN;
 * `prepare` may set the server up further and add variables (e.g. an OIDC issuer).
 */
export async function secretsTarget(
  prepare?: (server: TestServer) => Promise<Record<string, string>>,
): Promise<CompatTarget & { readonly server: TestServer }> {
  const server = await startTestServer('sqlite');
  const extra = prepare ? await prepare(server) : {};
  return { server, env: { VAULT_ADDR: server.urls.secrets, VAULT_TOKEN: ROOT_TOKEN, ...extra }, close: () => server.close() };
}

/**
 * Declares one describe block with a test per client (the vault-go packages, then pytest's files)
 * against the target that `start` brings up before them and closes after. A missing Go or
 * virtualenv skips its test (a failure under CI); a failing run prints the suite's output.
 */
export function describeOfficialClients(title: string, start: () => Promise<CompatTarget>, suites: OfficialClientSuites): void {
  const python = compatPython();
  const go = haveGo();
  (suites.runnable === false ? describe.skip : describe)(title, () => {
    let target: CompatTarget | undefined;
    beforeAll(async () => { target = await start(); }, 120_000);
    afterAll(() => target?.close(), 60_000);

    (go ? test : test.skip)('github.com/hashicorp/vault/api', async () => {
      const run = await goTest('vault-go', suites.goPackages, target!.env);
      if (run.status !== 0) console.log(run.output);
      expect(run.status).toBe(0);
      suites.checkGo?.(run.output);
    }, 300_000);

    (python ? test : test.skip)('hvac', async () => {
      const run = await pytest(python!, suites.pythonFiles, target!.env);
      if (run.status !== 0) console.log(run.output);
      expect(run.status).toBe(0);
      suites.checkPython?.(run.output);
    }, suites.pythonTimeoutMs ?? 120_000);
  });
}
