import { ROOT_TOKEN, startSecrets, SecretsTestServer } from './helpers';
import { STORAGE_KINDS } from '../../helpers/storage';

describe.each(STORAGE_KINDS)('auth/token (%s)', (kind) => {
  let s: SecretsTestServer;
  beforeAll(async () => {
    s = await startSecrets(kind);
  });
  afterAll(() => s.close());

  const create = (body: Record<string, unknown>, token: string = ROOT_TOKEN, path = 'auth/token/create') => s.v('POST', path, body, token);
  const self = (token: string) => s.v('GET', 'auth/token/lookup-self', undefined, token);

  test('the root token works in X-Secrets-Token, X-Vault-Token and Authorization: Bearer', async () => {
    for (const header of ['x-secrets-token', 'x-vault-token']) {
      const res = await s.call('secrets', 'GET', '/v1/auth/token/lookup-self', { headers: { [header]: ROOT_TOKEN } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ policies: ['root'], id: ROOT_TOKEN, ttl: 0, expire_time: null });
    }
    const bearer = await s.call('secrets', 'GET', '/v1/auth/token/lookup-self', { headers: { authorization: `Bearer ${ROOT_TOKEN}` } });
    expect(bearer.status).toBe(200);
    expect((await s.v('GET', 'auth/token/lookup-self', undefined, null)).status).toBe(403);
    expect((await s.v('GET', 'auth/token/lookup-self', undefined, 'hvs.nope')).body).toEqual({ errors: ['permission denied'] });
  });

  test('create: the auth object, the default policy, lookups by token and accessor', async () => {
    await s.v('PUT', 'sys/policies/acl/app', { policy: 'path "secret/*" { capabilities = ["read"] }' });
    const res = await create({ policies: 'app', ttl: '1h', meta: { team: 'a' }, display_name: 'CI Runner' });
    expect(res.status).toBe(200);
    const auth = res.body.auth;
    expect(auth).toMatchObject({ policies: ['app', 'default'], lease_duration: 3600, renewable: true, token_type: 'service', orphan: false });
    expect(auth.client_token).toMatch(/^hvs\./);
    expect(auth.metadata).toEqual({ team: 'a' });
    const looked = await s.v('POST', 'auth/token/lookup', { token: auth.client_token });
    expect(looked.body.data).toMatchObject({
      id: auth.client_token,
      accessor: auth.accessor,
      policies: ['app', 'default'],
      display_name: 'token-CI-Runner',
      creation_ttl: 3600,
      ttl: 3600,
      num_uses: 0,
      path: 'auth/token/create',
      type: 'service',
      meta: { team: 'a' },
    });
    const byAccessor = await s.v('POST', 'auth/token/lookup-accessor', { accessor: auth.accessor });
    expect(byAccessor.body.data).toMatchObject({ id: '', accessor: auth.accessor, policies: ['app', 'default'] });
    expect((await self(auth.client_token)).body.data.id).toBe(auth.client_token);
    const noDefault = await create({ policies: ['app'], no_default_policy: true });
    expect(noDefault.body.auth.policies).toEqual(['app']);
  });

  test('display_name and issue_time as Vault shows them: case and dashes kept, sub-second times', async () => {
    s.clock.advance(250);
    const names: Record<string, string> = {
      'My-Token---Name': 'token-My-Token---Name',
      'CI Runner': 'token-CI-Runner',
      'trailing!': 'token-trailing',
      'a.b_c/d': 'token-a-b-c-d',
    };
    for (const [given, shown] of Object.entries(names)) {
      const data = (await self((await create({ display_name: given, ttl: '1h' })).body.auth.client_token)).body.data;
      expect(data.display_name).toBe(shown);
      expect(data.issue_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
      // What the Terraform provider reads as the token's lease_duration.
      expect(Date.parse(data.expire_time) - Date.parse(data.issue_time)).toBe(3600_000);
    }
    expect((await self((await create({})).body.auth.client_token)).body.data.display_name).toBe('token');
    s.clock.advance(-250);
  });

  test('the Go client\'s create body: empty type and nulls are defaults; root\'s children are not orphans', async () => {
    const goBody = { display_name: '', num_uses: 0, type: '', entity_alias: '', policies: ['default'], meta: null, renewable: null };
    const res = await create(goBody);
    expect(res.status).toBe(200);
    expect(res.body.auth).toMatchObject({ token_type: 'service', orphan: false, renewable: true });
    expect((await self(res.body.auth.client_token)).body.data.orphan).toBe(false);
    expect((await create({ no_parent: true })).body.auth.orphan).toBe(true);
    expect((await create({}, ROOT_TOKEN, 'auth/token/create-orphan')).body.auth.orphan).toBe(true);
  });

  test('TTLs are kept in milliseconds and rounded: a child capped by its parent reads whole seconds', async () => {
    const parent = (await create({ ttl: '1h' })).body.auth.client_token;
    s.clock.advance(1);
    const child = await create({ ttl: '2h' }, parent);
    expect(child.body.auth.lease_duration).toBe(3600);
    expect((await self(child.body.auth.client_token)).body.data.ttl).toBe(3600);
    const [p, c] = [(await self(parent)).body.data, (await self(child.body.auth.client_token)).body.data];
    expect(c.expire_time).toBe(p.expire_time);
    s.clock.advance(250);
    const short = (await create({ ttl: 60 })).body.auth;
    expect(short.lease_duration).toBe(60);
    expect((await self(short.client_token)).body.data.expire_time).toMatch(/:00\.251Z$/);
  });

  test('expiry reads the engine clock; the background job removes the token', async () => {
    const token = (await create({ ttl: 60 })).body.auth.client_token;
    s.clock.advance(59_000);
    expect((await self(token)).status).toBe(200);
    s.clock.advance(1_000);
    expect((await self(token)).status).toBe(403);
    await s.engine.scheduler.runOnce();
    const rows = await s.engine.storage.tx((db) => db.all('SELECT id_hash FROM secrets_tokens WHERE expire_at <= ?', [s.clock.now()]));
    expect(rows).toEqual([]);
  });

  test('renew: increment, max TTL and explicit max TTL; the root token is not renewable', async () => {
    const t = (await create({ ttl: '10m', explicit_max_ttl: '30m' })).body.auth;
    s.clock.advance(5 * 60_000);
    const renewed = await s.v('POST', 'auth/token/renew-self', { increment: '20m' }, t.client_token);
    expect(renewed.status).toBe(200);
    expect(renewed.body.auth.lease_duration).toBe(20 * 60);
    s.clock.advance(19 * 60_000);
    const capped = await s.v('POST', 'auth/token/renew', { token: t.client_token, increment: 3600 });
    expect(capped.body.auth.lease_duration).toBe(6 * 60);
    s.clock.advance(6 * 60_000);
    expect((await self(t.client_token)).status).toBe(403);
    const root = await s.v('POST', 'auth/token/renew-self', {});
    expect(root.status).toBe(400);
    expect(root.body.errors[0]).toMatch(/not renewable/);
    const fixed = (await create({ ttl: '1h', renewable: false })).body.auth;
    expect(fixed.renewable).toBe(false);
    expect((await s.v('POST', 'auth/token/renew-self', {}, fixed.client_token)).status).toBe(400);
  });

  test('a periodic token renews to its period, indefinitely', async () => {
    const t = (await create({ period: '1h' })).body.auth;
    expect(t.lease_duration).toBe(3600);
    for (let i = 0; i < 3; i++) {
      s.clock.advance(50 * 60_000);
      const r = await s.v('POST', 'auth/token/renew-self', { increment: 60 }, t.client_token);
      expect(r.body.auth.lease_duration).toBe(3600);
    }
    expect((await self(t.client_token)).body.data.period).toBe(3600);
  });

  test('use count: the last use works, then the token is gone', async () => {
    const t = (await create({ num_uses: 2 })).body.auth.client_token;
    const first = await self(t);
    expect(first.body.data.num_uses).toBe(1);
    expect((await self(t)).status).toBe(200);
    expect((await self(t)).status).toBe(403);
    expect((await s.v('POST', 'auth/token/lookup', { token: t })).status).toBe(400);
  });

  test('batch tokens: sealed, not stored, no accessor, not renewable, no children', async () => {
    await s.v('PUT', 'sys/policies/acl/creator', { policy: 'path "auth/token/create*" { capabilities = ["update"] }' });
    const before = await s.engine.storage.tx((db) => db.get<{ n: number }>('SELECT COUNT(*) AS n FROM secrets_tokens'));
    const b = (await create({ type: 'batch', ttl: '10m', policies: ['creator'] })).body.auth;
    const after = await s.engine.storage.tx((db) => db.get<{ n: number }>('SELECT COUNT(*) AS n FROM secrets_tokens'));
    expect(Number(after!.n)).toBe(Number(before!.n));
    expect(b).toMatchObject({ token_type: 'batch', accessor: '', renewable: false });
    expect(b.client_token).toMatch(/^hvb\./);
    expect((await self(b.client_token)).body.data).toMatchObject({ type: 'batch', ttl: 600 });
    expect((await create({}, b.client_token)).body.errors[0]).toMatch(/batch tokens cannot create/);
    expect((await s.v('POST', 'auth/token/renew-self', {}, b.client_token)).status).toBe(400);
    const tampered = b.client_token.slice(0, -2) + (b.client_token.endsWith('A') ? 'BB' : 'AA');
    expect((await self(tampered)).status).toBe(403);
    s.clock.advance(600_000);
    expect((await self(b.client_token)).status).toBe(403);
  });

  test('a batch child dies with its parent', async () => {
    await s.v('PUT', 'sys/policies/acl/creator', { policy: 'path "auth/token/create*" { capabilities = ["update"] }' });
    const parent = (await create({ policies: ['creator'], ttl: '1h' })).body.auth.client_token;
    const child = (await create({ type: 'batch', policies: ['creator'] }, parent)).body.auth.client_token;
    expect((await self(child)).status).toBe(200);
    await s.v('POST', 'auth/token/revoke', { token: parent });
    expect((await self(child)).status).toBe(403);
  });

  test('CIDR binding: a token bound to other networks is refused', async () => {
    const far = (await create({ bound_cidrs: ['10.0.0.0/8', '192.168.1.1'] })).body.auth.client_token;
    expect((await self(far)).status).toBe(403);
    const near = (await create({ bound_cidrs: '127.0.0.0/8, ::1' })).body.auth.client_token;
    const looked = await self(near);
    expect(looked.status).toBe(200);
    expect(looked.body.data.bound_cidrs).toEqual(['127.0.0.0/8', '::1']);
    expect((await create({ bound_cidrs: ['10.0.0.0/33'] })).body.errors[0]).toMatch(/bound_cidrs: .*prefix length/);
  });

  test('children go with their parent; orphans and revoke-orphan keep them', async () => {
    const parent = (await create({ policies: ['creator'], ttl: '1h' })).body.auth;
    const child = (await create({ policies: ['creator'] }, parent.client_token)).body.auth;
    expect(child.orphan).toBe(false);
    const grandchild = (await create({ policies: [] }, child.client_token)).body.auth;
    const orphan = (await create({ policies: ['default'] }, parent.client_token, 'auth/token/create-orphan')).body.auth;
    expect(orphan.orphan).toBe(true);
    expect((await s.v('POST', 'auth/token/revoke-accessor', { accessor: parent.accessor })).status).toBe(204);
    for (const t of [parent, child, grandchild]) expect((await self(t.client_token)).status).toBe(403);
    expect((await self(orphan.client_token)).status).toBe(200);

    const p2 = (await create({ policies: ['creator'], ttl: '1h' })).body.auth;
    const c2 = (await create({ policies: ['creator'] }, p2.client_token)).body.auth;
    expect((await s.v('POST', 'auth/token/revoke-orphan', { token: p2.client_token })).status).toBe(204);
    expect((await self(p2.client_token)).status).toBe(403);
    const kept = await self(c2.client_token);
    expect(kept.body.data.orphan).toBe(true);
    expect((await s.v('POST', 'auth/token/revoke-self', undefined, c2.client_token)).status).toBe(204);
    expect((await self(c2.client_token)).status).toBe(403);
  });

  test('a child never gets more than its parent', async () => {
    const parent = (await create({ policies: ['creator'], ttl: '1h' })).body.auth.client_token;
    const wider = await create({ policies: ['creator', 'app'] }, parent);
    expect(wider.status).toBe(400);
    expect(wider.body.errors[0]).toMatch(/subset.*app/);
    const inherited = await create({}, parent);
    expect(inherited.body.auth.policies).toEqual(['creator', 'default']);
    expect(inherited.body.auth.lease_duration).toBeLessThanOrEqual(3600);
    expect((await create({ no_parent: true }, parent)).body.errors[0]).toMatch(/sudo/);
    const limited = (await create({ policies: ['creator'], num_uses: 5 })).body.auth.client_token;
    expect((await create({}, limited)).body.errors[0]).toMatch(/use limit/);
  });

  test('bad input: a clear message naming the field, nothing created', async () => {
    const count = async () => Number((await s.engine.storage.tx((db) => db.get<{ n: number }>('SELECT COUNT(*) AS n FROM secrets_tokens')))!.n);
    const before = await count();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ttl: 'soon' }, /^ttl: "soon" is not a duration/],
      // Issue 49 (found by the fuzz suite): the message's String(value) threw on this object, a 500.
      [{ ttl: { toString: 0 } }, /^ttl: an object is not a duration/],
      [{ ttl: [1] }, /^ttl: a list is not a duration/],
      [{ ttl: -5 }, /^ttl: must be at least 0/],
      [{ num_uses: -1 }, /^num_uses: must be 0/],
      [{ num_uses: 'x' }, /^num_uses/],
      [{ type: 'gold' }, /^type: must be service, batch or default/],
      [{ policies: 5 }, /^policies/],
      [{ meta: { a: 1 } }, /^meta\.a/],
      [{ renewable: 'maybe' }, /^renewable/],
      [{ id: 'mine' }, /^id: custom token values/],
      [{ type: 'batch', period: 60 }, /batch tokens cannot be periodic/],
    ];
    for (const [body, message] of cases) {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatch(message);
    }
    expect((await s.v('POST', 'auth/token/lookup', {})).body.errors).toEqual(['token is required']);
    expect((await s.v('POST', 'auth/token/lookup-accessor', { accessor: 'nope' })).body.errors).toEqual(['invalid accessor']);
    expect((await s.v('POST', 'auth/token/revoke', { token: ROOT_TOKEN })).status).toBe(400);
    expect((await s.call('secrets', 'POST', '/v1/auth/token/create', { raw: '{"ttl":', headers: { 'x-vault-token': ROOT_TOKEN, 'content-type': 'application/json' } })).status).toBe(400);
    expect(await count()).toBe(before);
  });
});
