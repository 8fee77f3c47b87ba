import { AddressInfo, createServer } from 'node:net';
import { hangar, RunningServer, startServerProcess } from '../helpers/cli';

describe('hangar status', () => {
  let server: RunningServer;
  let addr: string[];
  beforeAll(async () => {
    server = await startServerProcess(['--dev']);
    addr = (['registry', 'secrets', 'catalog'] as const).flatMap((api) => [`--${api}-addr`, server.urls[api].replace('http://', '')]);
  });
  afterAll(() => server.stop());

  test('a healthy server: exit 0, each listener and the storage ok', () => {
    const text = hangar(['status', ...addr]);
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^registry +http:\/\/127\.0\.0\.1:\d+ +ok \(\d+ ms\)$/m);
    expect(text.stdout).toMatch(/^storage +ok\nhealthy\n$/m);

    const json = hangar(['status', '--json', ...addr]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      healthy: true,
      storage: 'ok',
      listeners: Object.fromEntries(
        (['registry', 'secrets', 'catalog'] as const).map((api) => [api, { url: server.urls[api], ok: true, status: 200, ms: expect.any(Number) }]),
      ),
    });
  });

  test('a listener that does not answer: exit 1 and which one', () => {
    const res = hangar(['status', '--json', ...addr.slice(0, 4), '--catalog-addr', '127.0.0.1:1']);
    expect(res.code).toBe(1);
    const body = JSON.parse(res.stdout);
    expect(body).toMatchObject({ healthy: false, storage: 'ok', listeners: { registry: { ok: true }, catalog: { ok: false, error: 'ECONNREFUSED' } } });
  });

  test('a listener that accepts but never answers: the timeout names it', async () => {
    // The kernel completes the connection while this process waits for the command: nothing answers.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as AddressInfo).port;
      const res = hangar(['status', '--json', '--timeout', '1', ...addr.slice(0, 4), '--catalog-addr', `127.0.0.1:${port}`]);
      expect(res.code).toBe(1);
      expect(JSON.parse(res.stdout).listeners.catalog).toMatchObject({ ok: false, error: 'no answer within 1 s' });
    } finally {
      silent.close();
    }
  });

  test('bad flags: exit 2 with the flag named', () => {
    const res = hangar(['status', '--secrets-addr', 'nowhere']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--secrets-addr: invalid address "nowhere"/);
    expect(hangar(['status', '--timeout', '0']).stderr).toMatch(/--timeout must be a number of seconds/);
  });
});
