import { CatalogServer, startCatalogServer } from './helpers';
import { sessionCheckIntervalMs } from '../../../src/engine/catalog/jobs';
import { ManualClock } from '../../../src/engine/clock';
import { STORAGE_KINDS } from '../../helpers/storage';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe.each(STORAGE_KINDS)('catalog nodes, sessions and KV locks (%s)', (kind) => {
  let s: CatalogServer;
  const clock = new ManualClock();
  beforeAll(async () => {
    s = await startCatalogServer(kind, { clock });
  });
  afterAll(() => s.close());

  /** A KV write with a raw body, as clients send values. */
  const put = (path: string, value = '') =>
    s.call('catalog', 'PUT', path, { raw: value, headers: { 'x-consul-token': 'test-root-token', 'content-type': 'text/plain' } });
  const register = (node: string, checks: unknown[] = []) =>
    s.root('PUT', '/v1/catalog/register', { Node: node, Address: '10.0.0.1', Checks: checks });
  const session = async (body: Record<string, unknown>) => {
    const res = await s.root('PUT', '/v1/session/create', body);
    if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
    return res.body.ID as string;
  };

  test('nodes register with a serfHealth check, list, read, and deregister', async () => {
    expect((await register('n1')).body).toBe(true);
    const nodes = await s.root('GET', '/v1/catalog/nodes');
    expect(nodes.status).toBe(200);
    expect(nodes.body.find((n: any) => n.Node === 'n1')).toMatchObject({ Node: 'n1', Address: '10.0.0.1', Datacenter: 'dc1' });
    expect(Number(nodes.headers['x-consul-index'])).toBeGreaterThan(0);
    expect(nodes.headers['x-catalog-index']).toBe(nodes.headers['x-consul-index']);
    const checks = await s.root('GET', '/v1/health/node/n1');
    expect(checks.body).toEqual([expect.objectContaining({ CheckID: 'serfHealth', Status: 'passing' })]);
    const node = await s.root('GET', '/v1/catalog/node/n1');
    expect(node.body.Node.Node).toBe('n1');
    expect((await s.root('GET', '/v1/catalog/node/none')).body).toBeNull();
    expect((await s.root('PUT', '/v1/catalog/register', { Node: 'x' })).text).toBe('Missing node address');
  });

  // Issue 49: the checks went into one `IN (?, …)`, and more than 32,766 were a 500 "too many SQL variables".
  test('a session names as many checks as a body may hold; more is a 400, never a 500', async () => {
    await register('many', [{ CheckID: 'c1', Status: 'passing' }]);
    const ids = Array.from({ length: 10_000 }, (_, i) => `c${i}`);
    const all = await s.root('PUT', '/v1/session/create', { Node: 'many', NodeChecks: ids });
    expect([all.status, all.text]).toEqual([400, "Missing check 'c0' registration"]);
    const found = await s.root('PUT', '/v1/session/create', { Node: 'many', NodeChecks: ['c1', ...ids.slice(2)].reverse() });
    expect([found.status, found.text]).toEqual([400, "Missing check 'c9999' registration"]);
    const ok = await s.root('PUT', '/v1/session/create', { Node: 'many', NodeChecks: Array(9_000).fill('c1') });
    expect(ok.status).toBe(200);
    const over = await s.root('PUT', '/v1/session/create', { Node: 'many', NodeChecks: Array.from({ length: 40_000 }, (_, i) => `c${i}`) });
    expect([over.status, over.text]).toEqual([400, 'Request decode failed: an array or object holds more than 10000 items']);
  });

  test('a session has every field; LockDelay in nanoseconds; info, node, list; destroy is idempotent', async () => {
    const id = await session({ Node: 'n1', Name: 'web-lock', LockDelay: '30s', TTL: '20s', Behavior: 'delete' });
    const info = await s.root('GET', `/v1/session/info/${id}`);
    expect(info.status).toBe(200);
    expect(info.body).toEqual([
      {
        ID: id,
        Name: 'web-lock',
        Node: 'n1',
        LockDelay: 30_000_000_000,
        Behavior: 'delete',
        TTL: '20s',
        NodeChecks: ['serfHealth'],
        ServiceChecks: null,
        Namespace: 'default',
        CreateIndex: expect.any(Number),
        ModifyIndex: expect.any(Number),
      },
    ]);
    expect((await s.root('GET', '/v1/session/node/n1')).body.map((x: any) => x.ID)).toContain(id);
    expect((await s.root('GET', '/v1/session/list')).body.map((x: any) => x.ID)).toContain(id);
    const renewed = await s.root('PUT', `/v1/session/renew/${id}`);
    expect(renewed.body[0]).toMatchObject({ ID: id, TTL: '20s' });
    expect((await s.root('PUT', `/v1/session/destroy/${id}`)).body).toBe(true);
    expect((await s.root('PUT', `/v1/session/destroy/${id}`)).body).toBe(true);
    expect((await s.root('GET', `/v1/session/info/${id}`)).body).toEqual([]);
    const renewGone = await s.root('PUT', `/v1/session/renew/${id}`);
    expect(renewGone.status).toBe(404);
    const malformed = await s.root('PUT', '/v1/session/destroy/not-a-uuid');
    expect(malformed.status).toBe(400);
  });

  test('a session without a node goes to the server\'s own node', async () => {
    const id = await session({});
    const [info] = (await s.root('GET', `/v1/session/info/${id}`)).body;
    expect(info).toMatchObject({ LockDelay: 15_000_000_000, Behavior: 'release', TTL: '', NodeChecks: ['serfHealth'] });
    expect((await s.root('GET', '/v1/catalog/nodes')).body.map((n: any) => n.Node)).toContain(info.Node);
  });

  test('bad session input: out-of-range TTL and lock delay, unknown node, unknown fields; nothing created', async () => {
    const before = (await s.root('GET', '/v1/session/list')).body.length;
    const cases: [unknown, RegExp][] = [
      [{ Node: 'n1', TTL: '5s' }, /^Invalid Session TTL '5000000000', must be between \[10s=24h0m0s\]$/],
      [{ Node: 'n1', TTL: '86401s' }, /must be between/],
      [{ Node: 'n1', TTL: 'soon' }, /Session TTL 'soon' invalid/],
      [{ Node: 'n1', LockDelay: '0s' }, /must be greater than 0/],
      [{ Node: 'n1', LockDelay: '2m' }, /must be at most 1m0s/],
      [{ Node: 'n1', LockDelay: 'x' }, /Invalid LockDelay/],
      [{ Node: 'n1', Behavior: 'explode' }, /Invalid Behavior setting 'explode'/],
      [{ Node: 'nowhere' }, /Missing node registration/],
      [{ Node: 'n1', NodeChecks: ['nope'] }, /Missing check 'nope' registration/],
      [{ Node: 'n1', Surprise: true }, /unknown field "Surprise"/],
      [{ Node: 'n1', TTL: 30 }, /TTL/],
    ];
    for (const [body, message] of cases) {
      const res = await s.root('PUT', '/v1/session/create', body);
      expect([res.status, res.text]).toEqual([400, expect.stringMatching(message)]);
    }
    expect((await s.root('GET', '/v1/session/list')).body.length).toBe(before);
  });

  test('KV: put, get (base64, flags, raw), cas, keys with separator, recurse, delete', async () => {
    expect((await put('/v1/kv/app/config?flags=42', 'hello')).body).toBe(true);
    const got = await s.root('GET', '/v1/kv/app/config');
    expect(got.body).toEqual([
      { LockIndex: 0, Key: 'app/config', Flags: 42, Value: b64('hello'), Namespace: 'default', CreateIndex: expect.any(Number), ModifyIndex: expect.any(Number) },
    ]);
    expect((await s.root('GET', '/v1/kv/app/config?raw')).text).toBe('hello');
    expect((await put('/v1/kv/app/config?cas=0', 'x')).body).toBe(false);
    expect((await put(`/v1/kv/app/config?cas=${got.body[0].ModifyIndex}`, 'v2')).body).toBe(true);
    await put('/v1/kv/app/db/host', 'h');
    await put('/v1/kv/app/db/port', 'p');
    expect((await s.root('GET', '/v1/kv/app/?keys&separator=/')).body).toEqual(['app/config', 'app/db/']);
    expect((await s.root('GET', '/v1/kv/app/?recurse')).body.map((e: any) => e.Key)).toEqual(['app/config', 'app/db/host', 'app/db/port']);
    expect((await s.root('GET', '/v1/kv/missing')).status).toBe(404);
    expect((await s.root('DELETE', '/v1/kv/app/db?recurse')).body).toBe(true);
    expect((await s.root('GET', '/v1/kv/app/?keys')).body).toEqual(['app/config']);
    const binary = Buffer.from([0, 255, 1, 254]);
    await s.call('catalog', 'PUT', '/v1/kv/bin', { raw: binary, headers: { 'x-consul-token': 'test-root-token', 'content-type': 'application/octet-stream' } });
    expect((await s.root('GET', '/v1/kv/bin')).body[0].Value).toBe(binary.toString('base64'));
    expect((await put('/v1/kv/x?flags=-1', 'v')).status).toBe(400);
    // the root of the store: "/v1/kv/" with an empty key lists everything
    expect((await s.root('GET', '/v1/kv/?keys&separator=/')).body).toEqual(expect.arrayContaining(['app/', 'bin']));
    expect((await s.root('GET', '/v1/kv/?recurse')).body.map((e: any) => e.Key)).toEqual(expect.arrayContaining(['app/config', 'bin']));
    const noKey = await put('/v1/kv/', 'v');
    expect(noKey.status).toBe(400);
  });

  test('locks: acquire, re-acquire, release; invalidation releases and applies lock-delay', async () => {
    const a = await session({ Node: 'n1', LockDelay: '10s' });
    const b = await session({ Node: 'n1' });
    expect((await put(`/v1/kv/lock?acquire=${a}`, 'a')).body).toBe(true);
    expect((await put(`/v1/kv/lock?acquire=${b}`, 'b')).body).toBe(false);
    expect((await put(`/v1/kv/lock?acquire=${a}`, 'a2')).body).toBe(true);
    let entry = (await s.root('GET', '/v1/kv/lock')).body[0];
    expect(entry).toMatchObject({ Session: a, LockIndex: 1, Value: b64('a2') });
    expect((await s.root('PUT', `/v1/kv/lock?release=${b}`)).body).toBe(false);
    expect((await put(`/v1/kv/lock?release=${a}`, 'free')).body).toBe(true);
    entry = (await s.root('GET', '/v1/kv/lock')).body[0];
    expect(entry.Session).toBeUndefined();
    expect((await put(`/v1/kv/lock?acquire=${b}`, 'b')).body).toBe(true);
    expect((await s.root('GET', '/v1/kv/lock')).body[0].LockIndex).toBe(2);

    // Destroying b releases the lock; a may not take it during b's lock-delay (15 s default).
    expect((await s.root('PUT', `/v1/session/destroy/${b}`)).body).toBe(true);
    expect((await s.root('GET', '/v1/kv/lock')).body[0].Session).toBeUndefined();
    expect((await put(`/v1/kv/lock?acquire=${a}`, 'a')).body).toBe(false);
    clock.advance(15_001);
    expect((await put(`/v1/kv/lock?acquire=${a}`, 'a')).body).toBe(true);
    const bad = await put('/v1/kv/lock?acquire=11111111-2222-3333-4444-555555555555', 'x');
    expect([bad.status, bad.text]).toEqual([400, 'invalid session "11111111-2222-3333-4444-555555555555"']);
  });

  test('TTL expiry by the background job (engine clock); behavior delete removes held keys', async () => {
    const id = await session({ Node: 'n1', TTL: '10s', Behavior: 'delete', LockDelay: '1ms' });
    expect((await put(`/v1/kv/ttl-lock?acquire=${id}`, 'x')).body).toBe(true);
    clock.advance(9_000);
    await s.engine.scheduler.runOnce();
    expect((await s.root('GET', `/v1/session/info/${id}`)).body).toHaveLength(1);
    await s.root('PUT', `/v1/session/renew/${id}`);
    clock.advance(9_000);
    await s.engine.scheduler.runOnce();
    expect((await s.root('GET', `/v1/session/info/${id}`)).body).toHaveLength(1);
    // Renewed at 9 s with less than one TTL left: it lives until 2 TTL after that, 29 s.
    clock.advance(11_001);
    await s.engine.scheduler.runOnce();
    expect((await s.root('GET', `/v1/session/info/${id}`)).body).toEqual([]);
    expect((await s.root('GET', '/v1/kv/ttl-lock')).status).toBe(404);
  });

  test('a check turning critical and a node deregistration invalidate sessions', async () => {
    await register('n2', [{ CheckID: 'disk', Name: 'Disk', Status: 'passing' }]);
    const withCheck = await session({ Node: 'n2', NodeChecks: ['serfHealth', 'disk'] });
    const plain = await session({ Node: 'n2' });
    expect((await put(`/v1/kv/n2-lock?acquire=${withCheck}`, 'x')).body).toBe(true);
    await register('n2', [{ CheckID: 'disk', Name: 'Disk', Status: 'critical' }]);
    expect((await s.root('GET', `/v1/session/info/${withCheck}`)).body).toEqual([]);
    expect((await s.root('GET', '/v1/kv/n2-lock')).body[0].Session).toBeUndefined();
    expect((await s.root('GET', `/v1/session/info/${plain}`)).body).toHaveLength(1);
    const refused = await s.root('PUT', '/v1/session/create', { Node: 'n2', NodeChecks: ['disk'] });
    expect([refused.status, refused.text]).toEqual([400, "Check 'disk' is in critical state"]);
    expect((await s.root('PUT', '/v1/catalog/deregister', { Node: 'n2' })).body).toBe(true);
    expect((await s.root('GET', `/v1/session/info/${plain}`)).body).toEqual([]);
  });

  test('session and key ACLs: session:write on the node, session:read filters lists', async () => {
    const writer = await s.tokenWithRules('session "n1" { policy = "write" }\nnode_prefix "" { policy = "read" }');
    const other = await s.tokenWithRules('session "elsewhere" { policy = "write" }');
    const ok = await s.as(writer, 'PUT', '/v1/session/create', { Node: 'n1' });
    expect(ok.status).toBe(200);
    const denied = await s.as(other, 'PUT', '/v1/session/create', { Node: 'n1' });
    expect(denied.status).toBe(403);
    expect(denied.text).toMatch(/lacks permission 'session:write' on "n1"/);
    expect((await s.as(other, 'GET', '/v1/session/list')).body).toEqual([]);
    expect((await s.as(writer, 'GET', '/v1/session/list')).body.length).toBeGreaterThan(0);
    expect((await s.as(other, 'PUT', `/v1/session/destroy/${ok.body.ID}`)).status).toBe(403);
  });
});

test('the session check interval: 1s by default, a duration from 100ms to 1m, a clear error otherwise', () => {
  expect(sessionCheckIntervalMs({})).toBe(1000);
  expect(sessionCheckIntervalMs({ HANGAR_CATALOG_SESSION_CHECK_INTERVAL: '' })).toBe(1000);
  expect(sessionCheckIntervalMs({ HANGAR_CATALOG_SESSION_CHECK_INTERVAL: '250ms' })).toBe(250);
  expect(sessionCheckIntervalMs({ HANGAR_CATALOG_SESSION_CHECK_INTERVAL: '1m' })).toBe(60_000);
  for (const bad of ['50ms', '2m', 'often', '-1s']) {
    expect(() => sessionCheckIntervalMs({ HANGAR_CATALOG_SESSION_CHECK_INTERVAL: bad })).toThrow(
      `HANGAR_CATALOG_SESSION_CHECK_INTERVAL "${bad}" is invalid: use a duration between 100ms and 1m`,
    );
  }
});
