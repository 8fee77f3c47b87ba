import { maxHeaderSize } from 'node:http';
import { connect } from 'node:net';
import { request } from 'undici';
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
      // The secrets API checks the token first, as Vault does (403 without one): the root token in its header.
      const res = await server.call(api, 'GET', `${path}?access_token=${ROOT_TOKEN}`, { headers: api === 'secrets' ? { 'x-vault-token': ROOT_TOKEN } : {} });
      expect(res.status).toBe(404);
      check(res);
      expect(res.text).not.toContain(ROOT_TOKEN);
    });
  });

  // Issue 49: Node's parser refuses an oversized URL or header before Fastify; Fastify's answer had a
  // body even for HEAD, which a client reads as the start of the next response.
  describe('a request the HTTP parser refuses is answered in the envelope, without a body for HEAD', () => {
    const paths: Record<ApiName, string> = { registry: '/api/v1/search', secrets: '/v1/sys/health', catalog: '/v1/status/leader' };
    /** Sends `text` on a fresh socket and reads until the server closes it. */
    const raw = (api: ApiName, text: string) =>
      new Promise<string>((resolve, reject) => {
        const url = new URL(server.urls[api]);
        const socket = connect(Number(url.port), url.hostname, () => socket.end(text));
        let answer = '';
        socket.setEncoding('latin1');
        socket.on('data', (chunk: string) => (answer += chunk));
        socket.on('close', () => resolve(answer));
        socket.on('error', reject);
      });
    const bodyOf = (answer: string) => answer.slice(answer.indexOf('\r\n\r\n') + 4);

    test.each(['registry', 'secrets', 'catalog'] as const)('%s', async (api) => {
      const bigHeader = (method: string) => `${method} ${paths[api]} HTTP/1.1\r\nHost: x\r\nX-Filler: ${'h'.repeat(20_000)}\r\n\r\n`;
      const longUrl = (method: string) => `${method} ${paths[api]}?q=${'u'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`;
      for (const sent of [bigHeader('HEAD'), longUrl('HEAD')]) {
        const answer = await raw(api, sent);
        expect(answer).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
        expect(answer).toMatch(/\r\nContent-Length: 0\r\n/);
        expect(bodyOf(answer)).toBe('');
      }
      // A request that starts in one packet and overflows in a later one: the method is unknown, so no body either.
      const url = new URL(server.urls[api]);
      const split = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(url.port), url.hostname, () => {
          socket.write(`HEAD ${paths[api]} HTTP/1.1\r\nHost: x\r\n`);
          setTimeout(() => socket.end(`X-Filler: ${'h'.repeat(20_000)}\r\n\r\n`), 50);
        });
        let answer = '';
        socket.setEncoding('latin1');
        socket.on('data', (chunk: string) => (answer += chunk));
        socket.on('close', () => resolve(answer));
        socket.on('error', reject);
      });
      expect([split.slice(0, 12), bodyOf(split)]).toEqual(['HTTP/1.1 431', '']);
      // GET gets the message in the API's envelope.
      const get = await raw(api, bigHeader('GET'));
      const message = `Request line and headers are larger than ${maxHeaderSize} bytes`;
      const expected = {
        registry: JSON.stringify({ errors: [message], success: false }),
        secrets: JSON.stringify({ errors: [message] }),
        catalog: message,
      }[api];
      expect([get.slice(0, 12), bodyOf(get)]).toEqual(['HTTP/1.1 431', expected]);
      // Node's own client (undici) reads the HEAD answer, and the server still serves.
      const viaClient = await request(`${server.urls[api]}${paths[api]}`, { method: 'HEAD', headers: { 'x-filler': 'h'.repeat(20_000) } });
      expect(viaClient.statusCode).toBe(431);
      expect(await viaClient.body.text()).toBe('');
      expect((await server.call(api, 'GET', paths[api])).status).toBe(200);
    });

    test.each([
      ['registry', '/api/v1/no/such/thing', 404],
      ['secrets', '/v1/no/such/thing', 403],
      ['secrets', '/v1/sys/health?list=true', 405],
      ['catalog', '/v1/acl/token/self', 403],
      ['catalog', '/v1/status/leader?dc=elsewhere', 500],
    ] as const)('%s: HEAD %s answers %d without a body', async (api, path, status) => {
      const res = await request(`${server.urls[api]}${path}`, { method: 'HEAD' });
      expect(res.statusCode).toBe(status);
      expect(await res.body.text()).toBe('');
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
