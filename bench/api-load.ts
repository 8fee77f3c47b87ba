/**
 * The hot paths of the three APIs measured as users measure them: `hangar server --dev` (bundled
 * CLI, SQLite or a private PostgreSQL) in its own process, autocannon (-c 50) in another, and a
 * bare Fastify hello world started the same way as the baseline, in the same run. JWT login is
 * also held to a raw ES256 verify loop (node:crypto, this process, one core). Loopback only; each
 * row runs a fixed time (--seconds) and stops by itself. When the environment names binaries of the
 * public services (bench/public-services.ts), the secrets rows run again against Vault's dev server
 * and the catalog rows against Consul's, and each row's ratio to them is recorded; their dev servers
 * use every core, as Hangar does with `--workers auto` (npm run bench compares them with the
 * `--workers 2` run on its 2-core machine, and skips them in the run with one worker).
 *
 *   npx ts-node --transpile-only bench/api-load.ts [--seconds 3] [--connections 50] [--storage sqlite|postgres]
 *     [--workers N] [--skip-public-services]
 */
import { createPublicKey, verify } from 'node:crypto';
import { parseArgs } from 'node:util';
import { measureBaseline, Measured, record, recordLoad, reqs, Runner, runnerFor, startHangar } from './autocannon';
import { rssMiB } from './catalog-load';
import { compareWith, consulBinary, startConsulDev, startVaultDev, vaultBinary } from './public-services';
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

const JWT_LOGIN = 'JWT login (ES256, a new service token each)';

/**
 * The secrets rows against a server of the secrets API (Hangar or Vault): a KV v1 mount, a policy
 * that reads it, a non-root token holding that policy, and a JWT auth method with one ES256 key.
 */
async function secretsRows(url: string, rootToken: string, jwt: { publicPem: string; token: string }, run: Runner): Promise<Measured[]> {
  const root = { 'x-vault-token': rootToken };
  await call(`${url}/v1/sys/mounts/kv`, 'POST', root, { type: 'kv', options: { version: '1' } });
  await call(`${url}/v1/kv/app`, 'POST', root, { user: 'app', password: 'secret' });
  await call(`${url}/v1/sys/policies/acl/reader`, 'PUT', root, { policy: 'path "kv/*" { capabilities = ["read"] }' });
  const token = (await call(`${url}/v1/auth/token/create`, 'POST', root, { policies: ['reader'], ttl: '1h' })).auth.client_token as string;
  const user = { 'x-vault-token': token };
  const rows: Measured[] = [];
  rows.push({ name: 'token lookup-self (non-root token)', result: await run(`${url}/v1/auth/token/lookup-self`, { headers: user }), goalRatio: 0.5 });
  rows.push({ name: 'KV read with a policy check (non-root token)', result: await run(`${url}/v1/kv/app`, { headers: user }) });
  rows.push({
    name: 'token renew-self (the token\'s lease)',
    result: await run(`${url}/v1/auth/token/renew-self`, { method: 'POST', headers: { ...user, 'content-type': 'application/json' }, body: '{}' }),
  });

  // Hangar's dev server has the method at auth/jwt already; Vault's has only the token method.
  await call(`${url}/v1/sys/auth/jwt`, 'POST', root, { type: 'jwt' }).catch(() => undefined);
  await call(`${url}/v1/auth/jwt/config`, 'POST', root, { jwt_validation_pubkeys: [jwt.publicPem], bound_issuer: 'https://ci.example' });
  await call(`${url}/v1/auth/jwt/role/ci`, 'POST', root, { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'hangar', token_policies: 'default', token_ttl: '10m' });
  const login = await run(`${url}/v1/auth/jwt/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ role: 'ci', jwt: jwt.token }) });
  rows.push({ name: JWT_LOGIN, result: login });
  return rows;
}

/** The catalog rows against a server of the catalog API (Hangar or Consul). */
async function catalogRows(url: string, rootToken: string, run: Runner, connections: number): Promise<Measured[]> {
  const consul = { 'x-consul-token': rootToken };
  await call(`${url}/v1/kv/bench/read`, 'PUT', consul, 'value');
  const rows: Measured[] = [];
  rows.push({ name: 'status/leader', result: await run(`${url}/v1/status/leader`, { headers: consul }) });
  rows.push({ name: 'KV GET', result: await run(`${url}/v1/kv/bench/read`, { headers: consul }), goalRatio: 0.5 });
  const keys = Array.from({ length: 1000 }, (_, i) => `/v1/kv/bench/put-${i}`);
  rows.push({ name: 'KV PUT (1,000 keys)', result: await run(url, { method: 'PUT', headers: consul, body: 'value', paths: keys }) });
  const register = JSON.stringify({ Node: 'bench-node', Address: '10.0.0.1', Service: { Service: 'web', Port: 80 } });
  rows.push({ name: 'catalog/register (one node and service)', result: await run(`${url}/v1/catalog/register`, { method: 'PUT', headers: consul, body: register }) });

  rows.push({ name: 'session create', result: await run(`${url}/v1/session/create`, { method: 'PUT', headers: consul, body: JSON.stringify({ TTL: '600s', LockDelay: '1ms' }) }) });
  const sessions = ((await call(`${url}/v1/session/list`, 'GET', consul)) as { ID: string }[]).map((s) => s.ID);
  const renew = await run(url, { method: 'PUT', headers: consul, paths: sessions.map((id) => `/v1/session/renew/${id}`) });
  rows.push({ name: `session renew (${sessions.length.toLocaleString('en-US')} sessions)`, result: renew });
  // One destroy per session: a bounded series, not a timed one.
  const started = Date.now();
  const destroyed = await run(url, { method: 'PUT', headers: consul, paths: sessions.map((id) => `/v1/session/destroy/${id}`) }, { amount: sessions.length, connections });
  rows.push({ name: 'session destroy', result: { ...destroyed, rps: sessions.length / ((Date.now() - started) / 1000) } });
  return rows;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'seconds': { type: 'string', default: '3' },
      'connections': { type: 'string', default: '50' },
      'storage': { type: 'string', default: 'sqlite' },
      'workers': { type: 'string', default: '1' },
      'skip-public-services': { type: 'boolean', default: false },
    },
  });
  const storage = values.storage === 'postgres' ? 'postgres' : 'sqlite';
  const workers = Number(values.workers);
  const load = { seconds: Number(values.seconds), connections: Number(values.connections) };
  // The public services run side by side in the SQLite run only: their dev servers keep all in memory.
  const compare = storage === 'sqlite' && !values['skip-public-services'];
  const vault = compare ? vaultBinary() : undefined;
  const consulBin = compare ? consulBinary() : undefined;
  const others = [vault && `Vault ${vault.version}`, consulBin && `Consul ${consulBin.version}`].filter(Boolean);
  console.log(`node ${process.version}, autocannon -c ${load.connections} for ${load.seconds} s per row, storage ${storage}, ${workers} worker(s)` +
    (others.length ? `; side by side: ${others.join(', ')} (dev servers)` : compare ? '; no public service given (HANGAR_BENCH_VAULT, HANGAR_BENCH_CONSUL)' : ''));

  const baseline = await measureBaseline(load);
  const key = await newKey('bench', 'ES256');
  const jwt = { publicPem: key.publicPem, token: await sign(key, { iss: 'https://ci.example', aud: 'hangar', sub: 'bench' }, Date.now(), {}) };
  // The goals are a server's as started by default (one worker), against one bare Fastify process.
  const goal = (row: { goalRatio?: number }) => (workers === 1 ? row.goalRatio : undefined);
  const group = (service: string) => `${service} (${storage}${workers > 1 ? `, ${workers} workers` : ''})`;

  // The registry's rate limits (6,000 requests a minute per address) would answer 429 to a load test.
  const server = await startHangar(ROOT, storage, ['--workers', String(workers)], { HANGAR_REGISTRY_RATE_LIMIT_ADDRESS: '0', HANGAR_REGISTRY_RATE_LIMIT_TOKEN: '0' });
  const { secrets, catalog, registry } = server.urls;
  const run = runnerFor(server.process.pid!, load);
  let hangarSecrets: Measured[];
  let hangarCatalog: Measured[];
  try {
    hangarSecrets = await secretsRows(secrets, ROOT, jwt, run);
    for (const row of hangarSecrets) {
      if (row.name !== JWT_LOGIN) recordLoad(group('secrets'), row.name, row.result, baseline, goal(row));
    }
    const login = hangarSecrets.find((r) => r.name === JWT_LOGIN)!.result;
    const raw = es256VerifyRate(jwt.token, jwt.publicPem, 2);
    if (login.non2xx || login.errors) throw new Error(`JWT login: ${login.non2xx} non-2xx answers, ${login.errors} errors`);
    record({
      group: group('secrets'),
      name: JWT_LOGIN,
      figure: reqs(login),
      baseline: `raw ES256 verify ${Math.round(raw.rate).toLocaleString('en-US')}/s on one core, ${Math.round(raw.cpuUs)} µs CPU each`,
      ratio: login.rps / raw.rate,
      // The CPU a verify costs ÷ the server's CPU per login: the rate ratio the CPU cost alone allows.
      ...(login.cpuUs ? { cpuRatio: raw.cpuUs / login.cpuUs } : {}),
      ...(workers === 1 ? { goal: '>= 50% of raw verify and > 2,600/s (Vault dev)', met: login.rps >= raw.rate / 2 && login.rps > 2600 } : {}),
    });

    // The floor of Hangar's HTTP layer: routing, hooks, metrics and the error envelope, no transaction.
    const unknown = await run(`${catalog}/v1/no-such-endpoint`, { headers: { 'x-consul-token': ROOT } });
    if (unknown.non2xx !== unknown.requests || unknown.errors) throw new Error('an unknown endpoint answered other than 404');
    recordLoad(group('catalog'), 'unknown endpoint (the 404 floor: no transaction)', { ...unknown, non2xx: 0 }, baseline);
    hangarCatalog = await catalogRows(catalog, ROOT, run, load.connections);
    for (const row of hangarCatalog) recordLoad(group('catalog'), row.name, row.result, baseline, goal(row));

    // Registry: an anonymous read of a public box.
    const created = hangar(['registry', 'create-user', 'bench', '--password', 'password123', '--address', registry, '--token', ROOT]);
    if (created.code !== 0) throw new Error(created.stderr);
    const auth = await call(`${registry}/api/v1/authenticate`, 'POST', {}, { user: { login: 'bench', password: 'password123' } });
    const bearer = { authorization: `Bearer ${auth.token as string}` };
    await call(`${registry}/api/v1/boxes`, 'POST', bearer, { box: { name: 'one', is_private: false, short_description: 'bench box' } });
    await call(`${registry}/api/v1/box/bench/one/versions`, 'POST', bearer, { version: { version: '1.0.0' } });
    recordLoad(group('registry'), 'box read (anonymous, public box)', await run(`${registry}/api/v1/box/bench/one`), baseline, goal({ goalRatio: 0.5 }));

    const rss = rssMiB(server.process.pid!);
    // Informational: the goal of 200 MiB after ten minutes of mixed load is measured by `npm run soak`,
    // not after the bursts above (tens of thousands of sessions created in seconds).
    record({ group: group('server'), name: 'RSS after the rows above (the RSS goal is npm run soak\'s)', figure: `${rss.toFixed(0)} MiB` });
  } finally {
    await server.close();
  }

  // The same rows against the public services, one at a time, after Hangar has stopped.
  if (vault) {
    await compareWith(await startVaultDev(vault, ROOT), load, group('secrets'), hangarSecrets, (url, theirs) => secretsRows(url, ROOT, jwt, theirs));
  }
  if (consulBin) {
    await compareWith(await startConsulDev(consulBin), load, group('catalog'), hangarCatalog, (url, theirs) => catalogRows(url, ROOT, theirs, load.connections));
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
