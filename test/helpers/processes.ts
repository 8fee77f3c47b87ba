import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** Whether this machine shows its processes in /proc (Linux); the tests below need it. */
export const HAS_PROC = existsSync('/proc/self/stat');

/**
 * The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses),
 * from field 3 (the state letter) on; undefined once the process is gone.
 */
export function statFields(pid: number | 'self'): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** A process's state letter and parent from /proc; undefined once it is gone. */
function stat(pid: number): { state: string; ppid: number } | undefined {
  const fields = statFields(pid);
  return fields && { state: fields[0], ppid: Number(fields[1]) };
}

/** A child of `pid`, if it has one. */
export function childOf(pid: number): number | undefined {
  const child = readdirSync('/proc').find((p) => /^\d+$/.test(p) && stat(Number(p))?.ppid === pid);
  return child === undefined ? undefined : Number(child);
}

/** `pid`'s youngest descendant: the server itself, when the CLI ran itself again on a newer Node.js. */
export function servingPid(pid: number): number {
  for (let child = childOf(pid); child !== undefined; child = childOf(pid)) pid = child;
  return pid;
}

/** Whether `pid` runs (a zombie awaiting its parent does not). */
export const isRunning = (pid: number): boolean => (stat(pid)?.state ?? 'Z') !== 'Z';

/** `pid`'s command line, as its arguments. */
export const commandLine = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

/** The environment `pid` started with (Linux), as NAME=value strings. */
export const environment = (pid: number): string[] => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
