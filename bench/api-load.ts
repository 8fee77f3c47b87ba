/**
 * The hot paths of the three APIs measured as users measure them: `hangar server --dev` (bundled
 * CLI, SQLite or a private PostgreSQL) in its own process, autocannon (-c 50) in another, and a
 * bare Fastify hello world started the same way as the baseline, in the same run. JWT login is
 * also held to a raw ES256 verify loop (node:crypto, this process, one core). Loopback only; each
 * row runs a fixed time (--seconds) and stops by itself.
 *
 *   npx ts-node --transpile-only bench/api-load.ts [--seconds 5] [--connections 50] [--storage sqlite|postgres]
 */
import { createPublicKey, verify } from 'node:crypto';
import { parseArgs } from 'node:util';
import { autocannon, measureBaseline, record, recordLoad, reqs, startHangar } from './autocannon';
import { rssMiB } from './catalog-load';
import { newKey, sign } from '../test/engine/secrets/jwt-helpers';
import { hangar } from '../test/helpers/cli';

const ROOT = 'bench-root-token';

/** A JSON call to one of the APIs; throws on a status of 300 or more. */
async function call(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<any> {
  const res = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Raw ES256 verifications on this process's one core for `seconds`: per second, and CPU µs each. */
function es256VerifyRate(jwt: string, publicPem: string, seconds: number): { rate: number; cpuUs: number } {
  const key = createPublicKey(publicPem);
  const [h, p, s] = jwt.split('.');
  const data = Buffer.from(`${h}.${p}`);
  const signature = Buffer.from(s, 'base64url');
  let n = 0;
  const cpu = process.cpuUsage();
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    for (let i = 0; i < 100; i++) if (verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature)) n++;
  }
  const used = process.cpuUsage(cpu);
  return { rate: n / seconds, cpuUs: (used.user + used.system) / n };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { seconds: { type: 'string', default: '5' }, connections: { type: 'string', default: '50' }, storage: { type: 'string', default: 'sqlite' } },
  });
  const storage = values.storage === 'postgres' ? 'postgres' : 'sqlite';
  const load = { seconds: Number(values.seconds), connections: Number(values.connections) };
  console.log(`node ${process.version}, autocannon -c ${load.connections} for ${load.seconds} s per row, storage ${storage}`);

  const baseline = await measureBaseline(load);
  // The registry's rate limits (6,000 requests a minute per address) would answer 429 to a load test.
  const server = await startHangar(ROOT, storage, [], { HANGAR_REGISTRY_RATE_LIMIT_ADDRESS: '0', HANGAR_REGISTRY_RATE_LIMIT_TOKEN: '0' });
  const { secrets, catalog, registry } = server.urls;
  // Each row first warms its route up (JIT, caches) with a few hundred requests, not measured.
  const run = async (url: string, target: Omit<Parameters<typeof autocannon>[0], 'url'> = {}) => {
    await autocannon({ url, ...target }, { connections: 10, amount: 300 });
    return autocannon({ url, ...target }, load, server.process.pid);
  };
  const group = (service: string) => `${service} (${storage})`;
  try {
    // Secrets: a KV v1 mount, a policy that reads it, and a non-root token holding that policy.
    const root = { 'x-vault-token': ROOT };
    await call(`${secrets}/v1/sys/mounts/kv`, 'POST', root, { type: 'kv', options: { version: '1' } });
    await call(`${secrets}/v1/kv/app`, 'POST', root, { user: 'app', password: 'secret' });
    await call(`${secrets}/v1/sys/policies/acl/reader`, 'PUT', root, { policy: 'path "kv/*" { capabilities = ["read"] }' });
    const token = (await call(`${secrets}/v1/auth/token/create`, 'POST', root, { policies: ['reader'], ttl: '1h' })).auth.client_token as string;
    const user = { 'x-vault-token': token };
    const lookup = await run(`${secrets}/v1/auth/token/lookup-self`, { headers: user });
    recordLoad(group('secrets'), 'token lookup-self (non-root token)', lookup, baseline, 0.5);
    recordLoad(group('secrets'), 'KV read with a policy check (non-root token)', await run(`${secrets}/v1/kv/app`, { headers: user }), baseline);
    recordLoad(group('secrets'), 'token renew-self (the token\'s lease)', await run(`${secrets}/v1/auth/token/renew-self`, {
      method: 'POST', headers: { ...user, 'content-type': 'application/json' }, body: '{}',
    }), baseline);

    await call(`${secrets}/v1/sys/auth/jwt`, 'POST', root, { type: 'jwt' }).catch(() => undefined);
    const key = await newKey('bench', 'ES256');
    await call(`${secrets}/v1/auth/jwt/config`, 'POST', root, { jwt_validation_pubkeys: [key.publicPem], bound_issuer: 'https://ci.example' });
    await call(`${secrets}/v1/auth/jwt/role/ci`, 'POST', root, { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'hangar', token_policies: 'default', token_ttl: '10m' });
    const jwt = await sign(key, { iss: 'https://ci.example', aud: 'hangar', sub: 'bench' }, Date.now(), {});
    const login = await run(`${secrets}/v1/auth/jwt/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ role: 'ci', jwt }) });
    const raw = es256VerifyRate(jwt, key.publicPem, 2);
    if (login.non2xx || login.errors) throw new Error(`JWT login: ${login.non2xx} non-2xx answers, ${login.errors} errors`);
    record({
      group: group('secrets'),
      name: 'JWT login (ES256, a new service token each)',
      figure: reqs(login),
      baseline: `raw ES256 verify ${Math.round(raw.rate).toLocaleString('en-US')}/s on one core, ${Math.round(raw.cpuUs)} µs CPU each`,
      ratio: login.rps / raw.rate,
      // The CPU a verify costs ÷ the server's CPU per login: the rate ratio the CPU cost alone allows.
      ...(login.cpuUs ? { cpuRatio: raw.cpuUs / login.cpuUs } : {}),
      goal: '>= 50% of raw verify and > 2,600/s (Vault dev)',
      met: login.rps >= raw.rate / 2 && login.rps > 2600,
    });

    // Catalog.
    const consul = { 'x-consul-token': ROOT };
    await call(`${catalog}/v1/kv/bench/read`, 'PUT', consul, 'value');
    // The floor of Hangar's HTTP layer: routing, hooks, metrics and the error envelope, no transaction.
    const unknown = await run(`${catalog}/v1/no-such-endpoint`, { headers: consul });
    if (unknown.non2xx !== unknown.requests || unknown.errors) throw new Error('an unknown endpoint answered other than 404');
    recordLoad(group('catalog'), 'unknown endpoint (the 404 floor: no transaction)', { ...unknown, non2xx: 0 }, baseline);
    recordLoad(group('catalog'), 'status/leader', await run(`${catalog}/v1/status/leader`, { headers: consul }), baseline);
    recordLoad(group('catalog'), 'KV GET', await run(`${catalog}/v1/kv/bench/read`, { headers: consul }), baseline, 0.5);
    const keys = Array.from({ length: 1000 }, (_, i) => `/v1/kv/bench/put-${i}`);
    recordLoad(group('catalog'), 'KV PUT (1,000 keys)', await run(catalog, { method: 'PUT', headers: consul, body: 'value', paths: keys }), baseline);
    const register = JSON.stringify({ Node: 'bench-node', Address: '10.0.0.1', Service: { Service: 'web', Port: 80 } });
    recordLoad(group('catalog'), 'catalog/register (one node and service)', await run(`${catalog}/v1/catalog/register`, { method: 'PUT', headers: consul, body: register }), baseline);

    const created = await run(`${catalog}/v1/session/create`, { method: 'PUT', headers: consul, body: JSON.stringify({ TTL: '600s', LockDelay: '1ms' }) });
    recordLoad(group('catalog'), 'session create', created, baseline);
    const sessions = ((await call(`${catalog}/v1/session/list`, 'GET', consul)) as { ID: string }[]).map((s) => s.ID);
    const renew = await run(catalog, { method: 'PUT', headers: consul, paths: sessions.map((id) => `/v1/session/renew/${id}`) });
    recordLoad(group('catalog'), `session renew (${sessions.length.toLocaleString('en-US')} sessions)`, renew, baseline);
    // One destroy per session: a bounded series, not a timed one.
    const started = Date.now();
    const destroyed = await autocannon(
      { url: catalog, method: 'PUT', headers: consul, paths: sessions.map((id) => `/v1/session/destroy/${id}`) },
      { connections: load.connections, amount: sessions.length },
      server.process.pid,
    );
    recordLoad(group('catalog'), 'session destroy', { ...destroyed, rps: sessions.length / ((Date.now() - started) / 1000) }, baseline);

    // Registry: an anonymous read of a public box.
    const created2 = hangar(['registry', 'create-user', 'bench', '--password', 'password123', '--address', registry, '--token', ROOT]);
    if (created2.code !== 0) throw new Error(created2.stderr);
    const auth = await call(`${registry}/api/v1/authenticate`, 'POST', {}, { user: { login: 'bench', password: 'password123' } });
    const bearer = { authorization: `Bearer ${auth.token as string}` };
    await call(`${registry}/api/v1/boxes`, 'POST', bearer, { box: { name: 'one', is_private: false, short_description: 'bench box' } });
    await call(`${registry}/api/v1/box/bench/one/versions`, 'POST', bearer, { version: { version: '1.0.0' } });
    recordLoad(group('registry'), 'box read (anonymous, public box)', await run(`${registry}/api/v1/box/bench/one`), baseline, 0.5);

    const rss = rssMiB(server.process.pid!);
    record({ group: group('server'), name: 'RSS after the rows above', figure: `${rss.toFixed(0)} MiB`, goal: '<= 200 MiB', met: rss <= 200 });
  } finally {
    await server.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
