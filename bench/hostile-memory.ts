/**
 * Memory under hostile bodies: rounds of malformed and oversized requests (bodies at and past the
 * 1 MiB limit, labelled JSON, unlabelled JSON and raw catalog values, 400,000-deep arrays, invalid
 * JSON and UTF-8, 8 KB paths, made-up tokens) against one `hangar server --dev` process, the server's
 * RSS read after each round. The figure is whether RSS plateaus: the growth of the last round over
 * the one before, against the growth of the first round over the warm-up (the baseline).
 *
 *   npx ts-node --transpile-only bench/hostile-memory.ts [--rounds 6] [--requests 1000] [--concurrency 8] [--arena-max N]
 *     [--only near-limit,over-limit,deep,bad-utf8,bad-json,long-path]
 *
 * `--arena-max N` starts the server with MALLOC_ARENA_MAX=N (glibc), `--arena-max 0` with the variable unset.
 */
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { rssMiB } from './catalog-load';
import { startServerProcess } from '../test/helpers/cli';

const LIMIT = 1024 * 1024;
const ROOT = 'hostile-root-token';

type Api = 'registry' | 'secrets' | 'catalog';
interface Hostile {
  /** What is hostile about it (`--only` picks by this). */
  readonly kind: 'near-limit' | 'over-limit' | 'deep' | 'bad-utf8' | 'bad-json' | 'long-path';
  readonly api: Api;
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: Buffer;
}

/** The hostile mix, built once (its buffers are the client's, not the server's). */
export function hostileRequests(): Hostile[] {
  const filler = (n: number) => Buffer.from(JSON.stringify({ v: 'x'.repeat(n - 8) }));
  const nearLimit = filler(LIMIT - 64);
  const overLimit = filler(LIMIT + 10);
  const deep = Buffer.from('['.repeat(400_000) + ']'.repeat(400_000));
  const badJson = Buffer.concat([nearLimit.subarray(0, LIMIT - 100), Buffer.from('}}}')]);
  const badUtf8 = Buffer.concat([Buffer.from('{"v":"'), Buffer.alloc(LIMIT - 100, 0xc3), Buffer.from('"}')]);
  const json = { 'content-type': 'application/json' };
  const vault = { 'x-vault-token': 'hvs.made-up-token-0123456789' };
  const consul = { 'x-consul-token': '00000000-0000-4000-8000-000000000000' };
  const registry = { authorization: 'Bearer made-up-token-0123456789' };
  const longPath = 'a/'.repeat(4096);
  return [
    { kind: 'near-limit', api: 'secrets', method: 'POST', path: '/v1/secret/data/x', headers: { ...json, ...vault }, body: nearLimit },
    { kind: 'over-limit', api: 'secrets', method: 'POST', path: '/v1/secret/data/x', headers: { ...json, ...vault }, body: overLimit },
    { kind: 'near-limit', api: 'secrets', method: 'POST', path: '/v1/secret/data/x', headers: vault, body: nearLimit },
    { kind: 'over-limit', api: 'secrets', method: 'POST', path: '/v1/secret/data/x', headers: vault, body: overLimit },
    { kind: 'deep', api: 'secrets', method: 'PUT', path: '/v1/secret/data/x', headers: { ...json, ...vault }, body: deep },
    { kind: 'bad-utf8', api: 'secrets', method: 'PUT', path: '/v1/secret/data/x', headers: { ...json, ...vault }, body: badUtf8 },
    { kind: 'long-path', api: 'secrets', method: 'GET', path: `/v1/${longPath}`, headers: vault },
    { kind: 'near-limit', api: 'catalog', method: 'PUT', path: '/v1/kv/hostile', headers: consul, body: nearLimit },
    { kind: 'over-limit', api: 'catalog', method: 'PUT', path: '/v1/kv/hostile', headers: consul, body: overLimit },
    { kind: 'bad-json', api: 'catalog', method: 'PUT', path: '/v1/acl/policy', headers: { ...json, ...consul }, body: badJson },
    { kind: 'deep', api: 'catalog', method: 'PUT', path: '/v1/catalog/register', headers: { ...json, ...consul }, body: deep },
    { kind: 'long-path', api: 'catalog', method: 'GET', path: `/v1/kv/${longPath}`, headers: consul },
    { kind: 'near-limit', api: 'registry', method: 'PUT', path: '/api/v1/box/a/b', headers: { ...json, ...registry }, body: nearLimit },
    { kind: 'over-limit', api: 'registry', method: 'PUT', path: '/api/v1/box/a/b', headers: { ...json, ...registry }, body: overLimit },
    { kind: 'bad-json', api: 'registry', method: 'POST', path: '/api/v1/boxes', headers: { ...json, ...registry }, body: badJson },
    { kind: 'long-path', api: 'registry', method: 'GET', path: `/api/v1/box/${longPath}`, headers: registry },
  ];
}

/** Sends `count` requests of the mix, `concurrency` at a time; returns how many answered 5xx or failed. */
export async function sendHostile(pools: Record<Api, Pool>, mix: readonly Hostile[], count: number, concurrency: number): Promise<number> {
  let next = 0;
  let bad = 0;
  const worker = async () => {
    while (next < count) {
      const r = mix[next++ % mix.length];
      try {
        const res = await pools[r.api].request({ method: r.method as 'GET', path: r.path, headers: r.headers, body: r.body });
        await res.body.dump();
        if (res.statusCode >= 500) bad++;
      } catch {
        // A 413 may close the connection before the client finished sending: not the server's failure.
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return bad;
}

export interface HostileRun {
  readonly startMiB: number;
  readonly warmMiB: number;
  /** RSS after each round, MiB. */
  readonly rounds: number[];
  readonly errors: number;
}

/** A `hangar server --dev` process driven by `rounds` rounds of the hostile mix. */
export async function hostileRun(o: {
  rounds: number;
  requests: number;
  concurrency: number;
  env?: NodeJS.ProcessEnv;
  only?: readonly Hostile['kind'][];
  onRound?: (i: number, mib: number) => void;
}): Promise<HostileRun> {
  const server = await startServerProcess(['--dev', '--dev-root-token', ROOT, '--log-level', 'warn'], {
    HANGAR_REGISTRY_RATE_LIMIT_ADDRESS: '0',
    HANGAR_REGISTRY_RATE_LIMIT_TOKEN: '0',
    ...o.env,
  });
  const pid = server.process.pid!;
  const pools = {
    registry: new Pool(server.urls.registry, { connections: o.concurrency }),
    secrets: new Pool(server.urls.secrets, { connections: o.concurrency }),
    catalog: new Pool(server.urls.catalog, { connections: o.concurrency }),
  };
  try {
    const startMiB = rssMiB(pid);
    // Warm-up: every code path once, so the rounds measure what repeats.
    const mix = hostileRequests().filter((r) => !o.only || o.only.includes(r.kind));
    let errors = await sendHostile(pools, mix, mix.length * 4, o.concurrency);
    const warmMiB = rssMiB(pid);
    const rounds: number[] = [];
    for (let i = 0; i < o.rounds; i++) {
      errors += await sendHostile(pools, mix, o.requests, o.concurrency);
      rounds.push(rssMiB(pid));
      o.onRound?.(i + 1, rounds[i]);
    }
    return { startMiB, warmMiB, rounds, errors };
  } finally {
    await Promise.all(Object.values(pools).map((p) => p.close()));
    await server.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'rounds': { type: 'string', default: '6' },
      'requests': { type: 'string', default: '1000' },
      'concurrency': { type: 'string', default: '8' },
      'arena-max': { type: 'string' },
      'only': { type: 'string' },
    },
  });
  const env: NodeJS.ProcessEnv = {};
  if (values['arena-max'] !== undefined) env.MALLOC_ARENA_MAX = values['arena-max'] === '0' ? '' : values['arena-max'];
  const started = Date.now();
  const run = await hostileRun({
    rounds: Number(values.rounds),
    requests: Number(values.requests),
    concurrency: Number(values.concurrency),
    env,
    only: values.only?.split(',') as Hostile['kind'][] | undefined,
    onRound: (i, mib) => console.log(`round ${i}: RSS ${mib.toFixed(0)} MiB (${((Date.now() - started) / 1000).toFixed(0)} s)`),
  });
  const r = run.rounds;
  console.log(`start ${run.startMiB.toFixed(0)} MiB, after warm-up ${run.warmMiB.toFixed(0)} MiB, rounds ${r.map((x) => x.toFixed(0)).join(' ')} MiB; 5xx ${run.errors}`);
  console.log(`first round +${(r[0] - run.warmMiB).toFixed(0)} MiB over warm-up (baseline); last round ${r.length > 1 ? `${r.at(-1)! - r.at(-2)! >= 0 ? '+' : ''}${(r.at(-1)! - r.at(-2)!).toFixed(0)}` : 'n/a'} MiB over the one before`);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
