import { ManualClock } from '../../../../src/engine/clock';
import { sha256Hex } from '../../../../src/engine/crypto';
import { storedText } from '../../../helpers/raw-db';
import { ROOT_TOKEN, startTestServer, TestServer } from '../../../helpers/server';
import { STORAGE_KINDS } from '../../../helpers/storage';

const PASSWORD = 'carol password 1';
const NOW = Date.UTC(2026, 0, 1, 12, 30, 45, 678);

describe.each(STORAGE_KINDS)('registry /api/v1/authenticate (%s)', (kind) => {
  let server: TestServer;
  const as = (token: string) => ({ authorization: `Bearer ${token}` });
  const login = (body: unknown) => server.call('registry', 'POST', '/api/v1/authenticate', { body });
  const loginAs = async (user: string, password = PASSWORD): Promise<string> => {
    const res = await login({ user: { login: user, password } });
    expect(res.status).toBe(200);
    return res.body.token;
  };

  beforeAll(async () => {
    server = await startTestServer(kind, { clock: new ManualClock(NOW) });
    const created = await server.call('registry', 'POST', '/api/v1/admin/users', {
      body: { user: { username: 'Carol', password: PASSWORD, email: 'Carol.Jones@Example.com' } },
      headers: as(ROOT_TOKEN),
    });
    expect(created.status).toBe(200);
    const org = await server.call('registry', 'POST', '/api/v1/admin/organizations', {
      body: { organization: { username: 'carols-org', owner: 'Carol' } },
      headers: as(ROOT_TOKEN),
    });
    expect(org.status).toBe(200);
  });
  afterAll(() => server.close());

  describe('POST logs in', () => {
    test('by username or e-mail, case-insensitively, each time with a new token', async () => {
      const tokens = new Set<string>();
      for (const name of ['Carol', 'carol', 'CAROL', 'Carol.Jones@Example.com', 'carol.jones@example.com', 'CAROL.JONES@EXAMPLE.COM']) {
        tokens.add(await loginAs(name));
      }
      expect(tokens.size).toBe(6);
    });

    test('returns description, token, token_hash (SHA-256 of the token) and created_at', async () => {
      const res = await login({ token: { description: 'laptop' }, user: { login: 'carol', password: PASSWORD } });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(Object.keys(res.body).sort()).toEqual(['created_at', 'description', 'token', 'token_hash']);
      expect(res.body.description).toBe('laptop');
      expect(res.body.token).toEqual(expect.any(String));
      expect(res.body.token_hash).toBe(sha256Hex(res.body.token));
      expect(res.body.token_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(res.body.created_at).toBe(new Date(NOW).toISOString());

      const undescribed = await login({ user: { login: 'carol', password: PASSWORD } });
      expect(undescribed.body.description).toBe('');
    });

    test('a wrong password and an unknown login get the same 401', async () => {
      const wrongPassword = await login({ user: { login: 'carol', password: 'not the password' } });
      const unknownUser = await login({ user: { login: 'nobody', password: PASSWORD } });
      const organization = await login({ user: { login: 'carols-org', password: PASSWORD } });
      for (const res of [wrongPassword, unknownUser, organization]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ errors: [expect.any(String)], success: false });
      }
      expect(unknownUser.body).toEqual(wrongPassword.body);
      expect(organization.body).toEqual(wrongPassword.body);
    });

    test('a missing or mistyped field is a 422 naming it, and issues no token', async () => {
      const before = await tokenCount(server);
      const cases: [unknown, RegExp][] = [
        [{}, /^user is required$/],
        [{ user: { password: PASSWORD } }, /^user\.login is required$/],
        [{ user: { login: 'carol' } }, /^user\.password is required$/],
        [{ user: { login: 5, password: PASSWORD } }, /^user\.login: must be a string$/],
        [{ user: { login: 'carol', password: true } }, /^user\.password: must be a string$/],
        [{ user: { login: '', password: PASSWORD } }, /^user\.login: /],
        [{ user: { login: 'carol', password: '' } }, /^user\.password: /],
        [{ user: 'carol' }, /^user: must be an object$/],
      ];
      for (const [body, message] of cases) {
        const res = await login(body);
        expect({ body, status: res.status }).toEqual({ body, status: 422 });
        expect(res.body.success).toBe(false);
        expect(res.body.errors).toContainEqual(expect.stringMatching(message));
      }
      expect(await tokenCount(server)).toBe(before);
    });
  });

  describe('GET checks a token', () => {
    test('200 for a valid token, 401 without one or with an invalid one', async () => {
      const token = await loginAs('carol');
      for (const headers of [as(token), { 'x-registry-token': token }]) {
        expect((await server.call('registry', 'GET', '/api/v1/authenticate', { headers })).status).toBe(200);
      }
      for (const headers of [{}, as('not-a-token'), as(`${token}x`)]) {
        const res = await server.call('registry', 'GET', '/api/v1/authenticate', { headers });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ errors: [expect.any(String)], success: false });
      }
    });
  });

  describe('DELETE logs out', () => {
    test('204, then that token no longer works while the user\'s other tokens do', async () => {
      const token = await loginAs('carol');
      const other = await loginAs('carol');
      const deleted = await server.call('registry', 'DELETE', '/api/v1/authenticate', { headers: as(token) });
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      expect((await server.call('registry', 'GET', '/api/v1/authenticate', { headers: as(token) })).status).toBe(401);
      expect((await server.call('registry', 'DELETE', '/api/v1/authenticate', { headers: as(token) })).status).toBe(401);
      expect((await server.call('registry', 'GET', '/api/v1/authenticate', { headers: as(other) })).status).toBe(200);
      expect(await tokenRow(server, token)).toBeUndefined();
    });

    test('401 without a token; 400 for the root token, which is not a user token', async () => {
      const anonymous = await server.call('registry', 'DELETE', '/api/v1/authenticate');
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.success).toBe(false);
      const root = await server.call('registry', 'DELETE', '/api/v1/authenticate', { headers: as(ROOT_TOKEN) });
      expect(root.status).toBe(400);
      expect(root.body.success).toBe(false);
    });
  });

  describe('tokens at rest', () => {
    test('the database holds the token\'s hash, never the token', async () => {
      const token = await loginAs('carol');
      expect(await tokenRow(server, token)).toBeDefined();
      const stored = await storedText(server.engine.storage, server.dataDir);
      expect(stored).toContain(sha256Hex(token));
      expect(stored).not.toContain(token);
      expect(stored).not.toContain(PASSWORD);
    });
  });
});

// ---------------------------------------------------------------------------------------------

async function tokenCount(server: TestServer): Promise<number> {
  const row = await server.engine.storage.tx((db) => db.get<{ n: number }>('SELECT COUNT(*) AS n FROM registry_tokens'));
  return Number(row!.n);
}

async function tokenRow(server: TestServer, token: string): Promise<unknown> {
  return server.engine.storage.tx((db) => db.get('SELECT id FROM registry_tokens WHERE token_hash = ?', [sha256Hex(token)]));
}
