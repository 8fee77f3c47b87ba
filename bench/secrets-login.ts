/**
 * Throughput of the secrets service's hot paths: JWT logins per second (signature check, claims,
 * a new token sealed and stored) and token lookups per second (`auth/token/lookup-self`), next to a
 * bare Fastify hello world measured with the same client, concurrency and duration in the same run.
 * Everything on loopback; each phase runs for a fixed time and stops by itself.
 *
 *   npx ts-node --transpile-only bench/secrets-login.ts [--seconds 5] [--concurrency 16] [--storage sqlite|postgres]
 */
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { Pool } from 'undici';
import { line, load } from './http-load';
import { Engine } from '../src/engine/engine';
import { listen } from '../src/engine/http/server';
import { newKey, sign } from '../test/engine/secrets/jwt-helpers';
import { tempDir } from '../test/helpers/storage';

const ROOT = 'bench-root-token';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { seconds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '16' }, storage: { type: 'string', default: 'sqlite' } },
  });
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  console.log(`node ${process.version}, ${concurrency} concurrent clients, ${seconds} s per phase, storage ${values.storage}`);

  // Baseline: bare Fastify, one JSON route, same client settings.
  const bare = Fastify();
  bare.get('/hello', async () => ({ hello: 'world' }));
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`;
  const barePool = new Pool(bareUrl, { connections: concurrency });
  const baseline = await load(seconds, concurrency, async () => {
    const res = await barePool.request({ method: 'GET', path: '/hello' });
    await res.body.text();
  });
  await barePool.close();
  await bare.close();

  const dataDir = tempDir();
  const storage = values.storage === 'postgres'
    ? { kind: 'postgres' as const, url: process.env.HANGAR_BENCH_POSTGRES_URL ?? '' }
    : { kind: 'sqlite' as const, dataDir };
  if (storage.kind === 'postgres' && !storage.url) throw new Error('set HANGAR_BENCH_POSTGRES_URL for --storage postgres');
  const engine = await Engine.open({ storage, dataDir, devRootToken: ROOT });
  const urls = await listen(engine, { registry: '127.0.0.1:0', secrets: '127.0.0.1:0', catalog: '127.0.0.1:0' });
  const pool = new Pool(urls.secrets, { connections: concurrency });
  const call = async (method: 'GET' | 'POST', path: string, body?: unknown, token?: string) => {
    const res = await pool.request({
      method,
      path: `/v1/${path}`,
      headers: { 'content-type': 'application/json', ...(token ? { 'x-vault-token': token } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };

  try {
    const key = await newKey('bench', 'ES256');
    await call('POST', 'auth/jwt/config', { jwt_validation_pubkeys: [key.publicPem], bound_issuer: 'https://ci.example' }, ROOT);
    await call('POST', 'auth/jwt/role/ci', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'hangar', token_policies: 'default', token_ttl: '10m' }, ROOT);
    const jwt = await sign(key, { iss: 'https://ci.example', aud: 'hangar', sub: 'bench' }, Date.now(), {});
    const token = (await call('POST', 'auth/jwt/login', { role: 'ci', jwt })).auth.client_token as string;

    line('bare Fastify hello world (baseline)', baseline);
    line('token lookup-self (GET)', await load(seconds, concurrency, async () => void (await call('GET', 'auth/token/lookup-self', undefined, token))), baseline);
    line('JWT login (ES256, new token each)', await load(seconds, concurrency, async () => void (await call('POST', 'auth/jwt/login', { role: 'ci', jwt }))), baseline);
    const batchRole = { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'hangar', token_type: 'batch', token_ttl: '10m' };
    await call('POST', 'auth/jwt/role/batch', batchRole, ROOT);
    line('JWT login, batch tokens (not stored)', await load(seconds, concurrency, async () => void (await call('POST', 'auth/jwt/login', { role: 'batch', jwt }))), baseline);
  } finally {
    await pool.close();
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
