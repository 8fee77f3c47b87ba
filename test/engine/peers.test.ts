import { randomUUID } from 'node:crypto';
import { Peers } from '../../src/engine/peers';
import { startTestServer, TestServer } from '../helpers/server';
import { freshStorage, FreshStorage } from '../helpers/storage';

/**
 * Two engines on one SQLite file, as the threads of `hangar server --workers 2` run them (here in
 * one thread: Peers' BroadcastChannel delivers between objects of one thread as between threads).
 */
describe('the engines of one server with several worker threads', () => {
  let storage: FreshStorage;
  let a: TestServer;
  let b: TestServer;
  const channel = `hangar-test-${randomUUID()}`;

  beforeAll(async () => {
    const base = await freshStorage('sqlite');
    storage = { ...base, config: { kind: 'sqlite', dataDir: base.dataDir, writeLock: new SharedArrayBuffer(4) } };
    a = await startTestServer('sqlite', { sharedStorage: storage, peers: { channel, count: 2, index: 0 } });
    b = await startTestServer('sqlite', { sharedStorage: storage, peers: { channel, count: 2, index: 1 } });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await storage.cleanup();
  });

  test('a catalog write tells the other threads which tables changed', async () => {
    const listener = new Peers({ channel, count: 3, index: 2 });
    const heard: unknown[] = [];
    listener.on('catalog-tables', (tables) => heard.push(tables));
    try {
      expect((await a.call('catalog', 'PUT', '/v1/kv/told', { raw: 'x' })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(heard).toContainEqual(expect.arrayContaining(['kvs']));
    } finally {
      listener.close();
    }
  });

  test('a blocking query waiting in one thread answers a write made in the other', async () => {
    const put = await a.call('catalog', 'PUT', '/v1/kv/watched', { raw: 'one' });
    expect(put.status).toBe(200);
    const first = await b.call('catalog', 'GET', '/v1/kv/watched');
    const index = first.headers['x-consul-index'];
    const waiting = b.call('catalog', 'GET', `/v1/kv/watched?index=${index}&wait=60s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await a.call('catalog', 'PUT', '/v1/kv/watched', { raw: 'two' })).status).toBe(200);
    const answered = await waiting;
    expect(Number(answered.headers['x-consul-index'])).toBeGreaterThan(Number(index));
    expect(Buffer.from((answered.body as { Value: string }[])[0].Value, 'base64').toString()).toBe('two');
  });

  test('either thread answers the metrics of both, and the database gauges and process metrics once', async () => {
    for (let i = 0; i < 3; i++) expect((await a.call('catalog', 'GET', '/v1/status/leader')).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await b.call('catalog', 'GET', '/v1/status/leader')).status).toBe(200);
    await a.call('catalog', 'PUT', '/v1/session/create', { body: {} });
    for (const server of [a, b]) {
      const text = (await server.call('catalog', 'GET', '/v1/agent/metrics?format=prometheus')).text;
      const leader = /hangar_http_requests_total\{[^}]*route="\/v1\/status\/leader"[^}]*\} (\d+)/.exec(text);
      expect(Number(leader?.[1])).toBe(7);
      expect(text).toMatch(/^hangar_catalog_sessions 1$/m);
      expect(text.match(/^process_start_time_seconds /gm)).toHaveLength(1);
    }
    const json = (await b.call('catalog', 'GET', '/v1/agent/metrics')).body as { Counters: { Name: string; Count: number; Labels: Record<string, string> }[] };
    const counted = json.Counters.filter((c) => c.Name === 'hangar_http_requests_total' && c.Labels.route === '/v1/status/leader');
    expect(counted.reduce((sum, c) => sum + c.Count, 0)).toBe(7);
  });
});
