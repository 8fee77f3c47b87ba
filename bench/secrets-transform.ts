/**
 * Transform engine throughput: FF3-1 encodes per second of a 16-digit card number in process
 * (the cipher alone, and through the card template), over HTTP, and tokenization encodes per second
 * on the internal store and the SQL store (a private PostgreSQL cluster from the machine's binaries,
 * or the server `--postgres` names). Baselines in the same run: the
 * raw AES-256 block rate of node:crypto (FF3-1 costs 8 blocks) and a bare Fastify hello world.
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
import { applyTemplate, TEMPLATES } from '../src/engine/secrets/engines/transform/templates';
import { tempDir } from '../test/helpers/storage';
import { findPostgresBin, startCluster, stopCluster, TestCluster } from '../test/setup/postgres';

const ROOT = 'bench-root-token';

/** Calls `fn` in a tight loop for `seconds`; returns calls per second. */
function rate(seconds: number, fn: () => void): number {
  let n = 0;
  const end = process.hrtime.bigint() + BigInt(seconds * 1e9);
  while (process.hrtime.bigint() < end) {
    for (let i = 0; i < 1000; i++) fn();
    n += 1000;
  }
  return n / seconds;
}

const per = (label: string, value: number, unit: string, note = '') => console.log(`${label.padEnd(48)} ${value.toFixed(0).padStart(10)} ${unit}${note}`);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { seconds: { type: 'string', default: '3' }, concurrency: { type: 'string', default: '16' }, postgres: { type: 'string' } },
  });
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  console.log(`node ${process.version}, ${seconds} s per phase, ${concurrency} concurrent HTTP clients, one process`);

  // In process: AES blocks (baseline), FF3-1 alone, FF3-1 through the card template.
  const key = randomBytes(32);
  const aes = createCipheriv('aes-256-ecb', key, null).setAutoPadding(false);
  const block = randomBytes(16);
  const blocks = rate(seconds, () => void aes.update(block));
  per('AES-256 block (node:crypto, baseline)', blocks, 'blocks/s');
  per('  = FF3-1 ceiling (8 blocks per encode)', blocks / 8, 'encodes/s');
  const ff = new FF31(key, 10);
  const tweak = randomBytes(7);
  const digits = Array.from('4111111111111111', Number);
  const raw = rate(seconds, () => void ff.encrypt(digits, tweak));
  per('FF3-1, 16 digits (cipher only)', raw, 'encodes/s', `  ${((blocks / 8 / raw)).toFixed(1)}x the AES cost of 8 blocks`);
  const alphabet = '0123456789';
  const template = TEMPLATES['builtin/creditcardnumber'];
  const templated = rate(seconds, () =>
    void applyTemplate(template, '4111-1111-1111-1111', (chars) => ff.encrypt(chars.map((c) => alphabet.indexOf(c)), tweak).map((d) => alphabet[d])),
  );
  per('FF3-1 through builtin/creditcardnumber', templated, 'encodes/s', '  goal >= 80000 per core');

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
