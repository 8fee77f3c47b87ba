import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import Consul from 'consul';
import { jose } from '../../src/engine/jwt-keys';
import { RunningServer, startServerProcess } from '../helpers/cli';

/**
 * The `consul` npm client, unchanged, against `hangar server`: sessions, KV locks held and taken
 * over across OS processes, a blocking watch, and ACL/namespace endpoints through its generic requests.
 */
const ROOT = 'e2e-catalog-root-token';

/**
 * A lock contender in its own process, written as a Consul client user would: create a session, then
 * watch the key (blocking reads) and try to acquire it whenever nobody holds it. It prints
 * "session <id>" and then "acquired", and keeps running until killed.
 */
const CONTENDER = `
const Consul = require('consul');
const consul = new Consul({ port: Number(process.env.PORT), defaults: { token: process.env.TOKEN } });
const fail = (e) => { console.error(e); process.exit(1); };
consul.session.create({ name: process.env.NAME, node: process.env.NODE_NAME || undefined, ttl: process.env.TTL || undefined, lockdelay: '1ms' }).then(({ ID }) => {
  console.log('session ' + ID);
  const watch = consul.watch({ method: consul.kv.get, options: { key: 'locks/leader', wait: '30s' } });
  let done = false;
  watch.on('error', fail);
  watch.on('change', (entry) => {
    if (done || (entry && entry.Session)) return;
    consul.kv.set({ key: 'locks/leader', value: process.env.NAME, acquire: ID }).then((ok) => {
      if (ok && !done) { done = true; watch.end(); console.log('acquired'); }
    }, fail);
  });
}, fail);
setInterval(() => {}, 1 << 30);
`;

interface Contender {
  readonly child: ChildProcess;
  readonly session: string;
  readonly acquired: Promise<void>;
}

async function contender(port: number, name: string, node?: string, ttl?: string): Promise<Contender> {
  const child = spawn(process.execPath, ['-e', CONTENDER], {
    cwd: process.cwd(),
    env: { ...process.env, NODE_OPTIONS: '', PORT: String(port), TOKEN: ROOT, NAME: name, ...(node ? { NODE_NAME: node } : {}), ...(ttl ? { TTL: ttl } : {}) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  let resolveSession!: (id: string) => void;
  let resolveAcquired!: () => void;
  const session = new Promise<string>((r) => (resolveSession = r));
  const acquired = new Promise<void>((r) => (resolveAcquired = r));
  lines.on('line', (line) => {
    if (line.startsWith('session ')) resolveSession(line.slice(8));
    if (line === 'acquired') resolveAcquired();
  });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`contender ${name} exited with ${code}`);
  });
  return { child, session: await Promise.race([session, exited]), acquired: Promise.race([acquired, exited]) };
}

describe('the consul npm client against hangar server', () => {
  let server: RunningServer;
  let consul: Consul;
  let port: number;
  const children: ChildProcess[] = [];

  /** A request the client has no helper for, through its generic request method. */
  const call = (method: '_get' | '_put' | '_post' | '_delete', path: string, body?: unknown, token = ROOT): Promise<any> =>
    (consul as any)[method]({ name: 'hangar.e2e', path, type: 'json', headers: { 'x-consul-token': token }, ...(body === undefined ? {} : { body }) },
      (request: any, next: any) => (request.err ? next(false, request.err) : next(false, undefined, request.res.body)));

  beforeAll(async () => {
    // Sessions are checked for an expired TTL every 250ms instead of every second.
    const env = { HANGAR_CATALOG_SESSION_CHECK_INTERVAL: '250ms' };
    server = await startServerProcess(['--dev', '--dev-root-token', ROOT, '--catalog-default-policy', 'deny'], env);
    port = Number(new URL(server.urls.catalog).port);
    consul = new Consul({ port, defaults: { token: ROOT } });
  });
  afterAll(async () => {
    for (const child of children) child.kill();
    consul?.destroy();
    await server?.stop();
  });

  test('status: the leader as a JSON string', async () => {
    expect(await consul.status.leader()).toBe('127.0.0.1:8300');
    expect(await consul.status.peers()).toEqual(['127.0.0.1:8300']);
  });

  test('sessions: create, info, renew, list, destroy', async () => {
    const { ID } = await consul.session.create({ name: 'e2e', ttl: '30s', lockdelay: '5s', behavior: 'delete' });
    const info = await consul.session.info(ID);
    expect(info).toMatchObject({ ID, Name: 'e2e', TTL: '30s', LockDelay: 5e9, Behavior: 'delete' });
    const renewed = await consul.session.renew(ID);
    expect(renewed[0]).toMatchObject({ ID, TTL: '30s' });
    expect((await consul.session.list()).map((s) => s.ID)).toContain(ID);
    expect((await consul.session.node(info.Node)).map((s) => s.ID)).toContain(ID);
    // The client answers nothing for a destroy (it reads no body).
    await expect(consul.session.destroy(ID)).resolves.toBeUndefined();
    expect(await consul.session.info(ID)).toBeUndefined();
    await expect(consul.session.create({ ttl: '5s' })).rejects.toThrow(/TTL/);
  });

  test('KV: set, get, acquire and release with a session', async () => {
    const { ID } = await consul.session.create({ lockdelay: '1ms' });
    expect(await consul.kv.set('e2e/plain', 'hello')).toBe(true);
    expect(await consul.kv.get('e2e/plain')).toMatchObject({ Key: 'e2e/plain', Value: 'hello' });
    expect(await consul.kv.set({ key: 'e2e/lock', value: 'me', acquire: ID })).toBe(true);
    const other = await consul.session.create({ lockdelay: '1ms' });
    expect(await consul.kv.set({ key: 'e2e/lock', value: 'them', acquire: other.ID })).toBeFalsy(); // the client turns the answer `false` into undefined
    expect(await consul.kv.get('e2e/lock')).toMatchObject({ Session: ID, LockIndex: 1, Value: 'me' });
    expect(await consul.kv.set({ key: 'e2e/lock', value: 'done', release: ID })).toBe(true);
    // The npm client's GetItem type has no Session field, though the answer carries it when a lock is held.
    const released: { Session?: string; Value: string | null } | null = await consul.kv.get('e2e/lock');
    expect(released?.Session).toBeUndefined();
    expect(released?.Value).toBe('done');
    expect(await consul.kv.keys('e2e/')).toEqual(['e2e/lock', 'e2e/plain']);
    expect(await consul.kv.del({ key: 'e2e/', recurse: true })).toBe(true);
    expect(await consul.kv.get('e2e/plain')).toBeUndefined();
  });

  test('a lock held by one process is taken over by another once its session is destroyed, then once its node leaves', async () => {
    await consul.catalog.register({ node: 'node-a', address: '10.0.0.1' });
    const a = await contender(port, 'A', 'node-a');
    children.push(a.child);
    await a.acquired;
    const b = await contender(port, 'B');
    children.push(b.child);
    expect(await consul.kv.get('locks/leader')).toMatchObject({ Session: a.session, Value: 'A' });

    // B is waiting in a blocking read; destroying A's session releases the key and wakes it.
    await consul.session.destroy(a.session);
    await b.acquired;
    expect(await consul.kv.get('locks/leader')).toMatchObject({ Session: b.session, Value: 'B' });
    a.child.kill();

    // A third process waits; B releases the key and C takes it.
    await consul.catalog.register({ node: 'node-c', address: '10.0.0.3' });
    const c = await contender(port, 'C', 'node-c');
    children.push(c.child);
    await consul.kv.set({ key: 'locks/leader', value: 'B', release: b.session });
    await c.acquired;
    expect(await consul.kv.get('locks/leader')).toMatchObject({ Session: c.session, Value: 'C' });
    // C's node is deregistered: its session is invalidated and the lock is free again.
    const d = await contender(port, 'D');
    children.push(d.child);
    await consul.catalog.deregister({ node: 'node-c' });
    await d.acquired;
    expect(await consul.session.info(c.session)).toBeUndefined();
    expect(await consul.kv.get('locks/leader')).toMatchObject({ Session: d.session, Value: 'D' });
  });

  test('a lock whose holder stops renewing its session is taken over once the TTL runs out', async () => {
    // A (TTL 10s) never renews; B waits in a blocking read. This waits for the real TTL: the server
    // is another process, whose clock the test cannot drive.
    const a = await contender(port, 'A-ttl', undefined, '10s');
    children.push(a.child);
    await consul.kv.del('locks/leader');
    await a.acquired;
    const b = await contender(port, 'B-ttl');
    children.push(b.child);
    expect(await consul.kv.get('locks/leader')).toMatchObject({ Session: a.session, Value: 'A-ttl' });
    await b.acquired;
    expect(await consul.session.info(a.session)).toBeUndefined();
    expect(await consul.kv.get('locks/leader')).toMatchObject({ Session: b.session, Value: 'B-ttl' });
  }, 60_000);

  test('an invalid session check interval stops the server with a clear message', async () => {
    await expect(startServerProcess(['--dev'], { HANGAR_CATALOG_SESSION_CHECK_INTERVAL: 'often' })).rejects.toThrow(
      /HANGAR_CATALOG_SESSION_CHECK_INTERVAL "often" is invalid: use a duration between 100ms and 1m/,
    );
  });

  test('a blocking watch fires on change', async () => {
    await consul.kv.set('watched', 'one');
    const watch = consul.watch({ method: consul.kv.get, options: { key: 'watched', wait: '30s' } as any });
    try {
      const values: string[] = [];
      const next = () => new Promise<string>((resolve, reject) => {
        watch.once('change', (data: any) => resolve(data?.Value));
        watch.once('error', reject);
      });
      values.push(await next());
      const changed = next();
      await consul.kv.set('watched', 'two');
      values.push(await changed);
      expect(values).toEqual(['one', 'two']);
    } finally {
      watch.end();
    }
  });

  test('auth methods, binding rules, login/logout and namespaces through the generic request method', async () => {
    const { generateKeyPair, exportSPKI, SignJWT } = jose();
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const pem = await exportSPKI(publicKey);
    const ns = await call('_put', '/namespace', { Name: 'team-e2e', Description: 'e2e' });
    expect(ns).toMatchObject({ Name: 'team-e2e', Description: 'e2e' });
    expect(await call('_put', '/namespace/team-e2e', { Description: 'changed' })).toMatchObject({ Description: 'changed' });
    expect((await call('_get', '/namespaces')).map((n: any) => n.Name)).toEqual(expect.arrayContaining(['default', 'team-e2e']));
    await call('_put', '/acl/auth-method', { Name: 'jwt-e2e', Type: 'jwt', Config: { JWTValidationPubKeys: [pem], ClaimMappings: { sub: 'user' } } });
    const rule = await call('_put', '/acl/binding-rule', { AuthMethod: 'jwt-e2e', Selector: 'value.user != ""', BindType: 'service', BindName: 'svc-${value.user}' });
    expect(rule).toMatchObject({ AuthMethod: 'jwt-e2e', BindType: 'service' });
    expect(await call('_put', `/acl/binding-rule/${rule.ID}`, { Description: 'e2e rule', BindType: 'service', BindName: 'web' })).toMatchObject({ ID: rule.ID, Description: 'e2e rule' });
    expect((await call('_get', '/acl/binding-rules?authmethod=jwt-e2e')).map((r: any) => r.ID)).toEqual([rule.ID]);
    expect(await call('_get', `/acl/binding-rule/${rule.ID}`)).toMatchObject({ BindName: 'web' });
    await expect(call('_put', '/acl/binding-rule', { AuthMethod: 'jwt-e2e', Selector: 'value.user ==', BindType: 'service', BindName: 'x' })).rejects.toThrow('bad request'); // the client keeps only short messages
    // A login with a JWT the method's key signed, then a logout with the token it made.
    const jwt = await new SignJWT({ sub: 'alice' }).setProtectedHeader({ alg: 'RS256' }).setExpirationTime('5m').sign(privateKey);
    const login = await call('_post', '/acl/login', { AuthMethod: 'jwt-e2e', BearerToken: jwt });
    expect(login).toMatchObject({ AuthMethod: 'jwt-e2e', ServiceIdentities: [{ ServiceName: 'web' }] });
    expect(await call('_post', '/acl/logout', undefined, login.SecretID)).toBe(true);
    await expect(call('_get', '/acl/token/self', undefined, login.SecretID)).rejects.toThrow('ACL not found');
    expect(await call('_delete', `/acl/binding-rule/${rule.ID}`)).toBe(true);
    expect(await call('_delete', '/namespace/team-e2e')).toBeUndefined();
    expect(await call('_get', '/namespace/team-e2e')).toHaveProperty('DeletedAt');
  });
});
