/**
 * `hangar server` runs with V8 flags that V8 reads only when a process starts, so a server started
 * without them replaces itself (same process, same PID: `process.execve`, Node.js >= 23.11 on Unix)
 * with one that has them. Flags the operator set (on node's command line or in NODE_OPTIONS) are
 * kept as they are.
 *
 * `--max-semi-space-size=8`: V8 sizes the young generation from the machine's memory, up to 64 MB
 * semi-spaces on a large one. A server's requests allocate off-heap buffers (bodies, answers,
 * ciphers' output) faster than they fill such a young generation, so its garbage was found by
 * full mark-compacts that V8 starts on external-memory pressure rather than by cheap scavenges:
 * a transit batch spent 17% of the main thread in them, and RSS grew to the young generation's
 * size. With 8 MB semi-spaces the same load scavenges instead (see docs/performance.md).
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];

/** A flag's name as V8 compares it: dashes and underscores are the same to it. */
const flagName = (flag: string) => flag.split('=')[0].replace(/_/g, '-');

/**
 * The flags the command in `argv` should run with that neither `execArgv` nor NODE_OPTIONS sets
 * (under any value); empty for every command but `server`.
 */
export function missingNodeFlags(argv: readonly string[], execArgv: readonly string[], nodeOptions = ''): string[] {
  if (argv[0] !== 'server' || argv.includes('--help') || argv.includes('-h')) return [];
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].filter((f) => f.startsWith('--')).map(flagName));
  return SERVER_NODE_FLAGS.filter((flag) => !given.has(flagName(flag)));
}

/** Called by node-check, before the CLI loads: replaces this process with one that has the missing flags. */
export function execWithNodeFlags(): void {
  const flags = missingNodeFlags(process.argv.slice(2), process.execArgv, process.env.NODE_OPTIONS);
  // Node.js 22 and Windows have no execve: the server runs without the flags there.
  if (flags.length === 0 || typeof process.execve !== 'function') return;
  try {
    process.execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)], process.env);
  } catch {
    // The flags only tune the collector: a process that cannot be replaced runs as it is.
  }
}
