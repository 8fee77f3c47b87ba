/**
 * `hangar server` runs with V8 flags that V8 reads only when a process starts, and with a malloc
 * setting that glibc reads only when a process starts, so a server started without them replaces
 * itself (same process, same PID: `process.execve`, Node.js >= 23.11 on Unix) with one that has them.
 * Flags and settings the operator gave (on node's command line, in NODE_OPTIONS, GLIBC_TUNABLES or
 * MALLOC_ARENA_MAX) are kept as they are. docs/performance.md has the measurements behind each.
 *
 * `--max-semi-space-size=8`: V8 sizes the young generation from the machine's memory, up to 64 MB
 * semi-spaces on a large one. A server's requests allocate off-heap buffers (bodies, answers,
 * ciphers' output) faster than they fill such a young generation, so its garbage was found by
 * full mark-compacts that V8 starts on external-memory pressure rather than by cheap scavenges:
 * a transit batch spent 17% of the main thread in them, and RSS grew to the young generation's
 * size. With 8 MB semi-spaces the same load scavenges instead.
 *
 * `--heap-growing-percent=100`: after each full collection V8 lets the old generation grow to up to
 * four times what survived before it collects again, when collecting looks cheap next to the
 * program's allocation, as it does for a server whose live heap is a few tens of MiB. Under steady
 * load the heap then held two to three times its live objects as garbage. Growing to twice what
 * survived keeps RSS near the live heap for a few percent more CPU where garbage is most (a transit
 * batch); growing by half cost such a request 15%.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8', '--heap-growing-percent=100'];

/**
 * glibc gives each thread that allocates while others do an arena of its own, up to eight per core;
 * Node's libuv and V8 worker threads then each keep freed memory in theirs. Two arenas (the main
 * thread's and one the helper threads share) held 4–5 MiB less at rest and 10–15 MiB less under load.
 */
const MALLOC_TUNABLE = 'glibc.malloc.arena_max=2';

/** A flag's name as V8 compares it: dashes and underscores are the same to it. */
const flagName = (flag: string) => flag.split('=')[0].replace(/_/g, '-');

/**
 * The commands that run with the server's flags: the server, and the backup and restore, which
 * stream a whole database through a young generation that would otherwise grow to its largest
 * (a backup of 300,000 rows peaked at 261 MiB RSS with V8's default semi-spaces, 155 MiB with 2 MB ones).
 */
const LONG_RUNNING = ['server', 'operator backup', 'operator restore'];

const isServer = (argv: readonly string[]) =>
  (LONG_RUNNING.includes(argv[0]) || LONG_RUNNING.includes(`${argv[0]} ${argv[1]}`)) && !argv.includes('--help') && !argv.includes('-h');

/**
 * The flags the command in `argv` should run with that neither `execArgv` nor NODE_OPTIONS sets
 * (under any value); empty for every command but `server`.
 */
export function missingNodeFlags(argv: readonly string[], execArgv: readonly string[], nodeOptions = ''): string[] {
  if (!isServer(argv)) return [];
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].filter((f) => f.startsWith('--')).map(flagName));
  return SERVER_NODE_FLAGS.filter((flag) => !given.has(flagName(flag)));
}

/**
 * The environment the command in `argv` should run with when `env` lacks the server's malloc
 * setting (an arena limit neither in GLIBC_TUNABLES nor in MALLOC_ARENA_MAX); undefined when
 * nothing is missing. Other libcs ignore the variable.
 */
export function missingServerEnv(argv: readonly string[], env: NodeJS.ProcessEnv): NodeJS.ProcessEnv | undefined {
  const tunables = env.GLIBC_TUNABLES ?? '';
  if (!isServer(argv) || env.MALLOC_ARENA_MAX || /(^|:)glibc\.malloc\.arena_max=/.test(tunables)) return undefined;
  return { ...env, GLIBC_TUNABLES: tunables ? `${tunables}:${MALLOC_TUNABLE}` : MALLOC_TUNABLE };
}

/** What replaces this process: the program, its argv (argv[0] included) and its environment. */
export interface Reexec {
  readonly file: string;
  readonly args: string[];
  readonly env: NodeJS.ProcessEnv;
}

/**
 * How to run this command again with `flags` and `env`. A Node.js single executable application (the
 * one-file `hangar` of scripts/build-executable) takes every argument as the CLI's own and has no
 * script argument (its argv[1] repeats argv[0]); it starts with the server's flags already (its
 * `execArgv`, set when it is built, since NODE_OPTIONS refuses --heap-growing-percent), so only the
 * environment changes there.
 */
export function reexecCommand(flags: readonly string[], env: NodeJS.ProcessEnv, single: boolean, proc: Pick<NodeJS.Process, 'execPath' | 'execArgv' | 'argv'> = process): Reexec {
  const args = single ? [proc.execPath, ...proc.argv.slice(2)] : [proc.execPath, ...flags, ...proc.execArgv, ...proc.argv.slice(1)];
  return { file: proc.execPath, args, env };
}

/** Whether this process is a single executable application (node:sea exists from Node.js 20 on). */
export function isSingleExecutable(): boolean {
  try {
    return (require('node:sea') as { isSea(): boolean }).isSea();
  } catch {
    return false;
  }
}

/** Called by node-check, before the CLI loads: replaces this process with one that has what is missing. */
export function execWithNodeFlags(): void {
  const argv = process.argv.slice(2);
  const flags = missingNodeFlags(argv, process.execArgv, process.env.NODE_OPTIONS);
  const env = missingServerEnv(argv, process.env);
  // Node.js 22 and Windows have no execve: the server runs without the flags there.
  if ((flags.length === 0 && !env) || typeof process.execve !== 'function') return;
  // A worker thread of the server (`--workers`) runs in the process its main thread set up.
  if (!(require('node:worker_threads') as typeof import('node:worker_threads')).isMainThread) return;
  const next = reexecCommand(flags, env ?? process.env, isSingleExecutable());
  try {
    process.execve(next.file, next.args, next.env);
  } catch {
    // The flags only tune memory: a process that cannot be replaced runs as it is.
  }
}
