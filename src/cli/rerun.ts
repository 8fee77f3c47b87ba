/**
 * The environment variable node-fallback.ts sets on the CLI it runs again on a newer Node.js: the
 * PID of the process waiting for it. A process on a too old Node.js that finds it set is itself a
 * rerun and must not start another.
 */
export const RERUN_MARK = 'HANGAR_NODE_RERUN';

/**
 * Called by node-check in every CLI process. A rerun ends with the process that started it: that
 * process waits in `spawnSync` and cannot pass a signal on, so killed on its own (`kill PID`) it
 * would leave this one running, a server keeping its ports. Checked once a second; the mark is not
 * passed on to this process's own children.
 */
export function endWithRerunParent(): void {
  const parent = Number(process.env[RERUN_MARK]);
  delete process.env[RERUN_MARK];
  if (!parent || process.ppid !== parent) return;
  setInterval(() => {
    if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM');
  }, 1000).unref();
}
