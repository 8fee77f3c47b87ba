import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';

/**
 * Shared by the catalog benchmarks: a bare Fastify server in its own process (the baseline), and
 * the peak resident memory of a process.
 */

/**
 * A bare Fastify server: `GET /` answers hello world; `GET /wait` holds the request until
 * `POST /fire` (a long poll with nothing behind it). Answers its child process and URL.
 */
export async function startBaseline(): Promise<{ child: ChildProcess; url: string }> {
  const source = `
    const app = require('fastify')({ logger: false });
    let waiting = [];
    app.get('/', async () => ({ hello: 'world' }));
    app.get('/wait', () => new Promise((resolve) => waiting.push(resolve)));
    app.post('/fire', async () => { const w = waiting; waiting = []; w.forEach((r) => r({ fired: true })); return w.length; });
    app.listen({ port: 0, host: '127.0.0.1' }).then((address) => console.log(address));
  `;
  const child = spawn(process.execPath, ['-e', source], { cwd: process.cwd(), env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  return { child, url: chunk.toString().trim() };
}

/** Peak resident set size of a process (VmHWM), in MiB. */
export function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/**
 * Starts a process's peak RSS (VmHWM) again from its current RSS (Linux: 5 written to clear_refs),
 * so that a later peakRssMiB covers only what ran after.
 */
export function resetPeakRss(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** Current resident set size of a process (VmRSS), in MiB. */
export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}
