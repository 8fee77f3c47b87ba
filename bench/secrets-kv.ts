/**
 * KV v2 reads and writes per second next to a bare Fastify hello world and to token lookups
 * (`auth/token/lookup-self`), and transit encryption of 1 KiB plaintexts per second (single and
 * `batch_input` of 100) next to raw node:crypto AES-256-GCM on the same plaintexts, all in one run;
 * the transit rows also compare the server's CPU per plaintext with the raw loop's per encryption.
 * Measured as users measure: `hangar server --dev` (bundled CLI, SQLite) in its own process,
 * autocannon in another (bench/autocannon.ts), the bare Fastify baseline started the same way;
 * each HTTP row also reports the server's CPU per request. Loopback only; each row runs a fixed time.
 *
 *   npx ts-node --transpile-only bench/secrets-kv.ts [--seconds 5] [--connections 50]
 */
import { createCipheriv, createSecretKey, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { autocannon, LoadResult, LoadTarget, measureBaseline, record, recordLoad, startHangar } from './autocannon';
import { runBenchmark } from './http-load';

const ROOT = 'bench-root-token';
const BATCH = 100;
const GROUP = 'secrets (sqlite)';

/** A JSON call to the secrets API; throws on a status of 300 or more. */
async function call(url: string, method: string, token: string, body?: unknown): Promise<any> {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', 'x-vault-token': token },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/**
 * Raw AES-256-GCM encryptions of `plaintext` per second in this thread, for `seconds`, and this
 * thread's CPU time per encryption. The key is a KeyObject made once: on Node 24 (OpenSSL 3) a raw
 * Buffer key is imported anew by every createCipheriv, which costs several times the encryption of
 * 1 KiB itself.
 */
function rawAesGcm(plaintext: Buffer, seconds: number): { rate: number; cpuUs: number } {
  const key = createSecretKey(randomBytes(32));
  let n = 0;
  const cpu = process.cpuUsage();
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    for (let i = 0; i < 1000; i++) {
      const c = createCipheriv('aes-256-gcm', key, randomBytes(12));
      Buffer.concat([c.update(plaintext), c.final(), c.getAuthTag()]);
    }
    n += 1000;
  }
  const used = process.cpuUsage(cpu);
  return { rate: n / seconds, cpuUs: (used.user + used.system) / n };
}

/**
 * Plaintexts per second (`perRequest` in each request) next to the raw rate, with the CPU ratio: the
 * raw loop's CPU per encryption ÷ the server's per plaintext.
 */
function recordTransit(name: string, r: LoadResult, perRequest: number, raw: { rate: number; cpuUs: number }, goal?: number): void {
  if (r.non2xx || r.errors) throw new Error(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  const each = (us: number) => `${us < 10 ? us.toFixed(1) : Math.round(us)} µs CPU each`;
  const rate = r.rps * perRequest;
  const cpuUsEach = r.cpuUs! / perRequest;
  const ratio = rate / raw.rate;
  const cpuRatio = raw.cpuUs / cpuUsEach;
  record({
    group: GROUP,
    name,
    figure: `${Math.round(rate).toLocaleString('en-US')}/s, ${each(cpuUsEach)}`,
    baseline: `raw AES-256-GCM ${Math.round(raw.rate).toLocaleString('en-US')}/s on one core, ${each(raw.cpuUs)}`,
    ratio,
    cpuRatio,
    // As for the HTTP rows: met only when the rate and the CPU cost both say so.
    ...(goal === undefined ? {} : { goal: `>= ${goal * 100}% of raw AES-GCM`, met: Math.min(ratio, cpuRatio) >= goal }),
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, connections: { type: 'string', default: '50' } } });
  const load = { seconds: Number(values.seconds), connections: Number(values.connections) };
  console.log(`node ${process.version}, autocannon -c ${load.connections} for ${load.seconds} s per row, storage sqlite`);

  const baseline = await measureBaseline(load);
  const plaintext = randomBytes(1024);
  const raw = rawAesGcm(plaintext, load.seconds);
  const server = await startHangar(ROOT);
  const secrets = server.urls.secrets;
  // Each row first warms its route up (JIT, caches) with a few hundred requests, not measured.
  const run = async (target: LoadTarget) => {
    await autocannon(target, { connections: 10, amount: 300 });
    return autocannon(target, load, server.process.pid);
  };
  try {
    // `secret/` is KV version 2 already: dev mode mounts it, as the public dev server does. The
    // reads go through a non-root token whose policy allows them, so the ACL is checked each time.
    await call(`${secrets}/v1/sys/mounts/transit`, 'POST', ROOT, { type: 'transit' });
    await call(`${secrets}/v1/transit/keys/bench`, 'POST', ROOT, {});
    await call(`${secrets}/v1/secret/data/app/config`, 'POST', ROOT, { data: { user: 'app', password: randomBytes(16).toString('hex') } });
    await call(`${secrets}/v1/sys/policies/acl/app`, 'PUT', ROOT, {
      policy: 'path "secret/data/app/*" { capabilities = ["create", "read", "update"] }\npath "transit/encrypt/bench" { capabilities = ["update"] }',
    });
    const token = (await call(`${secrets}/v1/auth/token/create`, 'POST', ROOT, { policies: ['app'], ttl: '1h' })).auth.client_token as string;
    const headers = { 'x-vault-token': token, 'content-type': 'application/json' };

    recordLoad(GROUP, 'token lookup-self (non-root token)', await run({ url: `${secrets}/v1/auth/token/lookup-self`, headers }), baseline);
    recordLoad(GROUP, 'KV v2 read (non-root token, policy check)', await run({ url: `${secrets}/v1/secret/data/app/config`, headers }), baseline, 0.5);
    const write = JSON.stringify({ data: { user: 'app', password: randomBytes(16).toString('hex') } });
    recordLoad(GROUP, 'KV v2 write (a new version each, max 10 kept)', await run({ url: `${secrets}/v1/secret/data/app/w`, method: 'POST', headers, body: write }), baseline);

    const b64 = plaintext.toString('base64');
    const single = await run({ url: `${secrets}/v1/transit/encrypt/bench`, method: 'POST', headers, body: JSON.stringify({ plaintext: b64 }) });
    recordTransit('transit encrypt, 1 KiB, single', single, 1, raw);
    const batchBody = JSON.stringify({ batch_input: Array.from({ length: BATCH }, () => ({ plaintext: b64 })) });
    const batch = await run({ url: `${secrets}/v1/transit/encrypt/bench`, method: 'POST', headers, body: batchBody });
    recordTransit(`transit encrypt, 1 KiB, batch of ${BATCH} (plaintexts/s)`, batch, BATCH, raw, 0.5);
  } finally {
    await server.close();
  }
}

runBenchmark(main);
