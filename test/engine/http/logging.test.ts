import { Writable } from 'node:stream';
import { LOCAL_ADMIN_HEADER } from '../../../src/engine/engine';
import { redactUrl } from '../../../src/engine/http/tokens';
import { coalescedLines, createLogger } from '../../../src/engine/logger';
import { hangar } from '../../helpers/cli';
import { captureLog, CapturedLog } from '../../helpers/log-capture';
import { ROOT_TOKEN, startTestServer, TestServer } from '../../helpers/server';
import { STORAGE_KINDS } from '../../helpers/storage';

const PASSWORD = 'dave-s3cret-password';
const WRONG_PASSWORD = 'wrong-s3cret-guess';
/** Sent unquoted in a malformed body; short, so the JSON parser's error message quotes it whole. */
const UNQUOTED_PASSWORD = 'pw-Zq81';

describe.each(STORAGE_KINDS)('logs (%s)', (kind) => {
  let server: TestServer;
  let log: CapturedLog;
  let token: string;

  beforeAll(async () => {
    log = captureLog('trace');
    server = await startTestServer(kind, { logger: log.logger });
    token = await trafficWithSecrets(server);
  });
  afterAll(() => server.close());

  test('one line per request, at debug: method, path with its query redacted, status and time', () => {
    const lines = log.records().filter((r) => r.msg === 'request');
    expect(lines.map((r) => r.url)).toEqual(
      expect.arrayContaining([
        '/api/v1/admin/users',
        '/api/v1/authenticate',
        '/api/v1/authenticate?access_token=redacted',
        '/api/v1/nothing-here?access_token=redacted&token=redacted&page=2',
        '/v1/auth/token/lookup-self',
        '/v1/acl/token/self',
      ]),
    );
    for (const line of lines) {
      expect(line).toMatchObject({ level: 20, method: expect.any(String), status: expect.any(Number), ms: expect.any(Number) });
      expect(line.reqId).toEqual(expect.any(String));
    }
    expect(lines.find((r) => r.url === '/api/v1/nothing-here?access_token=redacted&token=redacted&page=2')).toMatchObject({ api: 'registry', status: 404 });
    // Not Fastify's two lines per request; "request received" only at trace.
    expect(log.records().filter((r) => r.msg === 'incoming request' || r.msg === 'request completed')).toEqual([]);
    expect(log.records().filter((r) => r.msg === 'request received').length).toBe(lines.length);
  });

  test('never contain a user token, the root token or a password', () => {
    const text = log.text();
    expect(text.length).toBeGreaterThan(0);
    for (const secret of [token, ROOT_TOKEN, PASSWORD, WRONG_PASSWORD, UNQUOTED_PASSWORD, server.engine.localAdminSecret]) {
      expect(text).not.toContain(secret);
    }
  });
});

// ---------------------------------------------------------------------------------------------

/**
 * Requests carrying secrets in every place a client may put them: a password in the body (user
 * creation, login, a failed login, a malformed login), tokens in each header and in the query.
 * Returns the user token it logged in with.
 */
async function trafficWithSecrets(server: TestServer): Promise<string> {
  const created = await server.call('registry', 'POST', '/api/v1/admin/users', {
    body: { user: { username: 'dave', password: PASSWORD } },
    headers: { authorization: `Bearer ${ROOT_TOKEN}` },
  });
  expect(created.status).toBe(200);
  const login = await server.call('registry', 'POST', '/api/v1/authenticate', { body: { user: { login: 'dave', password: PASSWORD } } });
  expect(login.status).toBe(200);
  const token: string = login.body.token;

  const failed = await server.call('registry', 'POST', '/api/v1/authenticate', { body: { user: { login: 'dave', password: WRONG_PASSWORD } } });
  expect(failed.status).toBe(401);
  const malformed = await server.call('registry', 'POST', '/api/v1/authenticate', {
    raw: `{"user":{"login":"dave","password":${UNQUOTED_PASSWORD}}}`,
    headers: { 'content-type': 'application/json' },
  });
  expect(malformed.status).toBe(400);

  for (const [path, headers] of [
    ['/api/v1/authenticate', { authorization: `Bearer ${token}` }],
    ['/api/v1/authenticate', { 'x-registry-token': token }],
    ['/api/v1/authenticate', { 'x-atlas-token': token }],
    [`/api/v1/authenticate?access_token=${token}`, {}],
    ['/api/v1/authenticate', { authorization: `Bearer ${ROOT_TOKEN}`, [LOCAL_ADMIN_HEADER]: server.engine.localAdminSecret }],
  ] as const) {
    expect((await server.call('registry', 'GET', path, { headers })).status).toBe(200);
  }
  const unknown = await server.call('registry', 'GET', `/api/v1/nothing-here?access_token=${token}&token=${ROOT_TOKEN}&page=2`);
  expect(unknown.status).toBe(404);
  expect((await server.call('secrets', 'GET', '/v1/auth/token/lookup-self', { headers: { 'x-vault-token': ROOT_TOKEN } })).status).toBe(200);
  expect((await server.call('catalog', 'GET', '/v1/acl/token/self', { headers: { 'x-consul-token': ROOT_TOKEN } })).status).toBe(200);
  return token;
}

describe('log formats and levels', () => {
  let server: TestServer;
  let pretty: string[];

  beforeAll(async () => {
    pretty = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        pretty.push(...chunk.toString().split('\n').filter(Boolean));
        callback();
      },
    });
    server = await startTestServer('sqlite', { logger: createLogger({ level: 'debug', format: 'pretty', destination }) });
  });
  afterAll(() => server.close());

  test('pretty: one readable line per request, with its request id, and no token', async () => {
    expect((await server.call('secrets', 'GET', '/v1/sys/health?token=abc', { headers: { 'x-vault-token': ROOT_TOKEN } })).status).toBe(200);
    const line = pretty.find((l) => l.includes('/v1/sys/health'));
    expect(line).toMatch(/DEBUG: secrets: GET \/v1\/sys\/health\?token=redacted 200 [\d.]+ms {"reqId":"[0-9a-f-]{36}"}$/);
    expect(pretty.filter((l) => l.includes('/v1/sys/health'))).toHaveLength(1);
    expect(pretty.join('\n')).not.toContain(ROOT_TOKEN);
  });

  test('info (the default outside --dev) logs no line per request', async () => {
    const quiet = captureLog('info');
    const other = await startTestServer('sqlite', { logger: quiet.logger });
    try {
      expect((await other.call('secrets', 'GET', '/v1/sys/health')).status).toBe(200);
      expect(quiet.records().filter((r) => String(r.url ?? '').includes('/v1/sys/health'))).toEqual([]);
    } finally {
      await other.close();
    }
  });

  test('the server\'s flags are checked', () => {
    const bad = hangar(['server', '--log-format', 'xml']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--log-format must be json or pretty, not "xml"/);
    expect(hangar(['server', '--log-level', 'loud']).stderr).toMatch(/--log-level must be one of fatal, error, warn, info, debug, trace, silent/);
  });
});

describe('the log line helpers', () => {
  test('lines written in one turn of the event loop leave in one write, in order', async () => {
    const writes: string[] = [];
    const out = coalescedLines({ write: (text: string) => writes.push(text) });
    out.write('one\n');
    out.write('two\n');
    out.write('three\n');
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['one\ntwo\nthree\n']);
    out.write('four\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['one\ntwo\nthree\n', 'four\n']);
  });

  test('a query without a secret parameter is kept as sent; secret ones are blanked, escaped names too', () => {
    expect(redactUrl('/v1/kv/a?index=12&wait=5m')).toBe('/v1/kv/a?index=12&wait=5m');
    expect(redactUrl('/v1/sys/health?token=abc&x=1')).toBe('/v1/sys/health?token=redacted&x=1');
    expect(redactUrl('/v1/x?acc%65ss_token=abc')).toBe('/v1/x?access_token=redacted');
  });
});
