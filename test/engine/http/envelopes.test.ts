import { ApiName } from '../../../src/engine/http/api';
import { captureLog, CapturedLog } from '../../helpers/log-capture';
import { ROOT_TOKEN, startTestServer, TestServer } from '../../helpers/server';
import { STORAGE_KINDS } from '../../helpers/storage';

describe.each(STORAGE_KINDS)('HTTP envelopes and token headers (%s)', (kind) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server.close());

  describe('each API renders its errors in its own envelope', () => {
    test('registry: JSON {errors, success: false}', async () => {
      const res = await server.call('registry', 'POST', '/api/v1/boxes', { body: { box: { name: 'anon' } } });
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({ errors: [expect.any(String)], success: false });
    });

    test('secrets: JSON {errors}', async () => {
      const res = await server.call('secrets', 'GET', '/v1/auth/token/lookup-self');
      expect(res.status).toBe(403);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({ errors: ['permission denied'] });
    });

    test('catalog: plain text', async () => {
      const res = await server.call('catalog', 'GET', '/v1/acl/token/self');
      expect(res.status).toBe(403);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.text).toBe('ACL not found');
    });
  });

  describe('an unknown endpoint is a 404 in each envelope', () => {
    test.each([
      ['registry', '/api/v1/no/such/thing', (res: Response) => expect(res.body).toEqual({ errors: [expect.stringMatching(/^No such endpoint: GET \/api\/v1\/no\/such\/thing$/)], success: false })],
      ['secrets', '/v1/no/such/thing', (res: Response) => expect(res.body).toEqual({ errors: [expect.stringMatching(/^No such endpoint: GET \/v1\/no\/such\/thing$/)] })],
      ['catalog', '/v1/no/such/thing', (res: Response) => expect(res.text).toBe('No such endpoint: GET /v1/no/such/thing')],
    ] as const)('%s', async (api, path, check) => {
      const res = await server.call(api, 'GET', `${path}?access_token=${ROOT_TOKEN}`);
      expect(res.status).toBe(404);
      check(res);
      expect(res.text).not.toContain(ROOT_TOKEN);
    });
  });

  describe('secrets API', () => {
    test('GET and HEAD /v1/sys/health answer without a token', async () => {
      const res = await server.call('secrets', 'GET', '/v1/sys/health');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ initialized: true, sealed: false, standby: false });
      expect((await server.call('secrets', 'HEAD', '/v1/sys/health')).status).toBe(200);
    });

    test('lookup-self takes the root token from X-Secrets-Token, X-Vault-Token or Authorization: Bearer', async () => {
      for (const headers of [{ 'x-secrets-token': ROOT_TOKEN }, { 'x-vault-token': ROOT_TOKEN }, { authorization: `Bearer ${ROOT_TOKEN}` }] as Headers[]) {
        const res = await server.call('secrets', 'GET', '/v1/auth/token/lookup-self', { headers });
        expect({ headers, status: res.status }).toEqual({ headers, status: 200 });
        expect(res.body.data).toMatchObject({ id: ROOT_TOKEN, policies: ['root'] });
      }
    });

    test('lookup-self is 403 without a token or with a wrong one', async () => {
      for (const headers of [{}, { 'x-vault-token': 'wrong' }, { authorization: 'Bearer wrong' }, { authorization: ROOT_TOKEN }] as Headers[]) {
        const res = await server.call('secrets', 'GET', '/v1/auth/token/lookup-self', { headers });
        expect({ headers, status: res.status }).toEqual({ headers, status: 403 });
        expect(res.body).toEqual({ errors: ['permission denied'] });
      }
    });
  });

  describe('catalog API', () => {
    test('GET /v1/status/leader answers without a token', async () => {
      const res = await server.call('catalog', 'GET', '/v1/status/leader');
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expect.any(String));
    });

    test('the status endpoints answer any token, an unknown one too, as the public service checks none there', async () => {
      for (const path of ['/v1/status/leader', '/v1/status/peers']) {
        const res = await server.call('catalog', 'GET', path, { headers: { 'x-consul-token': 'no-such-token' } });
        expect({ path, status: res.status }).toEqual({ path, status: 200 });
      }
      expect((await server.call('catalog', 'GET', '/v1/kv/x', { headers: { 'x-consul-token': 'no-such-token' } })).status).toBe(403);
    });

    test('token/self takes the root token from X-Catalog-Token, X-Consul-Token or Authorization: Bearer', async () => {
      for (const headers of [{ 'x-catalog-token': ROOT_TOKEN }, { 'x-consul-token': ROOT_TOKEN }, { authorization: `Bearer ${ROOT_TOKEN}` }] as Headers[]) {
        const res = await server.call('catalog', 'GET', '/v1/acl/token/self', { headers });
        expect({ headers, status: res.status }).toEqual({ headers, status: 200 });
        expect(res.body).toMatchObject({ SecretID: ROOT_TOKEN, Policies: [{ Name: 'global-management' }] });
      }
    });

    test('token/self is 403 without a token or with a wrong one', async () => {
      for (const headers of [{}, { 'x-consul-token': 'wrong' }, { authorization: 'Bearer wrong' }] as Headers[]) {
        const res = await server.call('catalog', 'GET', '/v1/acl/token/self', { headers });
        expect({ headers, status: res.status }).toEqual({ headers, status: 403 });
        expect(res.text).toBe('ACL not found');
      }
    });
  });
});

describe.each(STORAGE_KINDS)('internal errors (%s)', (kind) => {
  let server: TestServer;
  let log: CapturedLog;

  beforeAll(async () => {
    log = captureLog('info');
    server = await startTestServer(kind, { logger: log.logger });
    // A bug's stand-in: the table every authenticated request reads is gone under the running server.
    await server.engine.storage.tx((db) => db.run('DROP TABLE settings'));
  });
  afterAll(() => server.close());

  test.each([
    ['registry', '/api/v1/authenticate', (res: Response) => res.body.errors[0] as string, { success: false }],
    ['secrets', '/v1/auth/token/lookup-self', (res: Response) => res.body.errors[0] as string, {}],
    ['catalog', '/v1/acl/token/self', (res: Response) => res.text, undefined],
  ] as const)('%s: a 500 in its envelope with a request id that leads to the logged error', async (api, path, message, extra) => {
    const res = await server.call(api as ApiName, 'GET', path, { headers: { authorization: `Bearer ${ROOT_TOKEN}` } });
    expect(res.status).toBe(500);
    if (extra) expect(res.body).toEqual({ errors: [expect.any(String)], ...extra });
    const id = /^Internal error \(request id ([0-9a-f-]{36})\)$/.exec(message(res))?.[1];
    expect(id).toBeDefined();
    // Nothing of the cause reaches the client: no SQL, table, driver message or stack frame.
    expect(res.text).not.toMatch(/settings|sqlite|relation|does not exist|no such table|\bat \S+ \(|\.ts:\d+|node:/i);
    // The log has the whole story under the same request id.
    const logged = log.records().find((r) => r.reqId === id && r.level === 50);
    expect(logged).toMatchObject({ msg: 'request failed', api, err: { message: expect.stringMatching(/settings/) } });
  });

  test('the server keeps serving after them', async () => {
    expect((await server.call('secrets', 'GET', '/v1/sys/health')).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------

type Response = Awaited<ReturnType<TestServer['call']>>;
type Headers = Record<string, string>;
