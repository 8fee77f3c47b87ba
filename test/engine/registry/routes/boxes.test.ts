import { ROOT_TOKEN, startTestServer, TestServer, userWithToken } from '../../../helpers/server';
import { STORAGE_KINDS } from '../../../helpers/storage';

describe.each(STORAGE_KINDS)('registry boxes (%s)', (kind) => {
  let server: TestServer;
  let alice: string;
  let bob: string;
  const as = (token: string) => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    server = await startTestServer(kind);
    alice = await userWithToken(server, 'alice');
    bob = await userWithToken(server, 'bob');
  });
  afterAll(() => server.close());

  test('create, read, update and delete a box', async () => {
    const created = await server.call('registry', 'POST', '/api/v1/boxes', {
      body: { box: { username: 'alice', name: 'web', short_description: 'Web', description: '**bold**' } },
      headers: as(alice),
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      tag: 'alice/web',
      name: 'web',
      username: 'alice',
      short_description: 'Web',
      description_markdown: '**bold**',
      description_html: '<p><strong>bold</strong></p>\n',
      private: true,
      downloads: 0,
      current_version: null,
      versions: [],
    });
    expect(created.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const read = await server.call('registry', 'GET', '/api/v1/box/alice/web', { headers: as(alice) });
    expect(read.status).toBe(200);
    expect(read.body.tag).toBe('alice/web');

    const updated = await server.call('registry', 'PUT', '/api/v1/box/alice/web', {
      body: { box: { short_description: 'Changed', is_private: false } },
      headers: as(alice),
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ short_description: 'Changed', private: false, description_markdown: '**bold**' });

    const deleted = await server.call('registry', 'DELETE', '/api/v1/box/alice/web', { headers: as(alice) });
    expect(deleted.status).toBe(200);
    expect(deleted.body.tag).toBe('alice/web');
    expect((await server.call('registry', 'GET', '/api/v1/box/alice/web', { headers: as(alice) })).status).toBe(404);
  });

  test('a private box is invisible (404) to others and to anonymous callers', async () => {
    await server.call('registry', 'POST', '/api/v1/boxes', { body: { box: { name: 'secret' } }, headers: as(alice) });
    for (const headers of [{}, as(bob), as('not-a-token')]) {
      const res = await server.call('registry', 'GET', '/api/v1/box/alice/secret', { headers });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ errors: ['Resource not found!'], success: false });
    }
    const put = await server.call('registry', 'PUT', '/api/v1/box/alice/secret', { body: { box: { short_description: 'x' } }, headers: as(bob) });
    expect(put.status).toBe(404);
    const del = await server.call('registry', 'DELETE', '/api/v1/box/alice/secret', { headers: as(bob) });
    expect(del.status).toBe(404);
    expect((await server.call('registry', 'GET', '/api/v1/box/alice/secret', { headers: as(alice) })).body.short_description).toBe('');
  });

  test('a public box is readable by all and writable only by its owner (403)', async () => {
    await server.call('registry', 'POST', '/api/v1/boxes', { body: { box: { name: 'open', is_private: false } }, headers: as(alice) });
    expect((await server.call('registry', 'GET', '/api/v1/box/alice/open')).status).toBe(200);
    const put = await server.call('registry', 'PUT', '/api/v1/box/alice/open', { body: { box: { short_description: 'x' } }, headers: as(bob) });
    expect(put.status).toBe(403);
    expect(put.body.success).toBe(false);
    const create = await server.call('registry', 'POST', '/api/v1/boxes', { body: { box: { username: 'alice', name: 'intruder' } }, headers: as(bob) });
    expect(create.status).toBe(403);
    expect((await server.call('registry', 'GET', '/api/v1/box/alice/intruder', { headers: as(alice) })).status).toBe(404);
  });

  test('tokens are accepted from every documented place', async () => {
    await server.call('registry', 'POST', '/api/v1/boxes', { body: { box: { name: 'tokens' } }, headers: as(alice) });
    for (const [path, headers] of [
      ['/api/v1/box/alice/tokens', { authorization: `Bearer ${alice}` }],
      ['/api/v1/box/alice/tokens', { 'x-registry-token': alice }],
      ['/api/v1/box/alice/tokens', { 'x-atlas-token': alice }],
      [`/api/v1/box/alice/tokens?access_token=${alice}`, {}],
      ['/api/v1/box/alice/tokens', { authorization: `Bearer ${ROOT_TOKEN}` }],
    ] as const) {
      expect((await server.call('registry', 'GET', path, { headers })).status).toBe(200);
    }
  });

  test('writes need a token (401)', async () => {
    const res = await server.call('registry', 'POST', '/api/v1/boxes', { body: { box: { name: 'anon' } } });
    expect(res.status).toBe(401);
    expect(res.body.success).toBe(false);
  });

  test('bad input is refused with 422 naming the field, and nothing is created', async () => {
    const cases: [unknown, RegExp][] = [
      [{}, /^box is required$/],
      [{ box: { name: '../etc' } }, /^box\.name: may contain only/],
      [{ box: { name: 'a/b' } }, /^box\.name: /],
      [{ box: { name: 'x', short_description: 5 } }, /^box\.short_description: must be a string$/],
      [{ box: { name: 'x', is_private: 'yes' } }, /^box\.is_private: must be a boolean$/],
      [{ box: { name: 'x', short_description: 'y'.repeat(1001) } }, /^box\.short_description: must be at most 1000/],
      [{ box: { name: 'n'.repeat(101) } }, /^box\.name: must be at most 100/],
    ];
    for (const [body, message] of cases) {
      const res = await server.call('registry', 'POST', '/api/v1/boxes', { body, headers: as(alice) });
      expect(res.status).toBe(422);
      expect(res.body.success).toBe(false);
      expect(res.body.errors[0]).toMatch(message);
    }
    const badPath = await server.call('registry', 'GET', '/api/v1/box/alice/..%2f..', { headers: as(alice) });
    expect(badPath.status).toBe(422);
    expect((await server.call('registry', 'GET', '/api/v1/box/alice/x', { headers: as(alice) })).status).toBe(404);
  });

  test('malformed, non-UTF-8 and oversized bodies get clear errors', async () => {
    const headers = { ...as(alice), 'content-type': 'application/json' };
    const broken = await server.call('registry', 'POST', '/api/v1/boxes', { raw: '{"box":', headers });
    expect(broken.status).toBe(400);
    expect(broken.body.errors[0]).toMatch(/not valid JSON/);
    const latin1 = await server.call('registry', 'POST', '/api/v1/boxes', { raw: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]), headers });
    expect(latin1.status).toBe(400);
    expect(latin1.body.errors[0]).toMatch(/UTF-8/);
    const huge = await server.call('registry', 'POST', '/api/v1/boxes', { raw: `{"box":{"name":"x","description":"${'a'.repeat(2 * 1024 * 1024)}"}}`, headers });
    expect(huge.status).toBe(413);
    expect(huge.body.errors[0]).toMatch(/larger than/);
  });

  test('duplicate names are refused, also case-insensitively', async () => {
    await server.call('registry', 'POST', '/api/v1/boxes', { body: { box: { name: 'dup' } }, headers: as(alice) });
    const again = await server.call('registry', 'POST', '/api/v1/boxes', { body: { box: { name: 'DUP' } }, headers: as(alice) });
    expect(again.status).toBe(422);
    expect(again.body.errors[0]).toMatch(/already been taken/);
  });

  test('an organization member writes the organization\'s boxes', async () => {
    const org = await server.call('registry', 'POST', '/api/v1/admin/organizations', {
      body: { organization: { username: 'acme', owner: 'alice' } },
      headers: as(ROOT_TOKEN),
    });
    expect(org.status).toBe(200);
    const made = await server.call('registry', 'POST', '/api/v1/boxes', { body: { box: { username: 'acme', name: 'base' } }, headers: as(alice) });
    expect(made.status).toBe(200);
    expect(made.body.tag).toBe('acme/base');
    expect((await server.call('registry', 'GET', '/api/v1/box/acme/base', { headers: as(bob) })).status).toBe(404);
  });

  test('admin endpoints need the root token', async () => {
    const res = await server.call('registry', 'POST', '/api/v1/admin/users', {
      body: { user: { username: 'mallory', password: 'password123' } },
      headers: as(alice),
    });
    expect(res.status).toBe(403);
  });
});
