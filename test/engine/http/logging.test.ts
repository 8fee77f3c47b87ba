import { LOCAL_ADMIN_HEADER } from '../../../src/engine/engine';
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

  test('record every request, with its path and redacted query', () => {
    const urls = log.records().filter((r) => r.msg === 'incoming request').map((r) => (r.req as { url: string }).url);
    expect(urls).toEqual(
      expect.arrayContaining([
        '/api/v1/admin/users',
        '/api/v1/authenticate',
        '/api/v1/authenticate?access_token=redacted',
        '/api/v1/nothing-here?access_token=redacted&token=redacted&page=2',
        '/v1/auth/token/lookup-self',
        '/v1/acl/token/self',
      ]),
    );
    expect(log.records().filter((r) => r.msg === 'request completed').length).toBe(urls.length);
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
