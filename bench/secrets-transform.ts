/**
 * Transform engine throughput: FF3-1 encodes per second of a 16-digit card number in process
 * (the cipher alone, and through the card template; one value per call and batches, whose values
 * share each round's AES call), over HTTP (single values and batch_input), and tokenization encodes
 * per second on the internal store and the SQL store (a private PostgreSQL cluster from the
 * machine's binaries, or the server `--postgres` names). Baselines in the same run: the raw AES-256
 * block rate of node:crypto three ways (a createCipheriv per block, update() of one block on a
 * long-lived cipher, which bounds one value's eight dependent rounds, and update() of many blocks)
 * and a bare Fastify hello world.
 *
 *   npx ts-node --transpile-only bench/secrets-transform.ts [--seconds 3] [--concurrency 16] [--postgres URL]
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { Pool } from 'undici';
import { line, load } from './http-load';
import { Engine } from '../src/engine/engine';
import { listen } from '../src/engine/http/server';
import { FF31 } from '../src/engine/secrets/engines/transform/ff3-1';
import { applyTemplate, fillTemplate, matchTemplate, TEMPLATES } from '../src/engine/secrets/engines/transform/templates';
import { tempDir } from '../test/helpers/storage';
import { findPostgresBin, startCluster, stopCluster, TestCluster } from '../test/setup/postgres';

const ROOT = 'bench-root-token';

/**
 * Calls `fn` in a tight loop for `seconds`; returns calls per CPU-second of this process (per core,
 * as the goal is stated: a shared machine's other load does not count), `per` units per call.
 */
function rate(seconds: number, fn: () => void, per = 1): number {
  for (let i = 0; i < 2000; i++) fn();
  let n = 0;
  const cpu = process.cpuUsage();
  const end = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  while (process.hrtime.bigint() < end) {
    for (let i = 0; i < 100; i++) fn();
    n += 100;
  }
  const used = process.cpuUsage(cpu);
  return (n * per) / ((used.user + used.system) / 1e6);
}

const per = (label: string, value: number, unit: string, note = '') => console.log(`${label.padEnd(52)} ${value.toFixed(0).padStart(10)} ${unit}${note}`);
const BATCH = 100;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { seconds: { type: 'string', default: '3' }, concurrency: { type: 'string', default: '16' }, postgres: { type: 'string' } },
  });
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  console.log(`node ${process.version}, ${seconds} s per phase, ${concurrency} concurrent HTTP clients, one process; in-process rates per CPU-second (per core)`);

  // In process: AES blocks three ways (baselines), FF3-1 alone and through the card template, one value and batches.
  const key = randomBytes(32);
  const block = randomBytes(16);
  const perCall = rate(seconds / 2, () => void createCipheriv('aes-256-ecb', key, null).setAutoPadding(false).update(block));
  per('AES-256 block, createCipheriv per block (baseline)', perCall, 'blocks/s');
  const aes = createCipheriv('aes-256-ecb', key, null).setAutoPadding(false);
  const blocks = rate(seconds, () => void aes.update(block));
  per('AES-256 block, update() of a long-lived cipher', blocks, 'blocks/s', `  = ${(blocks / 8).toFixed(0)} FF3-1 encodes/s at 8 calls each`);
  const many = Buffer.alloc(16 * BATCH);
  const bulk = rate(seconds / 2, () => void aes.update(many), BATCH);
  per(`AES-256 block, update() of ${BATCH} blocks at once`, bulk, 'blocks/s');
  const ff = new FF31(key, 10);
  const tweak = randomBytes(7);
  const digits = Array.from('4111111111111111', Number);
  const raw = rate(seconds, () => void ff.encrypt(digits, tweak));
  per('FF3-1, 16 digits, one value (cipher only)', raw, 'encodes/s', `  ${(blocks / raw).toFixed(1)}x one update(), ${(perCall / raw).toFixed(2)}x one createCipheriv block`);
  const xs = Array.from({ length: BATCH }, () => digits);
  const tweaks = Array.from({ length: BATCH }, () => tweak);
  const batched = rate(seconds, () => void ff.encryptAll(xs, tweaks), BATCH);
  per(`FF3-1, 16 digits, batches of ${BATCH} (cipher only)`, batched, 'encodes/s', `  ${(blocks / batched).toFixed(1)}x one update()`);
  const alphabet = '0123456789';
  const template = TEMPLATES['builtin/creditcardnumber'];
  const toDigits = (chars: string[]) => chars.map((c) => alphabet.indexOf(c));
  const templated = rate(seconds, () => void applyTemplate(template, '4111-1111-1111-1111', (chars) => ff.encrypt(toDigits(chars), tweak).map((d) => alphabet[d])));
  per('FF3-1 through builtin/creditcardnumber, one value', templated, 'encodes/s', `  goal >= 80000 per core: ${templated >= 80_000 ? 'met' : 'NOT met'}`);
  const cards = Array.from({ length: BATCH }, (_, i) => `4111-1111-1111-${String(1000 + i)}`);
  const templatedBatch = rate(
    seconds,
    () => {
      const matches = cards.map((card) => matchTemplate(template, card));
      const out = ff.encryptAll(matches.map((m) => toDigits(m.chars)), tweaks);
      matches.forEach((m, i) => fillTemplate(cards[i], m, out[i].map((d) => alphabet[d])));
    },
    BATCH,
  );
  per(`FF3-1 through builtin/creditcardnumber, batches of ${BATCH}`, templatedBatch, 'encodes/s', `  goal >= 80000 per core: ${templatedBatch >= 80_000 ? 'met' : 'NOT met'}`);

  // Over HTTP.
  const bare = Fastify();
  bare.post('/hello', async () => ({ hello: 'world' }));
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const barePool = new Pool(`http://127.0.0.1:${(bare.server.address() as { port: number }).port}`, { connections: concurrency });
  const baseline = await load(seconds, concurrency, async () => void (await (await barePool.request({ method: 'POST', path: '/hello', body: '{}' })).body.text()));
  await barePool.close();
  await bare.close();

  // The SQL store's database: the one named, else a private cluster stopped at the end.
  let cluster: TestCluster | undefined;
  let postgres = values.postgres;
  const bin = postgres ? undefined : findPostgresBin();
  if (bin) {
    cluster = await startCluster(bin);
    postgres = cluster.url;
  }
  if (!postgres) console.log('no PostgreSQL binaries and no --postgres: the SQL store is not measured');

  const dataDir = tempDir();
  const engine = await Engine.open({ storage: { kind: 'sqlite', dataDir }, dataDir, devRootToken: ROOT });
  const urls = await listen(engine, { registry: '127.0.0.1:0', secrets: '127.0.0.1:0', catalog: '127.0.0.1:0' });
  const pool = new Pool(urls.secrets, { connections: concurrency });
  const call = async (path: string, body: unknown) => {
    const res = await pool.request({ method: 'POST', path: `/v1/transform/${path}`, headers: { 'content-type': 'application/json', 'x-vault-token': ROOT }, body: JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${path}: ${res.statusCode} ${text}`);
  };
  try {
    await call('transformations/fpe/ccn', { template: 'builtin/creditcardnumber', tweak_source: 'internal', allowed_roles: ['bench'] });
    await call('transformations/tokenization/tok', { allowed_roles: ['bench'] });
    const roles = ['ccn', 'tok'];
    if (postgres) {
      const u = new URL(postgres);
      // A trusting cluster ignores the password, which the store still requires.
      const [user, password] = [decodeURIComponent(u.username), decodeURIComponent(u.password) || 'unused-with-trust'];
      u.username = '{{username}}';
      u.password = '{{password}}';
      const connection = u.toString().replace('%7B%7Busername%7D%7D', '{{username}}').replace('%7B%7Bpassword%7D%7D', '{{password}}');
      await call('store/pg', { type: 'sql', driver: 'postgres', connection_string: connection, username: user, password, schema: 'hangar_bench', max_open_connections: concurrency });
      await call('store/pg/schema', { username: user, password });
      await call('transformations/tokenization/sqltok', { allowed_roles: ['bench'], stores: ['pg'] });
      roles.push('sqltok');
    }
    await call('role/bench', { transformations: roles });
    line('bare Fastify hello world (baseline)', baseline);
    line('FPE encode over HTTP (card number)', await load(seconds, concurrency, () => call('encode/bench', { value: '4111-1111-1111-1111', transformation: 'ccn' })), baseline);
    const batchBody = { batch_input: cards.map((value) => ({ value, transformation: 'ccn' })) };
    const overHttp = await load(seconds, concurrency, () => call('encode/bench', batchBody));
    per(`FPE encode over HTTP, batch_input of ${BATCH} cards`, overHttp.rps * BATCH, 'encodes/s', `  (${overHttp.rps.toFixed(0)} requests/s, p50 ${overHttp.p50.toFixed(1)} ms)`);
    line('tokenization encode, builtin/internal', await load(seconds, concurrency, () => call('encode/bench', { value: '4111-1111-1111-1111', transformation: 'tok' })), baseline);
    if (postgres) {
      line('tokenization encode, sql store (PostgreSQL)', await load(seconds, concurrency, () => call('encode/bench', { value: '4111-1111-1111-1111', transformation: 'sqltok' })), baseline);
    }
  } finally {
    await pool.close();
    await engine.close();
    if (cluster) stopCluster(cluster);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
