import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** Whether this machine shows its processes in /proc (Linux); the tests below need it. */
export const HAS_PROC = existsSync('/proc/self/stat');

/** A process's state letter and parent from /proc; undefined once it is gone. */
function stat(pid: number | string): { state: string; ppid: number } | undefined {
  try {
    const [state, ppid] = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return { state, ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}

/** A child of `pid`, if it has one. */
export function childOf(pid: number): number | undefined {
  const child = readdirSync('/proc').find((p) => /^\d+$/.test(p) && stat(p)?.ppid === pid);
  return child === undefined ? undefined : Number(child);
}

/** Whether `pid` runs (a zombie awaiting its parent does not). */
export const isRunning = (pid: number): boolean => (stat(pid)?.state ?? 'Z') !== 'Z';

/** `pid`'s command line, as its arguments. */
export const commandLine = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
