import { EventEmitter } from 'node:events';
import { CatalogServer, startCatalogServer } from './helpers';
import type { WaitingClient } from '../../../src/engine/catalog/blocking';
import { Writes } from '../../../src/engine/catalog/index-state';
import { getKv, putKv } from '../../../src/engine/catalog/kv';
import { runtimeOf } from '../../../src/engine/catalog/runtime';
import { v8Collector } from '../../../src/engine/collector';
import { AfterCommit, Reply } from '../../../src/engine/http/routes';
import type { Db } from '../../../src/engine/storage';
import { STORAGE_KINDS } from '../../helpers/storage';

describe.each(STORAGE_KINDS)('catalog blocking queries (%s)', (kind) => {
  let s: CatalogServer;
  beforeAll(async () => {
    s = await startCatalogServer(kind);
  });
  afterAll(() => s.close());

  const put = (key: string, value: string) =>
    s.call('catalog', 'PUT', `/v1/kv/${key}`, { raw: value, headers: { 'x-consul-token': 'test-root-token' } });
  const index = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-consul-index']);
  const waiting = () => runtimeOf(s.engine).blocking.waiting;
  /** Lets pending refreshes run: one more request through the same storage queue. */
  const settle = async () => {
    await s.root('GET', '/v1/status/leader');
    await new Promise((r) => setTimeout(r, 20));
  };

  test('returns at once without index; waits, ignores unrelated writes, wakes on a change', async () => {
    await put('watched', 'one');
    const first = await s.root('GET', '/v1/kv/watched');
    expect(index(first)).toBeGreaterThan(0);
    expect(first.headers['x-catalog-index']).toBe(first.headers['x-consul-index']);

    let done = false;
    const blocked = s.root('GET', `/v1/kv/watched?index=${index(first)}&wait=30s`).then((r) => {
      done = true;
      return r;
    });
    await settle();
    expect(waiting()).toBe(1);
    await put('unrelated', 'x'); // the table's index moves, the result does not
    await settle();
    await settle();
    expect(done).toBe(false);
    await put('watched', 'two');
    const woken = await blocked;
    expect(woken.status).toBe(200);
    expect(Buffer.from(woken.body[0].Value, 'base64').toString()).toBe('two');
    expect(index(woken)).toBeGreaterThan(index(first));
    expect(waiting()).toBe(0);
  });

  test('an index behind the current one returns at once; the wait runs out with the same result', async () => {
    await put('stale', 'v');
    const now = await s.root('GET', '/v1/kv/stale');
    const behind = await s.root('GET', '/v1/kv/stale?index=1&wait=30s');
    expect(behind.status).toBe(200);
    expect(index(behind)).toBe(index(now));
    const timedOut = await s.root('GET', `/v1/kv/stale?index=${index(now)}&wait=50ms`);
    expect(timedOut.status).toBe(200);
    expect(timedOut.body).toEqual(now.body);
    expect(index(timedOut)).toBeGreaterThanOrEqual(index(now));
  });

  test('many waiters on one query share the work and all return on one write', async () => {
    await put('fan', 'start');
    const first = await s.root('GET', '/v1/kv/fan');
    const waiters = Array.from({ length: 200 }, () => s.root('GET', `/v1/kv/fan?index=${index(first)}&wait=60s`));
    while (waiting() < 200) await new Promise((r) => setTimeout(r, 10));
    await put('fan', 'end');
    const results = await Promise.all(waiters);
    expect(results.every((r) => r.status === 200 && Buffer.from(r.body[0].Value, 'base64').toString() === 'end')).toBe(true);
  });

  test('a missing key blocks until it appears (404 with an index meanwhile)', async () => {
    const missing = await s.root('GET', '/v1/kv/later');
    expect(missing.status).toBe(404);
    expect(index(missing)).toBeGreaterThan(0);
    const blocked = s.root('GET', `/v1/kv/later?index=${index(missing)}&wait=30s`);
    await settle();
    await put('later', 'here');
    const res = await blocked;
    expect(res.status).toBe(200);
  });

  test('lists block too: sessions, nodes, ACL lists', async () => {
    const list = await s.root('GET', '/v1/catalog/nodes');
    const blocked = s.root('GET', `/v1/catalog/nodes?index=${index(list)}&wait=30s`);
    await settle();
    await s.root('PUT', '/v1/catalog/register', { Node: 'blocking-node', Address: '10.1.1.1' });
    const res = await blocked;
    expect(res.body.map((n: any) => n.Node)).toContain('blocking-node');

    const policies = await s.root('GET', '/v1/acl/policies');
    const blockedPolicies = s.root('GET', `/v1/acl/policies?index=${index(policies)}&wait=30s`);
    await settle();
    await s.root('PUT', '/v1/acl/policy', { Name: 'wakes-waiters', Rules: '' });
    expect((await blockedPolicies).body.map((p: any) => p.Name)).toContain('wakes-waiters');
  });

  test('a waiter keeps neither its transaction, its context nor its first result; a client gone stops waiting', async () => {
    const blocking = runtimeOf(s.engine).blocking;
    await put('held', 'one');
    const current = index(await s.root('GET', '/v1/kv/held'));
    /**
     * One waiter of a shared query, straight through BlockingQueries, with weak references to what it
     * must not keep. It returns no closure, so that nothing of its own scope stays reachable.
     */
    const wait = async () => {
      const seen: { body?: WeakRef<object> } = {};
      const client = new EventEmitter();
      const context = { request: 'the request\'s context' };
      const compute = async (d: Db) => {
        const value = { value: (await getKv(d, 'default', 'held'))?.value };
        seen.body ??= new WeakRef(value);
        return { status: 200, body: value };
      };
      const next = await s.engine.storage.tx(async (db) => {
        const handle: Db = { all: (sql, p) => db.all(sql, p), get: (sql, p) => db.get(sql, p), run: (sql, p) => db.run(sql, p) };
        const result = await blocking.run({
          db: handle,
          key: () => (context.request ? 'held-query' : ''),
          tables: ['kvs'],
          minIndex: current,
          waitMs: 60_000,
          compute,
          client,
        });
        return { result, db: new WeakRef(handle) };
      });
      expect(next.result).toBeInstanceOf(AfterCommit);
      const answer = (next.result as AfterCommit).next();
      return { answer, db: next.db, seen, context: new WeakRef(context), compute: new WeakRef(compute), client };
    };
    const before = waiting();
    const a = await wait();
    const b = await wait();
    expect(waiting()).toBe(before + 2);
    expect([a.client.listenerCount('close'), b.client.listenerCount('close')]).toEqual([1, 1]);
    // The group keeps one result and one query for all its waiters (the first's, with what it
    // closes over); the second's, its request's context and both transactions are garbage.
    for (let i = 0; i < 3; i++) {
      v8Collector()!({ type: 'major' });
      await new Promise((r) => setImmediate(r));
    }
    expect(a.db.deref()).toBeUndefined();
    expect(b.db.deref()).toBeUndefined();
    expect(b.seen.body?.deref()).toBeUndefined();
    expect(b.compute.deref()).toBeUndefined();
    expect(a.compute.deref()).toBeDefined();
    expect(b.context.deref()).toBeUndefined();

    b.client.emit('close');
    expect(waiting()).toBe(before + 1);
    expect(b.client.listenerCount('close')).toBe(0);
    await b.answer;
    await put('held', 'two');
    // Woken by a change, a waiter's answer is encoded once for its whole group, as it is sent.
    const answer = (await a.answer) as Reply;
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(String(answer.body))).toEqual({ value: Buffer.from('two').toString('base64') });
    expect(waiting()).toBe(before);
    expect(a.client.listenerCount('close')).toBe(0);
  });

  /**
   * One request waiting on KV key `kvKey` past `minIndex`, straight through BlockingQueries, in the
   * query group `group`: the promise of its answer.
   */
  interface ParkOptions { client?: WaitingClient; headers?: Record<string, string>; waitMs?: number }
  const park = async (kvKey: string, group: string, minIndex: number, options: ParkOptions = {}) => {
    const next = await s.engine.storage.tx((db) => runtimeOf(s.engine).blocking.run({
      db,
      key: () => group,
      tables: ['kvs'],
      minIndex,
      waitMs: options.waitMs ?? 60_000,
      compute: async (d) => ({ status: 200, body: [{ Value: (await getKv(d, 'default', kvKey))?.value }] }),
      client: options.client,
      headers: options.headers,
    }));
    return (next as AfterCommit).next() as Promise<Reply>;
  };

  test('a client gone before its request began to wait is answered at once, not kept until the wait ends', async () => {
    await put('left', 'one');
    const current = index(await s.root('GET', '/v1/kv/left'));
    const client = Object.assign(new EventEmitter(), { destroyed: true });
    const before = waiting();
    expect((await park('left', 'left-query', current, { client, waitMs: 600_000 })).status).toBe(200);
    expect(waiting()).toBe(before);
    expect(client.listenerCount('close')).toBe(0);
  });

  test('the waiters of a query woken by one change share one encoded answer', async () => {
    await put('shared', 'one');
    const current = index(await s.root('GET', '/v1/kv/shared'));
    // One headers object for the kind of request, as the routes pass it.
    const headers = { 'x-consul-effective-consistency': 'leader' };
    const before = waiting();
    const first = park('shared', 'shared-query', current, { headers });
    const second = park('shared', 'shared-query', current, { headers });
    while (waiting() < before + 2) await new Promise((r) => setImmediate(r));
    await put('shared', 'two');
    const [a, b] = await Promise.all([first, second]);
    expect(a).toBe(b);
    expect(JSON.parse(String(a.body))).toEqual([{ Value: Buffer.from('two').toString('base64') }]);
    expect(a.headers['x-consul-index']).toBe(String(current + 1));
  });

  test('two waiting requests of one client (pipelined) are both answered when it goes away', async () => {
    await put('piped', 'one');
    const current = index(await s.root('GET', '/v1/kv/piped'));
    const client = new EventEmitter();
    const before = waiting();
    const first = park('piped', 'piped-a', current, { client });
    const second = park('piped', 'piped-b', current, { client });
    while (waiting() < before + 2) await new Promise((r) => setImmediate(r));
    expect(client.listenerCount('close')).toBe(1);
    client.emit('close');
    expect(waiting()).toBe(before);
    expect(client.listenerCount('close')).toBe(0);
    expect([(await first).status, (await second).status]).toEqual([200, 200]);
  });

  test('bad parameters: wait, index, stale with consistent', async () => {
    expect((await s.root('GET', '/v1/kv/x?wait=soon')).text).toBe('Invalid wait time');
    expect((await s.root('GET', '/v1/kv/x?index=abc')).status).toBe(400);
    const both = await s.root('GET', '/v1/kv/x?stale&consistent');
    expect([both.status, both.text]).toEqual([400, 'Cannot specify ?stale with ?consistent, conflicting semantics.']);
    expect((await s.root('GET', '/v1/session/list?stale')).headers['x-consul-effective-consistency']).toBe('stale');
  });

  test('writes of another process (the CLI on the same data) wake waiters through polling', async () => {
    const first = await s.root('GET', '/v1/kv/other-process');
    const blocked = s.root('GET', `/v1/kv/other-process?index=${index(first)}&wait=30s`);
    await settle();
    // Written beside the server's pipeline, straight into storage, as another server would: no notification.
    await s.engine.storage.tx((db) => putKv(new Writes(db), { ns: 'default', key: 'other-process', value: 'eA==', flags: '0' }, Date.now()));
    const res = await blocked;
    expect(res.status).toBe(200);
  });
});
