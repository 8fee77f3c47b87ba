import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { LoadInterval, prepareLoad, runLoad, UNLIMITED, Urls } from '../../bench/soak';
import { RunningServer, startServerProcess } from '../helpers/cli';
import { startTargetPostgres, TargetPostgres } from '../helpers/postgres-target';
import { freshStorage, FreshStorage, STORAGE_KINDS } from '../helpers/storage';
import { until } from '../helpers/until';

/**
 * Two `hangar server` processes on one PostgreSQL database, as an operator scales out: mixed load
 * on all three APIs through both (the soak's load process, one per server), then `kill -9` of the
 * server holding the background jobs. The other server's clients see no error; its blocking
 * queries wake on writes made through the other; the jobs' leases move to it and the work the
 * killed server left (an expiring session, an expired token, a deleted namespace, a static database
 * role due for rotation on a private PostgreSQL) is done there.
 * No timings in asserts: every wait polls with a deadline that only bounds a hang.
 */
const describePostgres = STORAGE_KINDS.includes('postgres') ? describe : describe.skip;
const ROOT = 'two-servers-root-token';
/** The jobs with short intervals (the others, hourly-ish, lease the same way). */
const JOBS = ['catalog.session-expiry', 'catalog.namespace-removal', 'secrets.expire', 'secrets.database.rotate'];

jest.setTimeout(150_000);

describePostgres('two hangar servers on one PostgreSQL', () => {
  let storage: FreshStorage;
  let admin: Client;
  /** The database engine's target, whose static role the jobs rotate. */
  let target: TargetPostgres;
  const servers: RunningServer[] = [];
  /** Stops the load processes (the victim's when it is killed; all of them should a test fail). */
  const aborts = [new AbortController(), new AbortController()];

  beforeAll(async () => {
    storage = await freshStorage('postgres');
    const url = (storage.config as { url: string }).url;
    const env = { ...UNLIMITED, HANGAR_SECRETS_KEY: randomBytes(32).toString('base64'), HANGAR_CATALOG_SESSION_CHECK_INTERVAL: '500ms' };
    const args = ['--dev', '--dev-root-token', ROOT, '--storage', 'postgres', '--postgres-url', url, '--data', storage.dataDir];
    for (let i = 0; i < 2; i++) servers.push(await startServerProcess(args, env));
    admin = new Client({ connectionString: url });
    await admin.connect();
    await prepareLoad(servers[0].urls, ROOT, 2);
    target = await startTargetPostgres();
  });
  afterAll(async () => {
    for (const abort of aborts) abort.abort();
    await admin?.end();
    for (const server of servers) await server.stop('SIGKILL');
    await target?.stop();
    await storage?.cleanup();
  });

  type Answer = { status: number; body: any; index: number };
  /** A call with the root token (the three APIs' headers); the body is JSON unless a string (catalog KV). */
  async function call(urls: Urls, api: keyof Urls, method: string, path: string, body?: unknown): Promise<Answer> {
    const headers = { 'x-consul-token': ROOT, 'x-vault-token': ROOT, 'authorization': `Bearer ${ROOT}`, 'content-type': 'application/json' };
    const res = await fetch(`${urls[api]}${path}`, { method, headers, body: typeof body === 'string' || body === undefined ? body : JSON.stringify(body) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // plain text (the catalog's errors)
    }
    return { status: res.status, body: parsed, index: Number(res.headers.get('x-consul-index')) };
  }

  /** Polls with a deadline; a timeout shows what the servers said. */
  const waitFor = (what: string, check: () => Promise<boolean>) =>
    until(what, check, { detail: () => servers.map((s) => s.stderr()).join('\n') });

  const value = (res: { body: { Value: string }[] }) => Buffer.from(res.body[0].Value, 'base64').toString();
  const sql = async (text: string, params: unknown[] = []) => (await admin.query(text, params)).rows;
  /** Which server process holds each job's lease (`host:pid:id until`). */
  const leaseHolders = async () => {
    const rows = await sql("SELECT name, value FROM settings WHERE name LIKE 'lease:%'");
    return new Map(rows.map((r) => [r.name.slice('lease:'.length), Number(r.value.split(' ')[0].split(':')[1])]));
  };

  test('a blocking query on one server wakes on a write made through the other', async () => {
    const [a, b] = servers.map((s) => s.urls);
    for (const [reader, writer] of [[a, b], [b, a]]) {
      await call(writer, 'catalog', 'PUT', '/v1/kv/wake', 'before');
      const first = await call(reader, 'catalog', 'GET', '/v1/kv/wake');
      expect(value(first)).toBe('before');
      const parked = call(reader, 'catalog', 'GET', `/v1/kv/wake?index=${first.index}&wait=60s`);
      await call(reader, 'catalog', 'GET', '/v1/status/leader'); // the blocking request is on its way
      await call(writer, 'catalog', 'PUT', '/v1/kv/wake', 'after');
      expect(value(await parked)).toBe('after');
    }
  });

  test('kill -9 of one server mid-load: the other serves on without errors and takes over the jobs', async () => {
    const plan = { workers: 2, seconds: 16, intervalSeconds: 2 };
    const rows: LoadInterval[][] = [[], []];
    const loads = servers.map(async (server, i) => {
      for await (const row of runLoad(server.urls, ROOT, plan, aborts[i].signal)) rows[i].push(row);
    });
    // Both servers have started their jobs once the short ones all hold a lease.
    await waitFor('every short job to hold a lease', async () => {
      const holders = await leaseHolders();
      return JOBS.every((job) => holders.has(job));
    });
    const pids = servers.map((s) => s.process.pid!);
    const holders = await leaseHolders();
    for (const job of JOBS) expect(pids).toContain(holders.get(job));
    await waitFor('some load through both servers', async () => rows.every((r) => r.length > 0));

    // The victim is the server running the session expiry. Right before it dies, it is given work
    // that only a background job finishes: the survivor must do it.
    const victimIndex = pids.indexOf(holders.get('catalog.session-expiry')!);
    const [victim, survivor] = [servers[victimIndex], servers[1 - victimIndex]];
    const secretsOf = (server: RunningServer) => (method: string, path: string, body?: unknown) => call(server.urls, 'secrets', method, `/v1/${path}`, body);
    const onVictim = secretsOf(victim);
    expect((await onVictim('POST', 'sys/mounts/rotation-db', { type: 'database' })).status).toBe(204);
    const connection = { plugin_name: 'postgresql-database-plugin', connection_url: target.urlTemplate, allowed_roles: ['*'] };
    expect((await onVictim('POST', 'rotation-db/config/pg', { ...connection, username: target.adminUser, password: target.adminPassword })).status).toBe(204);
    await target.admin("CREATE ROLE rotated LOGIN PASSWORD 'initial'");
    expect((await onVictim('POST', 'rotation-db/static-roles/rotated', { db_name: 'pg', username: 'rotated', rotation_period: 5 })).status).toBe(204);
    const session = await call(victim.urls, 'catalog', 'PUT', '/v1/session/create', { TTL: '10s', Behavior: 'delete' });
    expect(session.status).toBe(200);
    expect((await call(victim.urls, 'catalog', 'PUT', `/v1/kv/locked?acquire=${session.body.ID}`, 'held')).body).toBe(true);
    const token = await call(victim.urls, 'secrets', 'POST', '/v1/auth/token/create', { ttl: '2s', policies: ['default'] });
    expect(token.status).toBe(200);
    expect((await call(victim.urls, 'catalog', 'PUT', '/v1/namespace', { Name: 'doomed' })).status).toBe(200);
    expect((await call(victim.urls, 'catalog', 'PUT', '/v1/kv/inside?ns=doomed', 'x')).status).toBe(200);
    expect((await call(victim.urls, 'catalog', 'DELETE', '/v1/namespace/doomed')).status).toBe(200);
    victim.process.kill('SIGKILL');
    aborts[victimIndex].abort();
    const survivorRowsAtKill = rows[1 - victimIndex].length;
    // Read after the kill: any later rotation is the survivor's.
    const before = (await secretsOf(survivor)('GET', 'rotation-db/static-creds/rotated')).body.data;
    expect(before.username).toBe('rotated');

    await Promise.all(loads);
    const survived = rows[1 - victimIndex];
    const failures = survived.flatMap((r) => r.samples);
    expect({ errors: survived.reduce((n, r) => n + r.errors, 0), failures }).toEqual({ errors: 0, failures: [] });
    expect(survived.slice(survivorRowsAtKill).reduce((n, r) => n + r.requests, 0)).toBeGreaterThan(0);

    // Leases lapse (twice the interval) and the survivor takes every one of them.
    await waitFor('the survivor to hold every lease', async () => {
      const now = await leaseHolders();
      return JOBS.every((job) => now.get(job) === survivor.process.pid);
    });
    await waitFor('the session to expire and its lock to go (Behavior delete)', async () => {
      const info = await call(survivor.urls, 'catalog', 'GET', `/v1/session/info/${session.body.ID}`);
      const lock = await call(survivor.urls, 'catalog', 'GET', '/v1/kv/locked');
      return (info.body === null || (Array.isArray(info.body) && info.body.length === 0)) && lock.status === 404;
    });
    await waitFor('the expired token to be revoked', async () => {
      const [row] = await sql('SELECT count(*)::int AS n FROM secrets_tokens WHERE expire_at <= $1', [Date.now()]);
      return row.n === 0;
    });
    await waitFor('the deleted namespace to be removed', async () => {
      const [row] = await sql("SELECT count(*)::int AS n FROM catalog_namespaces WHERE name = 'doomed'");
      return row.n === 0;
    });
    expect((await call(survivor.urls, 'catalog', 'GET', '/v1/kv/inside?ns=doomed')).status).toBe(404);
    let rotated = before;
    await waitFor('the static role to be rotated on schedule', async () => {
      rotated = (await secretsOf(survivor)('GET', 'rotation-db/static-creds/rotated')).body.data;
      return rotated.last_vault_rotation !== before.last_vault_rotation;
    });
    expect((await target.psql('rotated', rotated.password, 'SELECT 1')).status).toBe(0);
  });
});
