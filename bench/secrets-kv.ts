/**
 * KV v2 reads and writes per second next to a bare Fastify hello world and to token lookups
 * (`auth/token/lookup-self`), and transit encryption of 1 KiB plaintexts per second (single and
 * `batch_input` of 100) next to raw node:crypto AES-256-GCM on the same plaintexts, all in one run;
 * the transit rows also compare the server's CPU per plaintext with the raw loop's per encryption.
 * Measured as users measure: `hangar server --dev` (bundled CLI, SQLite) in its own process,
 * autocannon in another (bench/autocannon.ts), the bare Fastify baseline started the same way;
 * each HTTP row also reports the server's CPU per request. Loopback only; each row runs a fixed time.
 * With HANGAR_BENCH_VAULT naming a Vault binary (bench/public-services.ts), the same rows run against
 * Vault's dev server after Hangar's, and each row's ratio to it is recorded.
 *
 *   npx ts-node --transpile-only bench/secrets-kv.ts [--seconds 3] [--connections 50]
 */
import { createCipheriv, createSecretKey, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { LoadResult, measureBaseline, Measured, record, recordLoad, Runner, runnerFor, startHangar } from './autocannon';
import { runBenchmark } from './http-load';
import { compareWith, startVaultDev, vaultBinary } from './public-services';

const ROOT = 'bench-root-token';
const BATCH = 100;
const GROUP = 'secrets (sqlite)';
const TRANSIT_SINGLE = 'transit encrypt, 1 KiB, single';
const TRANSIT_BATCH = `transit encrypt, 1 KiB, batch of ${BATCH} (plaintexts/s)`;

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

/**
 * The rows against a server of the secrets API (Hangar or Vault). `secret/` is KV version 2 already:
 * both dev modes mount it. The reads go through a non-root token whose policy allows them, so the
 * ACL is checked each time.
 */
async function kvRows(url: string, plaintext: Buffer, run: Runner): Promise<Measured[]> {
  await call(`${url}/v1/sys/mounts/transit`, 'POST', ROOT, { type: 'transit' });
  await call(`${url}/v1/transit/keys/bench`, 'POST', ROOT, {});
  await call(`${url}/v1/secret/data/app/config`, 'POST', ROOT, { data: { user: 'app', password: randomBytes(16).toString('hex') } });
  await call(`${url}/v1/sys/policies/acl/app`, 'PUT', ROOT, {
    policy: 'path "secret/data/app/*" { capabilities = ["create", "read", "update"] }\npath "transit/encrypt/bench" { capabilities = ["update"] }',
  });
  const token = (await call(`${url}/v1/auth/token/create`, 'POST', ROOT, { policies: ['app'], ttl: '1h' })).auth.client_token as string;
  const headers = { 'x-vault-token': token, 'content-type': 'application/json' };
  const write = JSON.stringify({ data: { user: 'app', password: randomBytes(16).toString('hex') } });
  const b64 = plaintext.toString('base64');
  return [
    { name: 'token lookup-self (non-root token)', result: await run(`${url}/v1/auth/token/lookup-self`, { headers }) },
    { name: 'KV v2 read (non-root token, policy check)', result: await run(`${url}/v1/secret/data/app/config`, { headers }), goalRatio: 0.5 },
    { name: 'KV v2 write (a new version each, max 10 kept)', result: await run(`${url}/v1/secret/data/app/w`, { method: 'POST', headers, body: write }) },
    { name: TRANSIT_SINGLE, result: await run(`${url}/v1/transit/encrypt/bench`, { method: 'POST', headers, body: JSON.stringify({ plaintext: b64 }) }) },
    {
      name: TRANSIT_BATCH,
      result: await run(`${url}/v1/transit/encrypt/bench`, {
        method: 'POST', headers, body: JSON.stringify({ batch_input: Array.from({ length: BATCH }, () => ({ plaintext: b64 })) }),
      }),
    },
  ];
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '3' }, connections: { type: 'string', default: '50' } } });
  const load = { seconds: Number(values.seconds), connections: Number(values.connections) };
  const vault = vaultBinary();
  console.log(`node ${process.version}, autocannon -c ${load.connections} for ${load.seconds} s per row, storage sqlite` +
    (vault ? `; side by side: Vault ${vault.version} (dev server)` : ''));

  const baseline = await measureBaseline(load);
  const plaintext = randomBytes(1024);
  const raw = rawAesGcm(plaintext, load.seconds);
  const server = await startHangar(ROOT);
  let rows: Measured[];
  try {
    rows = await kvRows(server.urls.secrets, plaintext, runnerFor(server.process.pid!, load));
  } finally {
    await server.close();
  }
  for (const row of rows) {
    if (row.name === TRANSIT_SINGLE) recordTransit(row.name, row.result, 1, raw);
    else if (row.name === TRANSIT_BATCH) recordTransit(row.name, row.result, BATCH, raw, 0.5);
    else recordLoad(GROUP, row.name, row.result, baseline, row.goalRatio);
  }
  if (vault) await compareWith(await startVaultDev(vault, ROOT), load, GROUP, rows, (url, run) => kvRows(url, plaintext, run));
}

runBenchmark(main);
