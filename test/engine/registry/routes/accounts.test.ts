import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ManualClock } from '../../../../src/engine/clock';
import { configureRegistry } from '../../../../src/engine/registry/config';
import { ROOT_TOKEN, startTestServer, TestServer, userWithToken } from '../../../helpers/server';
import { STORAGE_KINDS, tempDir } from '../../../helpers/storage';
import { adminOwner, as, registry } from '../registry-helpers';

const PASSWORD = 'correct horse battery';

describe.each(STORAGE_KINDS)('registry search, owners, two-factor, limits (%s)', (kind) => {
  let server: TestServer;
  let clock: ManualClock;
  let alice: ReturnType<typeof registry>;
  let bob: ReturnType<typeof registry>;
  let anon: ReturnType<typeof registry>;
  const work = tempDir();

  beforeAll(async () => {
    clock = new ManualClock(Date.now());
    server = await startTestServer(kind, { clock });
    configureRegistry(server.engine, { twoFactorCommand: `echo "$HANGAR_2FA_CODE $HANGAR_2FA_DESTINATION" > '${join(work, 'code')}'` });
    alice = registry(server, await userWithToken(server, 'alice'));
    bob = registry(server, await userWithToken(server, 'bob'));
    anon = registry(server);
    await alice.publishedBox('alice/debian-web', '1.0.0', { short_description: 'Nginx on Debian' });
    clock.advance(1000);
    await alice.publishedBox('alice/ubuntu-db', '2.0.0', { short_description: 'PostgreSQL database' });
    clock.advance(1000);
    await alice.createBox('alice', 'private-web', { short_description: 'Nginx secret' });
    await alice.createVersion('alice/private-web', '1.0.0');
    await alice.createProvider('alice/private-web', '1.0.0', { name: 'libvirt', url: 'https://example.com/p.box' });
    await alice.release('alice/private-web', '1.0.0');
    await alice.createBox('alice', 'unreleased-web', { is_private: false, short_description: 'Nginx soon' });
    clock.advance(1000);
    await bob.publishedBox('bob/web', '0.1.0', { short_description: 'Apache' });
  });
  afterAll(() => server.close());

  const names = (res: { body: { boxes: { tag: string }[] } }) => res.body.boxes.map((b) => b.tag);

  test('search: q by word prefix over owner, name and short description; only visible, released boxes', async () => {
    expect(names(await anon.call('GET', '/api/v1/search?q=nginx')).sort()).toEqual(['alice/debian-web']);
    expect(names(await alice.call('GET', '/api/v1/search?q=nginx')).sort()).toEqual(['alice/debian-web', 'alice/private-web']);
    expect(names(await anon.call('GET', '/api/v1/search?q=deb')).sort()).toEqual(['alice/debian-web']);
    expect(names(await anon.call('GET', '/api/v1/search?q=BOB')).sort()).toEqual(['bob/web']);
    expect(names(await anon.call('GET', '/api/v1/search?q=alice%20postgres'))).toEqual(['alice/ubuntu-db']);
    expect(names(await anon.call('GET', '/api/v1/search?q=nothing-like-this'))).toEqual([]);
    const result = await anon.call('GET', '/api/v1/search?q=debian');
    expect(result.body.boxes[0].current_version).toMatchObject({ version: '1.0.0', providers: [{ name: 'virtualbox' }] });
    expect(result.body.boxes[0]).not.toHaveProperty('versions');
  });

  test('search: provider filter, sort, order, limit and page', async () => {
    expect(names(await alice.call('GET', '/api/v1/search?provider=libvirt'))).toEqual(['alice/private-web']);
    await anon.call('GET', '/alice/boxes/ubuntu-db/versions/2.0.0/providers/virtualbox.box');
    expect(names(await anon.call('GET', '/api/v1/search'))[0]).toBe('alice/ubuntu-db');
    expect(names(await anon.call('GET', '/api/v1/search?sort=created&order=asc'))).toEqual(['alice/debian-web', 'alice/ubuntu-db', 'bob/web']);
    expect(names(await anon.call('GET', '/api/v1/search?sort=created&order=desc&limit=1&page=2'))).toEqual(['alice/ubuntu-db']);
    for (const [query, message] of [
      ['limit=101', /^limit: must be at most 100$/],
      ['limit=0', /^limit: must be at least 1$/],
      ['limit=x', /^limit: /],
      ['page=0', /^page: must be at least 1$/],
      ['sort=name', /^sort: must be one of downloads, created, updated$/],
      ['order=up', /^order: must be desc or asc$/],
      ['provider=../x', /^provider/],
    ] as const) {
      const res = await anon.call('GET', `/api/v1/search?${query}`);
      expect({ query, status: res.status }).toEqual({ query, status: 422 });
      expect(res.body.errors[0]).toMatch(message);
    }
  });

  test('GET /api/v1/user/:username: profile as sanitized HTML, avatar, and only the boxes the caller may see', async () => {
    await adminOwner(server, 'alice', { profile_markdown: 'Hi <script>alert(1)</script> [me](javascript:alert(1)) **bold**' });
    const seen = await anon.call('GET', '/api/v1/user/alice');
    expect(seen.status).toBe(200);
    expect(seen.body.username).toBe('alice');
    expect(seen.body.avatar_url).toMatch(/^https:\/\/www\.gravatar\.com\/avatar\/[0-9a-f]{64}\?d=identicon$/);
    expect(seen.body.profile_html).toContain('<strong>bold</strong>');
    expect(seen.body.profile_html).not.toMatch(/<script|href="javascript:/);
    expect(seen.body.boxes.map((b: any) => b.name)).toEqual(['debian-web', 'ubuntu-db', 'unreleased-web']);
    expect((await alice.call('GET', '/api/v1/user/alice')).body.boxes.map((b: any) => b.name)).toContain('private-web');
    expect(JSON.stringify(seen.body)).not.toContain('@example.com');
    expect((await anon.call('GET', '/api/v1/user/nobody')).status).toBe(404);
    expect((await anon.call('GET', '/api/v1/user/..%2F..')).status).toBe(422);
  });

  test('two-factor: 406 with delivery methods, a code by the notifier (never in the response), single use, limited', async () => {
    await server.call('registry', 'POST', '/api/v1/admin/users', {
      body: { user: { username: 'dave', password: PASSWORD, phone: '+44 20 7946 0958' } },
      headers: as(ROOT_TOKEN),
    });
    await adminOwner(server, 'dave', { two_factor: 'sms' });
    const login = (code?: string) =>
      anon.call('POST', '/api/v1/authenticate', { user: { login: 'dave', password: PASSWORD }, ...(code ? { two_factor: { code } } : {}) });
    const needed = await login();
    expect(needed.status).toBe(406);
    expect(needed.body).toEqual({
      errors: [expect.stringMatching(/two_factor\.code/)],
      success: false,
      two_factor: { default_delivery_method: 'sms', delivery_methods: ['sms'] },
    });
    const requestCode = (method = 'sms', password = PASSWORD) =>
      anon.call('POST', '/api/v1/two-factor/request-code', { two_factor: { delivery_method: method }, user: { login: 'dave', password } });
    expect((await requestCode('sms', 'wrong password')).status).toBe(401);
    expect((await requestCode('app')).body.errors[0]).toMatch(/^two_factor\.delivery_method: must be sms$/);
    const sent = await requestCode();
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({ two_factor: { obfuscated_destination: '+** ** **** **58' } });
    const [code, destination] = readFileSync(join(work, 'code'), 'utf8').trim().split(' ');
    expect(code).toMatch(/^\d{6}$/);
    expect(destination).toBe('+44');
    expect(JSON.stringify(sent.body)).not.toContain(code);
    // Another code at once is too soon.
    expect((await requestCode()).status).toBe(429);

    expect((await login('000000' === code ? '111111' : '000000')).status).toBe(401);
    const ok = await login(code);
    expect(ok.status).toBe(200);
    expect(ok.body.token).toMatch(/^hgr\./);
    expect((await login(code)).status).toBe(401);

    // Codes expire, and five wrong tries burn one.
    clock.advance(31_000);
    await requestCode();
    const second = readFileSync(join(work, 'code'), 'utf8').trim().split(' ')[0];
    clock.advance(301_000);
    expect((await login(second)).status).toBe(401);
    await requestCode();
    const third = readFileSync(join(work, 'code'), 'utf8').trim().split(' ')[0];
    const wrong = third === '123456' ? '654321' : '123456';
    for (let i = 0; i < 5; i++) expect((await login(wrong)).status).toBe(401);
    expect((await login(third)).status).toBe(401);
  });

  test('organizations: owners manage members; members write the organization\'s boxes', async () => {
    await server.call('registry', 'POST', '/api/v1/admin/organizations', {
      body: { organization: { username: 'acme', owner: 'alice' } },
      headers: as(ROOT_TOKEN),
    });
    expect((await bob.call('POST', '/api/v1/boxes', { box: { username: 'acme', name: 'tool' } })).status).toBe(403);
    expect((await bob.call('PUT', '/api/v1/organization/acme/members/bob')).status).toBe(404);
    const added = await alice.call('PUT', '/api/v1/organization/acme/members/bob', { member: { role: 'member' } });
    expect(added.body.members).toEqual([{ username: 'alice', role: 'owner' }, { username: 'bob', role: 'member' }]);
    expect((await bob.call('POST', '/api/v1/boxes', { box: { username: 'acme', name: 'tool' } })).status).toBe(200);
    expect((await bob.call('PUT', '/api/v1/organization/acme/members/carol')).status).toBe(403);
    expect((await alice.call('DELETE', '/api/v1/organization/acme/members/alice')).status).toBe(422);
    expect((await alice.call('DELETE', '/api/v1/organization/acme/members/bob')).status).toBe(200);
    expect((await bob.call('GET', '/api/v1/box/acme/tool')).status).toBe(404);
  });

  test('402 for a delinquent owner: no changes, no private downloads; public reads go on', async () => {
    await adminOwner(server, 'bob', { delinquent: true });
    const change = await bob.call('PUT', '/api/v1/box/bob/web', { box: { short_description: 'x' } });
    expect(change.status).toBe(402);
    expect(change.body).toEqual({ errors: [expect.stringMatching(/delinquent/)], success: false });
    expect((await anon.call('GET', '/bob/web')).status).toBe(200);
    await adminOwner(server, 'bob', { delinquent: false });
    expect((await bob.call('PUT', '/api/v1/box/bob/web', { box: { short_description: 'x' } })).status).toBe(200);
  });

  test('the maintenance state, asked of a server that has not read it yet', async () => {
    // Read in the request's own transaction: it once opened a second one, which waited for the first for ever.
    const fresh = await startTestServer('sqlite');
    try {
      expect(await fresh.call('registry', 'GET', '/api/v1/admin/maintenance', { headers: as(ROOT_TOKEN) })).toMatchObject({
        status: 200,
        body: { maintenance: { enabled: false } },
      });
    } finally {
      await fresh.close();
    }
  });

  test('503 in maintenance mode: changes refused, reads of released boxes go on', async () => {
    const on = await server.call('registry', 'PUT', '/api/v1/admin/maintenance', { body: { maintenance: { enabled: true } }, headers: as(ROOT_TOKEN) });
    expect(on.status).toBe(200);
    const state = await server.call('registry', 'GET', '/api/v1/admin/maintenance', { headers: as(ROOT_TOKEN) });
    expect(state).toMatchObject({ status: 200, body: { maintenance: { enabled: true } } });
    const write = await alice.call('POST', '/api/v1/boxes', { box: { name: 'during' } });
    expect(write.status).toBe(503);
    expect(write.body.success).toBe(false);
    expect((await alice.call('GET', '/api/v1/box/alice/debian-web/version/1.0.0/provider/virtualbox/upload')).status).toBe(503);
    expect((await anon.call('GET', '/api/v1/box/alice/debian-web')).status).toBe(200);
    expect((await anon.call('GET', '/alice/debian-web')).status).toBe(200);
    expect((await anon.call('GET', '/api/v1/search?q=debian')).status).toBe(200);
    await server.call('registry', 'PUT', '/api/v1/admin/maintenance', { body: { maintenance: { enabled: false } }, headers: as(ROOT_TOKEN) });
    expect((await server.call('registry', 'GET', '/api/v1/admin/maintenance', { headers: as(ROOT_TOKEN) })).body).toEqual({ maintenance: { enabled: false } });
    expect((await alice.call('POST', '/api/v1/boxes', { box: { name: 'after' } })).status).toBe(200);
  });

  test('429 past the per-token and per-address limits, with X-RateLimit headers', async () => {
    configureRegistry(server.engine, { rateLimitPerToken: 3, rateLimitPerAddress: 2, rateLimitWindowMs: 60_000 });
    clock.advance(120_000);
    const token = await userWithToken(server, 'erin');
    clock.advance(120_000);
    const seen = [];
    for (let i = 0; i < 4; i++) seen.push(await server.call('registry', 'GET', '/api/v1/authenticate', { headers: as(token) }));
    expect(seen.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(seen[0].headers).toMatchObject({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '2', 'x-ratelimit-reset': expect.any(String) });
    expect(seen[3].body).toEqual({ errors: [expect.stringMatching(/Rate limit exceeded/)], success: false });
    expect(seen[3].headers['retry-after']).toBeDefined();
    const anonymous = [];
    for (let i = 0; i < 3; i++) anonymous.push((await anon.call('GET', '/api/v1/search')).status);
    expect(anonymous).toEqual([200, 200, 429]);
    clock.advance(60_000);
    expect((await anon.call('GET', '/api/v1/search')).status).toBe(200);
    configureRegistry(server.engine, { rateLimitPerToken: 0, rateLimitPerAddress: 0 });
  });
});
