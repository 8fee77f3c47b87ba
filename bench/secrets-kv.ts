/**
 * KV v2 reads and writes per second next to a bare Fastify hello world and to token lookups
 * (`auth/token/lookup-self`), and transit encryption of 1 KiB plaintexts per second (single and
 * `batch_input` of 100) next to raw node:crypto AES-256-GCM on the same plaintexts, all in one run.
 * Everything on loopback; each phase runs for a fixed time and stops by itself.
 *
 *   npx ts-node --transpile-only bench/secrets-kv.ts [--seconds 5] [--concurrency 16]
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { Pool } from 'undici';
import { line, load, secretsCaller } from './http-load';
import { Engine } from '../src/engine/engine';
import { listen } from '../src/engine/http/server';
import { tempDir } from '../test/helpers/storage';

const ROOT = 'bench-root-token';
const BATCH = 100;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '16' } } });
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  console.log(`node ${process.version}, ${concurrency} concurrent clients, ${seconds} s per phase, storage sqlite`);

  const bare = Fastify();
  bare.get('/hello', async () => ({ hello: 'world' }));
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const barePool = new Pool(`http://127.0.0.1:${(bare.server.address() as { port: number }).port}`, { connections: concurrency });
  const baseline = await load(seconds, concurrency, async () => {
    await (await barePool.request({ method: 'GET', path: '/hello' })).body.text();
  });
  await barePool.close();
  await bare.close();

  // Raw AES-256-GCM on 1 KiB plaintexts in this thread, for `seconds`.
  const key = randomBytes(32);
  const plaintext = randomBytes(1024);
  let raw = 0;
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    for (let i = 0; i < 1000; i++) {
      const c = createCipheriv('aes-256-gcm', key, randomBytes(12));
      Buffer.concat([c.update(plaintext), c.final(), c.getAuthTag()]);
    }
    raw += 1000;
  }
  const rawRate = raw / seconds;

  const dataDir = tempDir();
  const engine = await Engine.open({ storage: { kind: 'sqlite', dataDir }, dataDir, devRootToken: ROOT });
  const urls = await listen(engine, { registry: '127.0.0.1:0', secrets: '127.0.0.1:0', catalog: '127.0.0.1:0' });
  const pool = new Pool(urls.secrets, { connections: concurrency });
  const { call, close } = secretsCaller(urls.secrets, ROOT, concurrency);
  try {
    // `secret/` is KV version 2 already: dev mode mounts it, as the public dev server does.
    await call('POST', 'sys/mounts/transit', { type: 'transit' });
    await call('POST', 'transit/keys/bench', {});
    await call('POST', 'secret/data/app/config', { data: { user: 'app', password: randomBytes(16).toString('hex') } });
    const token = await new Pool(urls.secrets).request({ method: 'POST', path: '/v1/auth/token/create', headers: { 'x-vault-token': ROOT }, body: '{}' });
    const child = JSON.parse(await token.body.text()).auth.client_token as string;

    line('bare Fastify hello world (baseline)', baseline);
    line('token lookup-self (GET)', await load(seconds, concurrency, async () => {
      const res = await pool.request({ method: 'GET', path: '/v1/auth/token/lookup-self', headers: { 'x-vault-token': child } });
      await res.body.text();
    }), baseline);
    line('KV v2 read (GET data/app/config)', await load(seconds, concurrency, () => call('GET', 'secret/data/app/config')), baseline);
    let n = 0;
    line('KV v2 write (new version, max 10)', await load(seconds, concurrency, () => call('POST', 'secret/data/app/w', { data: { n: ++n } })), baseline);

    const b64 = plaintext.toString('base64');
    console.log(`raw node:crypto AES-256-GCM, 1 KiB           ${rawRate.toFixed(0).padStart(8)} plaintexts/s (baseline)`);
    const single = await load(seconds, concurrency, () => call('POST', 'transit/encrypt/bench', { plaintext: b64 }));
    console.log(`transit encrypt, 1 KiB, single              ${single.rps.toFixed(0).padStart(8)} plaintexts/s  ${((single.rps / rawRate) * 100).toFixed(1)}% of raw`);
    const batchInput = Array.from({ length: BATCH }, () => ({ plaintext: b64 }));
    const batch = await load(seconds, concurrency, () => call('POST', 'transit/encrypt/bench', { batch_input: batchInput }));
    const batchRate = batch.rps * BATCH;
    console.log(`transit encrypt, 1 KiB, batch of ${BATCH}        ${batchRate.toFixed(0).padStart(8)} plaintexts/s  ${((batchRate / rawRate) * 100).toFixed(1)}% of raw`);
  } finally {
    await pool.close();
    await close();
    await engine.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
