import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { HAS_PROC, servingPid } from './processes';

/** The bundled CLI (built by the jest global setup), run as users and custom resources run it. */
export const CLI = join(__dirname, '..', '..', 'assets', 'hangar.cjs');

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `hangar ARGS` to completion. */
export function hangar(args: readonly string[], env: NodeJS.ProcessEnv = {}): CliResult {
  const res = spawnSync(process.execPath, [CLI, ...args], {
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

export interface RunningServer {
  readonly process: ChildProcess;
  readonly urls: { registry: string; secrets: string; catalog: string };
  /** The DNS interface's HOST:PORT (UDP and TCP), unless it is off. */
  readonly dns?: string;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** Its log lines (stdout) so far, when started with `{ stdout: true }`. */
  stdout(): string;
  /** Sends a signal to the serving process (on an old Node.js, the CLI's rerun on a newer one: node-fallback.ts). */
  signal(signal: NodeJS.Signals): void;
  /** Sends SIGTERM and resolves to the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** How a `hangar` is run: its program, the arguments before the command, the environment it starts from. */
export interface HangarProgram {
  readonly command: string;
  readonly prefix: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}

/** The bundled CLI on this Node.js, in this process's environment. */
export const BUNDLED_CLI: HangarProgram = { command: process.execPath, prefix: [CLI], env: { ...process.env, NODE_OPTIONS: '' } };

/** Starts `hangar server ARGS` on ephemeral ports (DNS too) and waits until it says it is ready; `stdout` keeps its standard output. */
export async function startServerProcess(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  options: { stdout?: boolean; program?: HangarProgram } = {},
): Promise<RunningServer> {
  const program = options.program ?? BUNDLED_CLI;
  const child = spawn(
    program.command,
    [...program.prefix, 'server', '--registry-addr', '127.0.0.1:0', '--secrets-addr', '127.0.0.1:0', '--catalog-addr', '127.0.0.1:0', '--dns-addr', '127.0.0.1:0', ...args],
    { env: { ...program.env, ...env }, stdio: ['ignore', options.stdout ? 'pipe' : 'ignore', 'pipe'] },
  );
  let stdout = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => (stdout += chunk));
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const urls = await new Promise<RunningServer['urls']>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server not ready after 20 s:\n${stderr}`)), 20_000);
    child.stderr!.on('data', (chunk: string) => {
      stderr += chunk;
      const m = /registry (\S+), secrets (\S+), catalog (\S+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve({ registry: m[1], secrets: m[2], catalog: m[3] });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${stderr}`));
    });
  });
  return {
    process: child,
    urls,
    dns: /^DNS: (\S+) /m.exec(stderr)?.[1],
    stderr: () => stderr,
    stdout: () => stdout,
    signal(signal) {
      process.kill(HAS_PROC ? servingPid(child.pid!) : child.pid!, signal);
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
