/**
 * Transform engine throughput: FF3-1 encodes per second of a 16-digit card number in process
 * (the cipher alone, through the card template, and the engine's own per-value function; one value
 * per call and batches, whose values share each round's AES call), over HTTP (single values and
 * batch_input), and tokenization encodes per second on the internal store and the SQL store (a
 * private PostgreSQL cluster from the machine's binaries, or the server `--postgres` names).
 * Baselines in the same run: the raw AES-256 block rate of node:crypto three ways (a createCipheriv
 * per block, update() of one block on a long-lived cipher, which bounds one value's eight dependent
 * rounds, and update() of many blocks) and a bare Fastify hello world.
 *
 *   npx ts-node --transpile-only bench/secrets-transform.ts [--seconds 3] [--concurrency 16] [--postgres URL] [--in-process]
 *
 * `--in-process` stops after the in-process figures.
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { Pool } from 'undici';
import { line, load } from './http-load';
import { Engine } from '../src/engine/engine';
import { listen } from '../src/engine/http/server';
import { ALPHABETS } from '../src/engine/secrets/engines/transform/alphabets';
import { FF31 } from '../src/engine/secrets/engines/transform/ff3-1';
import { fpeCodec } from '../src/engine/secrets/engines/transform/fpe';
import { Loaded, transformItem } from '../src/engine/secrets/engines/transform/operations';
import { applyTemplate, TEMPLATES, templateSpans } from '../src/engine/secrets/engines/transform/templates';
import { Transformation } from '../src/engine/secrets/engines/transform/transformations';
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

/**
 * `rate` for several functions in turns of about 0.1 s each until each had `seconds`: on a shared
 * machine whose load changes from one second to the next, every row and the baseline it is compared
 * with see the same mix. Returns calls per CPU-second of each, by name.
 */
function rates(seconds: number, fns: Record<string, () => void>): Record<string, number> {
  const calls: Record<string, number> = {};
  const cpu: Record<string, number> = {};
  for (const [name, fn] of Object.entries(fns)) {
    for (let i = 0; i < 2000; i++) fn();
    calls[name] = 0;
    cpu[name] = 0;
  }
  for (let turn = 0; turn < Math.max(1, Math.round(seconds / 0.1)); turn++) {
    for (const [name, fn] of Object.entries(fns)) {
      const start = process.cpuUsage();
      const end = process.hrtime.bigint() + 100_000_000n;
      while (process.hrtime.bigint() < end) {
        for (let i = 0; i < 100; i++) fn();
        calls[name] += 100;
      }
      const used = process.cpuUsage(start);
      cpu[name] += (used.user + used.system) / 1e6;
    }
  }
  return Object.fromEntries(Object.keys(fns).map((name) => [name, calls[name] / cpu[name]]));
}

const per = (label: string, value: number, unit: string, note = '') => console.log(`${label.padEnd(60)} ${value.toFixed(0).padStart(10)} ${unit}${note}`);
const BATCH = 100;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'seconds': { type: 'string', default: '3' },
      'concurrency': { type: 'string', default: '16' },
      'postgres': { type: 'string' },
      'in-process': { type: 'boolean', default: false },
    },
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
  const many = Buffer.alloc(16 * BATCH);
  const bulk = rate(seconds / 2, () => void aes.update(many), BATCH);
  const ff = new FF31(key, 10);
  const tweak = randomBytes(7);
  const digits = Array.from('4111111111111111', Number);
  const xs = Array.from({ length: BATCH }, () => digits);
  const tweaks = Array.from({ length: BATCH }, () => tweak);
  const batched = rate(seconds, () => void ff.encryptAll(xs, tweaks), BATCH);
  // The card template: the general path (arrays of characters around FF31.encrypt), the codec the
  // engine uses, and the engine's own per-value function (the item's checks, the codec and tweak
  // lookups, the result object) on a loaded fpe transformation with an internal tweak.
  const alphabet = ALPHABETS['builtin/numeric'].alphabet;
  const templateName = 'builtin/creditcardnumber';
  const template = TEMPLATES[templateName];
  const card = '4111-1111-1111-1111';
  const toDigits = (chars: string[]) => chars.map((c) => alphabet.indexOf(c));
  const codec = fpeCodec(key.toString('base64'), alphabet);
  const t: Transformation = {
    type: 'fpe',
    template: templateName,
    tweak_source: 'internal',
    masking_character: '*',
    allowed_roles: ['bench'],
    mapping_mode: 'default',
    max_ttl: 0,
    stores: [],
    key: key.toString('base64'),
    tweak: tweak.toString('base64'),
  };
  const loaded: Loaded = { role: 'bench', transformations: ['ccn'], resolved: new Map([['ccn', { name: 'ccn', t, template, alphabet, stores: [], allowed: true }]]) };
  const item = { value: card, transformation: 'ccn' };
  // One value per call: the rows the goal is about, measured in turns with their baseline (the
  // general path, with its many short-lived arrays, apart: its garbage would be collected in others' turns).
  const one = rates(seconds * 4, {
    update: () => void aes.update(block),
    cipher: () => void ff.encrypt(digits, tweak),
    codec: () => void codec.run(template, templateName, card, tweak, true),
    engine: () => void transformItem('encode', loaded, item, 0, undefined, true),
  });
  const general = rate(seconds, () => void applyTemplate(template, card, (chars) => ff.encrypt(toDigits(chars), tweak).map((d) => alphabet[d])));
  const blocks = one.update;
  const x = (r: number) => `  ${(blocks / r).toFixed(1)}x one update()`;
  const goal = (r: number) => `${x(r)}; goal >= 80000 per core: ${r >= 80_000 ? 'met' : 'NOT met'}`;
  per('AES-256 block, update() of a long-lived cipher', blocks, 'blocks/s', `  = ${(blocks / 8).toFixed(0)} FF3-1 encodes/s at 8 calls each`);
  per(`AES-256 block, update() of ${BATCH} blocks at once`, bulk, 'blocks/s');
  per('FF3-1, 16 digits, one value (cipher only)', one.cipher, 'encodes/s', goal(one.cipher));
  per(`FF3-1, 16 digits, batches of ${BATCH} (cipher only)`, batched, 'encodes/s', x(batched));
  per(`FF3-1 through ${templateName}, one value (general path)`, general, 'encodes/s', x(general));
  per(`FF3-1 through ${templateName}, one value (codec)`, one.codec, 'encodes/s', goal(one.codec));
  per('FPE encode, one value, the engine per-value function', one.engine, 'encodes/s', goal(one.engine));
  const cards = Array.from({ length: BATCH }, (_, i) => `4111-1111-1111-${String(1000 + i)}`);
  const templatedBatch = rate(
    seconds,
    () => {
      const spans = cards.map((c) => templateSpans(template, c));
      const out = codec.cipher.encryptAll(cards.map((c, i) => codec.numerals(c, spans[i], templateName)), tweaks);
      cards.forEach((c, i) => codec.write(c, spans[i], out[i]));
    },
    BATCH,
  );
  per(`FF3-1 through ${templateName}, batches of ${BATCH}`, templatedBatch, 'encodes/s', goal(templatedBatch));
  if (values['in-process']) return;

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
