/**
 * Soak: mixed load on all three APIs of one `hangar server` process for a while, reporting each
 * interval (a minute unless told) the requests, errors, latency percentiles and the server's RSS.
 * The load runs in its own process (a few clients, each one request at a time), so its cost does not count
 * against the server; loopback only; it stops by itself after --minutes.
 *
 *   npm run soak -- [--minutes 10] [--workers 4] [--interval-seconds 60] [--postgres-url URL]
 *
 * Each worker loops over: catalog KV put/get, a session created, renewed and destroyed; a secrets
 * token created, looked up and revoked (a lease each), KV v1 write/read; a registry box read,
 * updated and searched. Every answer outside 2xx and every connection error counts as an error.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { rssMiB } from './catalog-load';
import { percentile, startDevServer } from './util';

const ROOT = 'soak-root-token';

/** Server environment for load tests: the registry's rate limits (6,000 requests a minute per token) off. */
export const UNLIMITED = { HANGAR_REGISTRY_RATE_LIMIT_ADDRESS: '0', HANGAR_REGISTRY_RATE_LIMIT_TOKEN: '0' } as const;

export interface SoakOptions {
  readonly minutes: number;
  /** Concurrent clients, each running the whole mix one request at a time. */
  readonly workers: number;
  readonly intervalSeconds: number;
  /** PostgreSQL storage instead of a temporary SQLite database. */
  readonly postgresUrl?: string;
  /** Called with each interval's row as it is measured. */
  readonly onInterval?: (row: SoakRow) => void;
}

export interface SoakRow {
  /** Seconds since the load began, at the end of the interval. */
  readonly at: number;
  readonly requests: number;
  readonly errors: number;
  /** Milliseconds. */
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  /** The server process's resident set size, MiB. */
  readonly rssMiB: number;
  /** Up to five failed requests of the interval, for the report. */
  readonly samples: readonly string[];
}

// The load process: the plan comes in as JSON on argv; each interval goes out as one JSON line.
const LOAD = `
  const { Pool } = require('undici');
  const o = JSON.parse(process.argv[1]);
  const pools = {};
  for (const api of ['registry', 'secrets', 'catalog']) pools[api] = new Pool(o.urls[api], { connections: o.workers });
  const auth = {
    registry: { authorization: 'Bearer ' + o.root },
    secrets: { 'x-vault-token': o.root },
    catalog: { 'x-consul-token': o.root },
  };
  let latencies = [], errors = 0, samples = [];
  async function call(api, method, path, body, token) {
    const started = performance.now();
    const headers = token ? { 'x-vault-token': token } : auth[api];
    let status = 0, text = '';
    try {
      const res = await pools[api].request({
        method, path, headers: { 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      text = String(err);
    }
    latencies.push(Math.round((performance.now() - started) * 100) / 100);
    if (status >= 200 && status < 300) return text ? JSON.parse(text) : undefined;
    errors++;
    if (samples.length < 5) samples.push(method + ' ' + path + ': ' + status + ' ' + text.slice(0, 200));
    return undefined;
  }
  async function worker(w, end) {
    for (let i = 0; Date.now() < end; i++) {
      const key = 'w' + w + '-k' + (i % 50);
      await call('catalog', 'PUT', '/v1/kv/soak/' + key, 'value ' + i);
      await call('catalog', 'GET', '/v1/kv/soak/' + key);
      const session = await call('catalog', 'PUT', '/v1/session/create', { TTL: '30s', Name: 'soak' });
      if (session) {
        await call('catalog', 'PUT', '/v1/session/renew/' + session.ID);
        await call('catalog', 'PUT', '/v1/session/destroy/' + session.ID);
      }
      const created = await call('secrets', 'POST', '/v1/auth/token/create', { ttl: '10m', policies: ['default'] });
      if (created) {
        await call('secrets', 'GET', '/v1/auth/token/lookup-self', undefined, created.auth.client_token);
        await call('secrets', 'POST', '/v1/auth/token/revoke-self', undefined, created.auth.client_token);
      }
      await call('secrets', 'PUT', '/v1/soak/' + key, { value: 'secret ' + i });
      await call('secrets', 'GET', '/v1/soak/' + key);
      await call('registry', 'GET', '/api/v1/box/soak/box' + w);
      await call('registry', 'PUT', '/api/v1/box/soak/box' + w, { box: { short_description: 'round ' + i } });
      await call('registry', 'GET', '/api/v1/search?q=box&limit=10');
    }
  }
  (async () => {
    const start = Date.now();
    const end = start + o.seconds * 1000;
    const timer = setInterval(() => {
      process.stdout.write(JSON.stringify({ at: Math.round((Date.now() - start) / 1000), latencies, errors, samples }) + '\\n');
      latencies = []; errors = 0; samples = [];
    }, o.intervalSeconds * 1000);
    await Promise.all(Array.from({ length: o.workers }, (_, w) => worker(w, end)));
    clearInterval(timer);
    if (latencies.length > 0) process.stdout.write(JSON.stringify({ at: Math.round((Date.now() - start) / 1000), latencies, errors, samples }) + '\\n');
    await Promise.all(Object.values(pools).map((p) => p.close()));
  })().catch((err) => { console.error(err); process.exit(1); });
`;

/** A JSON call made while preparing the soak; throws on anything but 2xx. */
async function setup(url: string, method: string, headers: Record<string, string>, body: unknown): Promise<void> {
  const res = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`soak setup: ${method} ${url}: ${res.status} ${await res.text()}`);
}

export type Urls = Record<'registry' | 'secrets' | 'catalog', string>;

/** What the load needs in the database, made once (several servers on one database share it). */
export async function prepareLoad(urls: Urls, root: string, workers: number): Promise<void> {
  await setup(`${urls.secrets}/v1/sys/mounts/soak`, 'POST', { 'x-vault-token': root }, { type: 'kv' });
  const admin = { authorization: `Bearer ${root}` };
  await setup(`${urls.registry}/api/v1/admin/users`, 'POST', admin, { user: { username: 'soak', password: 'soak soak soak soak', email: 'soak@example.com' } });
  for (let w = 0; w < workers; w++) {
    await setup(`${urls.registry}/api/v1/boxes`, 'POST', admin, { box: { username: 'soak', name: `box${w}`, is_private: false } });
  }
}

export type LoadInterval = Omit<SoakRow, 'rssMiB'>;

/**
 * Runs the load in its own process against one server's listeners; yields each interval as it
 * ends. Aborting `signal` stops the load process (a server killed under it, in a test).
 */
export async function* runLoad(
  urls: Urls,
  root: string,
  plan: { workers: number; seconds: number; intervalSeconds: number },
  signal?: AbortSignal,
): AsyncGenerator<LoadInterval> {
  const load = spawn(process.execPath, ['-e', LOAD, JSON.stringify({ urls, root, ...plan })], {
    cwd: join(__dirname, '..'),
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    signal,
  });
  load.on('error', () => undefined); // an abort; the exit below tells the rest
  let stderr = '';
  load.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => load.once('exit', resolve));
  for await (const line of createInterface({ input: load.stdout! })) {
    const interval = JSON.parse(line) as { at: number; latencies: number[]; errors: number; samples: string[] };
    const sorted = interval.latencies.sort((a, b) => a - b);
    yield {
      at: interval.at,
      requests: sorted.length,
      errors: interval.errors,
      p50: percentile(sorted, 50),
      p95: percentile(sorted, 95),
      p99: percentile(sorted, 99),
      samples: interval.samples,
    };
  }
  const code = await exited;
  if (code !== 0 && !signal?.aborted) throw new Error(`the load process exited with ${code}:\n${stderr}`);
}

/** Runs the soak; resolves to one row per interval. */
export async function runSoak(options: SoakOptions): Promise<SoakRow[]> {
  const storage = options.postgresUrl ? ['--storage', 'postgres', '--postgres-url', options.postgresUrl] : [];
  const server = await startDevServer(ROOT, storage, UNLIMITED);
  const rows: SoakRow[] = [];
  try {
    await prepareLoad(server.urls, ROOT, options.workers);
    const plan = { workers: options.workers, seconds: options.minutes * 60, intervalSeconds: options.intervalSeconds };
    for await (const interval of runLoad(server.urls, ROOT, plan)) {
      const row = { ...interval, rssMiB: rssMiB(server.process.pid!) };
      rows.push(row);
      options.onInterval?.(row);
    }
    return rows;
  } finally {
    await server.stop();
  }
}

export function formatRow(row: SoakRow): string {
  const ms = (n: number) => n.toFixed(1).padStart(7);
  return `| ${String(row.at).padStart(5)} s | ${String(row.requests).padStart(8)} | ${String(row.errors).padStart(6)} | ${ms(row.p50)} | ${ms(row.p95)} | ${ms(row.p99)} | ${row.rssMiB.toFixed(0).padStart(7)} |`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'minutes': { type: 'string', default: '10' },
      'workers': { type: 'string', default: '4' },
      'interval-seconds': { type: 'string', default: '60' },
      'postgres-url': { type: 'string' },
    },
  });
  const options = {
    minutes: Number(values.minutes),
    workers: Number(values.workers),
    intervalSeconds: Number(values['interval-seconds']),
    postgresUrl: values['postgres-url'],
  };
  if (!(options.minutes > 0 && options.workers >= 1 && options.intervalSeconds >= 1)) {
    throw new Error('--minutes must be above 0, --workers at least 1, --interval-seconds at least 1');
  }
  console.log(`soak: ${options.minutes} min, ${options.workers} clients, ${options.postgresUrl ? 'PostgreSQL' : 'SQLite'}, node ${process.version}`);
  console.log('|  time   | requests | errors | p50 ms  | p95 ms  | p99 ms  | RSS MiB |');
  console.log('|---------|----------|--------|---------|---------|---------|---------|');
  const rows = await runSoak({
    ...options,
    onInterval: (row) => {
      console.log(formatRow(row));
      for (const sample of row.samples) console.log(`  error: ${sample}`);
    },
  });
  const errors = rows.reduce((n, r) => n + r.errors, 0);
  const rss = rows.map((r) => r.rssMiB);
  console.log(`errors ${errors}; RSS first ${rss[0]?.toFixed(0)} MiB, last ${rss[rss.length - 1]?.toFixed(0)} MiB, max ${Math.max(...rss).toFixed(0)} MiB`);
  if (errors > 0) process.exitCode = 1;
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
