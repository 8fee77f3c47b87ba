import { Client } from 'pg';
import { BackgroundJob, Scheduler } from '../../src/engine/background';
import { runtimeOf } from '../../src/engine/catalog/runtime';
import { ManualClock } from '../../src/engine/clock';
import { ROOT_TOKEN, startTestServer, TestServer } from '../helpers/server';
import { freshStorage, FreshStorage, STORAGE_KINDS } from '../helpers/storage';
import { until } from '../helpers/until';

/**
 * Two engines on one PostgreSQL database in this process (cheap to start; the process-level test
 * with kill -9 is two-servers.test.ts): blocking queries wake through LISTEN/NOTIFY, also after the
 * listening connection was lost, and a job lease goes to one server only.
 */
const describePostgres = STORAGE_KINDS.includes('postgres') ? describe : describe.skip;

describePostgres('two servers on one PostgreSQL, in process', () => {
  let storage: FreshStorage;
  let a: TestServer;
  let b: TestServer;
  let admin: Client;
  const clock = new ManualClock();

  beforeAll(async () => {
    storage = await freshStorage('postgres');
    a = await startTestServer('postgres', { sharedStorage: storage, clock });
    b = await startTestServer('postgres', { sharedStorage: storage, clock });
    admin = new Client({ connectionString: (storage.config as { url: string }).url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await a?.close();
    await b?.close();
    await storage?.cleanup();
  });

  const root = { 'x-consul-token': ROOT_TOKEN };
  const put = (server: TestServer, key: string, value: string) => server.call('catalog', 'PUT', `/v1/kv/${key}`, { raw: value, headers: root });
  const get = (server: TestServer, path: string) => server.call('catalog', 'GET', path, { headers: root });
  const index = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-consul-index']);
  const valueOf = (res: { body: { Value: string }[] }) => Buffer.from(res.body[0].Value, 'base64').toString();
  const listeners = async () =>
    (await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN hangar_catalog_tables'"))
      .rows;

  /** Starts a blocking read of `key` on `server` and waits until it is parked. */
  async function block(server: TestServer, key: string) {
    const first = await get(server, `/v1/kv/${key}`);
    const waiting = runtimeOf(server.engine).blocking.waiting;
    const pending = get(server, `/v1/kv/${key}?index=${index(first)}&wait=60s`);
    await until('the read to park', () => runtimeOf(server.engine).blocking.waiting > waiting);
    return { first, pending };
  }

  test('a blocking query on one server wakes on a write through the other (LISTEN/NOTIFY, no polling)', async () => {
    await put(a, 'shared', 'one');
    const onB = await block(b, 'shared');
    const onA = await block(a, 'shared');
    // One listening connection per server, and no poller: the wake-up is the NOTIFY.
    await until('both servers to LISTEN', async () => (await listeners()).length === 2);
    expect((runtimeOf(b.engine).blocking as unknown as { poller?: unknown }).poller).toBeUndefined();

    expect((await put(a, 'shared', 'two')).status).toBe(200);
    const [wokenB, wokenA] = await Promise.all([onB.pending, onA.pending]);
    expect(valueOf(wokenB)).toBe('two');
    expect(index(wokenB)).toBeGreaterThan(index(onB.first));
    expect(valueOf(wokenA)).toBe('two');
  });

  test('a lost listening connection reconnects; a write during the gap still wakes the waiter', async () => {
    await put(b, 'gap', 'one');
    const waiter = await block(b, 'gap');
    const before = (await listeners()).map((r) => r.pid);
    await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [before]);
    // Written while (most likely) nobody listens: the re-read after reconnecting notices it.
    await put(a, 'gap', 'two');
    expect(valueOf(await waiter.pending)).toBe('two');
    await until('both servers to LISTEN again', async () => {
      const now = (await listeners()).map((r) => r.pid);
      return now.length === 2 && now.every((pid) => !before.includes(pid));
    });
    const parked = await block(b, 'gap');
    await put(a, 'gap', 'three');
    expect(valueOf(await parked.pending)).toBe('three');
  });

  test('a job lease goes to one server: rounds run once however the two race for it', async () => {
    let runs = 0;
    const job: BackgroundJob = {
      name: 'test.two-servers-once',
      intervalMs: 1000,
      run: async () => {
        runs++;
      },
    };
    const onA = new Scheduler(a.engine, [job]);
    const onB = new Scheduler(b.engine, [job]);
    for (let round = 1; round <= 20; round++) {
      // The last holder's lease has run out: both servers try to take it at the same moment.
      clock.advance(3 * job.intervalMs);
      await Promise.all([onA.runOnce(), onB.runOnce()]);
      expect(runs).toBe(round);
    }
    const lease = await admin.query<{ value: string }>("SELECT value FROM settings WHERE name = 'lease:test.two-servers-once'");
    expect([onA.holder, onB.holder]).toContain(lease.rows[0].value.split(' ')[0]);
    expect(onA.holder).toMatch(new RegExp(`:${process.pid}:`));
  });
});
