import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { startBaseline } from './catalog-load';
import { ownCpuMs } from './cpu';
import { startDevServer } from './util';
import { RunningServer } from '../test/helpers/cli';
import { findPostgresBin, startCluster, stopCluster } from '../test/setup/postgres';

/**
 * HTTP load as users measure it: autocannon runs in its own process (so the client's cost does not
 * cap the server), against `hangar server` and a bare Fastify hello world, each in its own process.
 */

export interface LoadTarget {
  readonly url: string;
  readonly method?: 'GET' | 'PUT' | 'POST' | 'DELETE';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Paths cycled request after request (distinct session ids, keys); default: the URL's own path. */
  readonly paths?: readonly string[];
}

export interface LoadOptions {
  /** Connections kept open (autocannon -c); 50 unless given. */
  readonly connections?: number;
  /** Duration in seconds (autocannon -d); 5 unless given (HANGAR_BENCH_SECONDS overrides). */
  readonly seconds?: number;
  /** Stop after this many requests instead (a bounded series: one destroy per session). */
  readonly amount?: number;
}

export interface LoadResult {
  readonly rps: number;
  /** Latency percentiles in milliseconds. */
  readonly p50: number;
  readonly p99: number;
  readonly requests: number;
  /** Answers with a status outside 2xx, and connection errors or timeouts. */
  readonly non2xx: number;
  readonly errors: number;
  /**
   * CPU time (user + system) the server process spent per answered request, in microseconds, when
   * its pid was given: steadier than req/s on a loaded machine, since it does not count waiting.
   */
  readonly cpuUs?: number;
}

/** CPU time (user + system) a process has used so far, in microseconds (Linux /proc). */
export function cpuTimeUs(pid: number): number {
  return ownCpuMs(pid) * 1000;
}

// Runs inside the child process: the target comes in as JSON on stdin (a body may exceed argv's
// 128 KiB limit), the result goes out on stdout.
const CHILD = `
  const autocannon = require('autocannon');
  const o = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
  let i = 0;
  const request = { method: o.method, headers: o.headers, body: o.body };
  if (o.paths) request.setupRequest = (req) => ({ ...req, path: o.paths[i++ % o.paths.length] });
  autocannon({ url: o.url, connections: o.connections, duration: o.seconds, amount: o.amount, requests: [request] }, (err, r) => {
    if (err) { console.error(err); process.exit(1); }
    process.stdout.write(JSON.stringify({
      rps: r.requests.total / (r.duration || 1), p50: r.latency.p50, p99: r.latency.p99,
      requests: r.requests.total, non2xx: r.non2xx, errors: r.errors + r.timeouts,
    }));
  });
`;

/** Runs autocannon in a child process against one target; `serverPid` adds the server's CPU per request. */
export async function autocannon(target: LoadTarget, options: LoadOptions = {}, serverPid?: number): Promise<LoadResult> {
  const args = {
    ...target,
    method: target.method ?? 'GET',
    connections: options.connections ?? 50,
    seconds: Number(process.env.HANGAR_BENCH_SECONDS ?? options.seconds ?? 5),
    amount: options.amount,
  };
  const child = spawn(process.execPath, ['-e', CHILD], {
    cwd: process.cwd(),
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.stdin.end(JSON.stringify(args));
  const cpuBefore = serverPid === undefined ? 0 : cpuTimeUs(serverPid);
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`autocannon exited with ${code}`);
  const result = JSON.parse(out) as LoadResult;
  return serverPid === undefined ? result : { ...result, cpuUs: (cpuTimeUs(serverPid) - cpuBefore) / Math.max(1, result.requests) };
}

/** Measures one row against a server: a warm-up, then the timed load; or a bounded series as given. */
export type Runner = (url: string, target?: Omit<LoadTarget, 'url'>, bounded?: LoadOptions) => Promise<LoadResult>;

/**
 * Seconds of a row's own load, not measured, before its timed load. V8 optimizes a route's code per
 * thread as it runs: with 300 requests of warm-up, as before, the first 5 s of KV PUT at two workers
 * cost 76 µs of CPU per request and the next ones 57–62 µs (one worker: 55 µs, then 44–47 µs), so
 * the figure depended on how much of it was warm-up. Two seconds are 40,000 requests or more of a
 * row at the rates measured since (three before 27 Nov 2026, when `npm run bench` had outgrown its
 * ten minutes).
 */
export const WARM_UP_SECONDS = 2;

/**
 * The public services' warm-up: none. Their servers are compiled ahead of time, so a warm-up changes
 * nothing for them (measured with three seconds of it until 27 Nov 2026).
 */
export const PUBLIC_SERVICE_WARM_UP_SECONDS = 0;

/**
 * The runner of the server with process `pid`: each row first runs its own load for `warmUpSeconds`,
 * not measured, then `load`; a bounded series (`amount`) runs as given.
 */
export function runnerFor(pid: number, load: LoadOptions, warmUpSeconds = WARM_UP_SECONDS): Runner {
  return async (url, target = {}, bounded) => {
    if (bounded) return autocannon({ url, ...target }, bounded, pid);
    if (warmUpSeconds > 0) await autocannon({ url, ...target }, { connections: load.connections, seconds: warmUpSeconds });
    return autocannon({ url, ...target }, load, pid);
  };
}

/** One measured row: its name, the load's result, and the goal's share of bare Fastify, if any. */
export interface Measured {
  readonly name: string;
  readonly result: LoadResult;
  readonly goalRatio?: number;
}

/** One result: a figure next to its baseline, the ratio, and the goal it is held to. */
export interface Row {
  readonly group: string;
  readonly name: string;
  /** The figure as printed ("5,210 req/s", "3.1 ms p99"). */
  readonly figure: string;
  readonly baseline?: string;
  /** figure ÷ baseline (req/s ÷ req/s, ms ÷ ms): the goal says which way is better. */
  readonly ratio?: number;
  /** Baseline's server CPU per request ÷ this row's: the req/s ratio the CPU cost alone allows. */
  readonly cpuRatio?: number;
  readonly goal?: string;
  readonly met?: boolean;
  readonly command?: string;
}

/**
 * Prints a row and, when `HANGAR_BENCH_RESULTS` names a file (set by `npm run bench`), appends it
 * there as one JSON line for bench/results.md.
 */
export function record(row: Row): void {
  const ratio = (row.ratio === undefined ? '' : `  ratio ${row.ratio.toFixed(2)}`) + (row.cpuRatio === undefined ? '' : ` (CPU ${row.cpuRatio.toFixed(2)})`);
  const base = row.baseline ? `  (baseline ${row.baseline})` : '';
  const goal = row.goal ? `  goal ${row.goal}: ${row.met ? 'met' : 'NOT met'}` : '';
  console.log(`${`${row.group}: ${row.name}`.padEnd(58)} ${row.figure.padStart(16)}${base}${ratio}${goal}`);
  const file = process.env.HANGAR_BENCH_RESULTS;
  if (file) appendFileSync(file, `${JSON.stringify({ ...row, command: row.command ?? benchCommand() })}\n`);
}

function benchCommand(): string {
  const script = process.argv[1]?.replace(`${process.cwd()}/`, '') ?? '';
  return `npx ts-node --transpile-only ${script} ${process.argv.slice(2).join(' ')}`.trim();
}

export const reqs = (r: LoadResult): string =>
  `${Math.round(r.rps).toLocaleString('en-US')} req/s${r.cpuUs === undefined ? '' : `, ${Math.round(r.cpuUs)} µs CPU/req`}`;

/** Records a load result against the bare Fastify baseline's, with a goal on the ratio. */
export function recordLoad(group: string, name: string, r: LoadResult, baseline: LoadResult, goalRatio?: number): void {
  if (r.non2xx || r.errors) throw new Error(`${group} ${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  const ratio = r.rps / baseline.rps;
  const cpuRatio = r.cpuUs && baseline.cpuUs ? baseline.cpuUs / r.cpuUs : undefined;
  record({
    group,
    name,
    figure: reqs(r),
    baseline: `bare Fastify ${reqs(baseline)}`,
    ratio,
    ...(cpuRatio === undefined ? {} : { cpuRatio }),
    // Met only when both say so: on a busy machine a throttled baseline can make req/s look good.
    ...(goalRatio === undefined ? {} : { goal: `>= ${goalRatio * 100}% of bare Fastify`, met: Math.min(ratio, cpuRatio ?? ratio) >= goalRatio }),
  });
}

/** The bare Fastify hello world in its own process, measured once for the rows that follow. */
export async function measureBaseline(options: LoadOptions = {}): Promise<LoadResult> {
  const baseline = await startBaseline();
  try {
    await autocannon({ url: baseline.url }, { ...options, seconds: WARM_UP_SECONDS });
    const r = await autocannon({ url: baseline.url }, options, baseline.child.pid);
    record({ group: 'baseline', name: 'bare Fastify hello world', figure: reqs(r) });
    return r;
  } finally {
    baseline.child.kill();
  }
}

export interface StartedHangar extends RunningServer {
  /** Stops the server and the private PostgreSQL cluster, if any. */
  close(): Promise<void>;
}

/**
 * `hangar server --dev` from the bundled CLI, as users start it: SQLite by default, or a private
 * PostgreSQL cluster (temporary directory, free port) with `storage: 'postgres'`.
 */
export async function startHangar(
  rootToken: string,
  storage: 'sqlite' | 'postgres' = 'sqlite',
  args: readonly string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<StartedHangar> {
  let cluster: Awaited<ReturnType<typeof startCluster>> | undefined;
  const extra = [...args];
  if (storage === 'postgres') {
    const bin = findPostgresBin();
    if (!bin) throw new Error('PostgreSQL binaries not found: run scripts/setup');
    cluster = await startCluster(bin);
    extra.push('--storage', 'postgres', '--postgres-url', cluster.url);
  }
  const server = await startDevServer(rootToken, extra, env);
  return {
    ...server,
    async close() {
      await server.stop();
      if (cluster) stopCluster(cluster);
    },
  };
}

/** CPU model, cores, Node version and date, for the head of a results file. */
export function machineFacts(): string {
  const cpu = cpus();
  return `${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, Node ${process.version}, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
