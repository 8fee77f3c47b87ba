/**
 * Session and lock throughput of the catalog against `hangar server` (SQLite, --dev): session
 * create, renew and destroy per second, and KV acquire + release per second, each with a fixed
 * number of requests in flight, next to a bare Fastify hello world measured in the same run.
 * Loopback only; bounded by --ops per operation.
 *
 *   npx ts-node --transpile-only bench/catalog-sessions.ts [--ops 3000] [--concurrency 16]
 */
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { startBaseline } from './catalog-load';
import { startServerProcess } from '../test/helpers/cli';

const TOKEN = 'bench-catalog-root';

/** Runs `ops` requests made by `make(i)`, `concurrency` at a time; answers requests per second. */
async function rate(concurrency: number, ops: number, make: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ops) await make(next++);
    }),
  );
  return ops / (Number(process.hrtime.bigint() - start) / 1e9);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { ops: { type: 'string', default: '3000' }, concurrency: { type: 'string', default: '16' } } });
  const ops = Number(values.ops);
  const concurrency = Number(values.concurrency);
  console.log(`node ${process.version}, ${ops} requests per operation, ${concurrency} in flight`);

  const baseline = await startBaseline();
  const server = await startServerProcess(['--dev', '--dev-root-token', TOKEN, '--log-level', 'error']);
  const base = new Pool(baseline.url, { connections: concurrency });
  const pool = new Pool(server.urls.catalog, { connections: concurrency });
  const headers = { 'x-consul-token': TOKEN };
  const call = async (p: Pool, method: 'GET' | 'PUT', path: string, body?: string): Promise<any> => {
    const res = await p.request({ method, path, headers, body });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
    return JSON.parse(text);
  };
  const line = (name: string, perSecond: number, baselineRate?: number) =>
    console.log(`${name.padEnd(40)} ${perSecond.toFixed(0).padStart(7)} /s${baselineRate ? `  (${((perSecond / baselineRate) * 100).toFixed(0)}% of baseline)` : ''}`);
  try {
    // Warm both servers up.
    await rate(concurrency, 200, () => call(base, 'GET', '/'));
    await rate(concurrency, 200, () => call(pool, 'GET', '/v1/status/leader'));

    const hello = await rate(concurrency, ops, () => call(base, 'GET', '/'));
    line('bare Fastify hello world (baseline)', hello);
    line('GET /v1/status/leader (no storage)', await rate(concurrency, ops, () => call(pool, 'GET', '/v1/status/leader')), hello);

    const ids: string[] = [];
    line('session create', await rate(concurrency, ops, async (i) => {
      ids[i] = (await call(pool, 'PUT', '/v1/session/create', JSON.stringify({ TTL: '60s', LockDelay: '1ms' }))).ID;
    }), hello);
    line('session renew', await rate(concurrency, ops, (i) => call(pool, 'PUT', `/v1/session/renew/${ids[i]}`)), hello);
    line('KV acquire + release (2 requests each)', (await rate(concurrency, ops, async (i) => {
      const key = `/v1/kv/bench/lock-${i % (concurrency * 4)}`;
      // Locks on a few keys: an acquire may lose to another session; either answer is a full round trip.
      if ((await call(pool, 'PUT', `${key}?acquire=${ids[i]}`, 'x')) === true) await call(pool, 'PUT', `${key}?release=${ids[i]}`, 'x');
      else await call(pool, 'GET', key);
    })) * 2, hello);
    line('session destroy', await rate(concurrency, ops, (i) => call(pool, 'PUT', `/v1/session/destroy/${ids[i]}`)), hello);
  } finally {
    await base.close();
    await pool.close();
    baseline.child.kill();
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
