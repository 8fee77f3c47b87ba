import { readdirSync } from 'node:fs';
import { statFields } from '../test/helpers/processes';

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks. */
const TICKS_PER_SECOND = 100;

/** utime + stime + cutime + cstime of one process, in ms (0 when it is gone). */
export function ownCpuMs(pid: number): number {
  const f = statFields(pid);
  return f ? ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / TICKS_PER_SECOND : 0;
}

/** CPU time (user + system, ms) of this process's children that have exited and been waited for. */
export function reapedChildrenCpuMs(): number {
  const f = statFields('self')!;
  return ((Number(f[13]) + Number(f[14])) * 1000) / TICKS_PER_SECOND;
}

/** The process and all its live descendants (a PostgreSQL postmaster and its backends). */
export function tree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    const fields = /^\d+$/.test(entry) ? statFields(Number(entry)) : undefined;
    if (!fields) continue; // not a process, or exited meanwhile
    const ppid = Number(fields[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const all = [root];
  for (let i = 0; i < all.length; i++) all.push(...(children.get(all[i]) ?? []));
  return all;
}

/**
 * CPU time (user + system, ms) used so far by a process and its descendants, exited ones included
 * once reaped. Read before and after a phase, it says where a 2-core machine's time went, which
 * request rates alone cannot. Linux only: undefined elsewhere.
 */
export function cpuMs(pid: number): number | undefined {
  try {
    readdirSync('/proc/self');
  } catch {
    return undefined;
  }
  return tree(pid).reduce((sum, p) => sum + ownCpuMs(p), 0);
}
