import { generateKeyPairSync } from 'node:crypto';
import { CatalogServer, startCatalogServer } from './helpers';
import { Selector } from '../../../src/engine/catalog/acl/selector';
import { STORAGE_KINDS } from '../../helpers/storage';

const publicKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
const method = (name: string) => ({
  Name: name,
  Type: 'jwt',
  Config: {
    JWTValidationPubKeys: [publicKey],
    BoundIssuer: 'https://issuer.example',
    ClaimMappings: { sub: 'user', team: 'team' },
    ListClaimMappings: { groups: 'groups' },
  },
});

describe('binding rule selectors', () => {
  const names = { values: ['user', 'team'], lists: ['groups'] };
  const vars = { values: { user: 'alice', team: 'web' }, lists: { groups: ['admins', 'dev'] } };
  test.each([
    ['', true],
    ['value.user == "alice"', true],
    ['value.user != alice', false],
    ['"admins" in list.groups', true],
    ['"ops" not in list.groups', true],
    ['list.groups contains dev', true],
    ['list.groups not contains "dev"', false],
    ['value.team matches "^w.b$"', true],
    ['value.team not matches "^x"', true],
    ['list.groups is not empty and value.user is not empty', true],
    ['value.user is empty or (value.team == web and not "x" in list.groups)', true],
    ['not (value.user == "alice")', false],
    ['value["user"] == `alice`', true],
  ])('%s', (source, expected) => {
    expect(Selector.parse(source, names).matches(vars)).toBe(expected);
  });
  test.each([
    ['value.nobody == "x"', /Selector "value\.nobody" is not valid/],
    ['value.user = "x"', /unexpected|expected an operator/],
    ['value.user == "x', /unterminated string/],
    ['(value.user == "x"', /expected "\)"/],
    ['value.user matches "("', /invalid regular expression/],
    ['value.user ==', /expected a value/],
  ])('refuses %s', (source, message) => {
    expect(() => Selector.parse(source, names)).toThrow(message);
  });
});

describe.each(STORAGE_KINDS)('binding rules, auth methods and namespaces (%s)', (kind) => {
  let s: CatalogServer;
  beforeAll(async () => {
    s = await startCatalogServer(kind);
    expect((await s.root('PUT', '/v1/acl/auth-method', method('jwt-main'))).status).toBe(200);
  });
  afterAll(() => s.close());

  test('auth methods: CRUD, config checked', async () => {
    const read = await s.root('GET', '/v1/acl/auth-method/jwt-main');
    expect(read.body).toMatchObject({ Name: 'jwt-main', Type: 'jwt', Config: { BoundIssuer: 'https://issuer.example' } });
    expect((await s.root('GET', '/v1/acl/auth-methods')).body.map((m: any) => m.Name)).toEqual(['jwt-main']);
    const bad = await s.root('PUT', '/v1/acl/auth-method', { Name: 'x', Type: 'jwt', Config: { JWTValidationPubKeys: ['nope'] } });
    expect([bad.status, bad.text]).toEqual([400, expect.stringMatching(/not a PEM public key/)]);
    const none = await s.root('PUT', '/v1/acl/auth-method', { Name: 'x', Type: 'jwt', Config: {} });
    expect(none.text).toMatch(/exactly one of/);
    const type = await s.root('PUT', '/v1/acl/auth-method', { Name: 'x', Type: 'kerberos', Config: {} });
    expect(type.text).toMatch(/Type should be one of/);
    expect((await s.root('GET', '/v1/acl/auth-method/x')).status).toBe(404);
  });

  test('binding rules: create, read, update (AuthMethod immutable, ID must match), list by method, delete', async () => {
    const created = await s.root('PUT', '/v1/acl/binding-rule', {
      Description: 'web team', AuthMethod: 'jwt-main', Selector: 'value.team == "web" and "admins" in list.groups', BindType: 'service', BindName: 'svc-${value.team}',
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ AuthMethod: 'jwt-main', BindType: 'service', BindName: 'svc-${value.team}', Namespace: 'default' });
    const id = created.body.ID;
    const read = await s.root('GET', `/v1/acl/binding-rule/${id}`);
    expect(read.body).toEqual(created.body);
    const updated = await s.root('PUT', `/v1/acl/binding-rule/${id}`, { Description: 'changed', BindType: 'role', BindName: 'admins' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ ID: id, AuthMethod: 'jwt-main', Description: 'changed', BindType: 'role' });
    const immutable = await s.root('PUT', `/v1/acl/binding-rule/${id}`, { AuthMethod: 'other', BindType: 'role', BindName: 'x' });
    expect([immutable.status, immutable.text]).toEqual([400, 'the AuthMethod field of an Binding Rule is immutable']);
    const mismatch = await s.root('PUT', `/v1/acl/binding-rule/${id}`, { ID: '11111111-1111-1111-1111-111111111111' });
    expect([mismatch.status, mismatch.text]).toEqual([400, 'BindingRule ID in URL and payload do not match']);

    await s.root('PUT', '/v1/acl/auth-method', method('jwt-other'));
    await s.root('PUT', '/v1/acl/binding-rule', { AuthMethod: 'jwt-other', BindType: 'node', BindName: 'n-${value.user}' });
    expect((await s.root('GET', '/v1/acl/binding-rules?authmethod=jwt-main')).body.map((r: any) => r.ID)).toEqual([id]);
    expect((await s.root('GET', '/v1/acl/binding-rules')).body).toHaveLength(2);

    expect((await s.root('DELETE', `/v1/acl/binding-rule/${id}`)).body).toBe(true);
    expect((await s.root('DELETE', `/v1/acl/binding-rule/${id}`)).body).toBe(false);
    const gone = await s.root('GET', `/v1/acl/binding-rule/${id}`);
    expect([gone.status, gone.text]).toEqual([404, '']);
  });

  test('binding rules: bad input is refused and nothing is written', async () => {
    const before = (await s.root('GET', '/v1/acl/binding-rules')).body.length;
    const cases: [unknown, RegExp][] = [
      [{ BindType: 'service', BindName: 'x' }, /no AuthMethod is set/],
      [{ AuthMethod: 'nope', BindType: 'service', BindName: 'x' }, /cannot find auth method with name "nope"/],
      [{ AuthMethod: 'jwt-main', BindName: 'x' }, /no BindType is set/],
      [{ AuthMethod: 'jwt-main', BindType: 'service' }, /no BindName is set/],
      [{ AuthMethod: 'jwt-main', BindType: 'templated-policy', BindName: 'x' }, /unknown BindType "templated-policy"/],
      [{ AuthMethod: 'jwt-main', BindType: 'service', BindName: 'x', Selector: 'value.user ===' }, /Selector is invalid/],
      [{ AuthMethod: 'jwt-main', BindType: 'service', BindName: 'x', Selector: 'value.ghost == "x"' }, /Selector "value\.ghost" is not valid/],
      [{ AuthMethod: 'jwt-main', BindType: 'service', BindName: '${value.ghost}' }, /invalid BindName: unknown variable accessed: value\.ghost/],
      [{ AuthMethod: 'jwt-main', BindType: 'service', BindName: 'Upper_${value.user}' }, /not a valid service identity name/],
      [{ AuthMethod: 'jwt-main', BindType: 'role', BindName: 'bad role' }, /not a valid role name/],
      [{ AuthMethod: 'jwt-main', BindType: 'service', BindName: 'x', Extra: 1 }, /unknown field "Extra"/],
      [{ AuthMethod: 'jwt-main', BindType: 'service', BindName: 7 }, /BindName/],
    ];
    for (const [body, message] of cases) {
      const res = await s.root('PUT', '/v1/acl/binding-rule', body);
      expect([res.status, res.text]).toEqual([400, expect.stringMatching(message)]);
    }
    expect((await s.root('GET', '/v1/acl/binding-rules')).body.length).toBe(before);
  });

  test('namespaces: default exists, CRUD, defaults by name stored by ID, DNS names, delete marks then the job removes', async () => {
    const list = await s.root('GET', '/v1/namespaces');
    expect(list.body.map((n: any) => n.Name)).toContain('default');
    const policy = await s.root('PUT', '/v1/acl/policy', { Name: 'ns-default-policy', Rules: 'key_prefix "" { policy = "read" }' });
    const created = await s.root('PUT', '/v1/namespace', { Name: 'team-a', Description: 'A', Meta: { owner: 'a' }, ACLs: { PolicyDefaults: [{ Name: 'ns-default-policy' }] } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ Name: 'team-a', Description: 'A', Meta: { owner: 'a' }, ACLs: { PolicyDefaults: [{ ID: policy.body.ID, Name: 'ns-default-policy' }], RoleDefaults: [] } });
    // An update replaces the whole namespace, as the public service's does: Meta and ACLs left out are cleared.
    const updated = await s.root('PUT', '/v1/namespace/team-a', { Description: 'B' });
    expect([updated.body.Description, updated.body.Meta, updated.body.ACLs]).toEqual(['B', {}, { PolicyDefaults: [], RoleDefaults: [] }]);
    expect((await s.root('PUT', '/v1/namespace/team-a', { Name: 'team-b' })).status).toBe(400);
    for (const bad of ['-lead', 'a_b', 'x'.repeat(64), 'dot.ted']) {
      const res = await s.root('PUT', '/v1/namespace', { Name: bad });
      expect([res.status, res.text]).toEqual([400, expect.stringMatching(/is invalid: use a DNS label/)]);
    }
    expect((await s.root('DELETE', '/v1/namespace/default')).status).toBe(400);

    // Binding rules resolve their namespace: body > ns > header > token > default.
    await s.root('PUT', '/v1/acl/auth-method?ns=team-a', method('jwt-a'));
    const inA = await s.root('PUT', '/v1/acl/binding-rule', { AuthMethod: 'jwt-a', BindType: 'service', BindName: 'x', Namespace: 'team-a' });
    expect(inA.body.Namespace).toBe('team-a');
    expect((await s.root('GET', `/v1/acl/binding-rule/${inA.body.ID}`)).status).toBe(404);
    expect((await s.root('GET', `/v1/acl/binding-rule/${inA.body.ID}?ns=team-a`)).status).toBe(200);
    expect((await s.root('GET', `/v1/acl/binding-rule/${inA.body.ID}`, undefined, { 'X-Catalog-Namespace': 'team-a' })).status).toBe(200);
    expect((await s.root('GET', '/v1/acl/binding-rules?ns=*')).body.map((r: any) => r.ID)).toContain(inA.body.ID);

    const del = await s.root('DELETE', '/v1/namespace/team-a');
    expect([del.status, del.text]).toEqual([200, '']);
    const marked = await s.root('GET', '/v1/namespace/team-a');
    expect(marked.body.DeletedAt).toMatch(/^\d{4}-/);
    expect((await s.root('PUT', '/v1/acl/binding-rule?ns=team-a', { AuthMethod: 'jwt-a', BindType: 'service', BindName: 'y' })).text).toMatch(/marked for deletion/);
    await s.engine.scheduler.runOnce();
    expect((await s.root('GET', '/v1/namespace/team-a')).status).toBe(404);
    expect((await s.root('GET', '/v1/acl/binding-rules?ns=*')).body.map((r: any) => r.ID)).not.toContain(inA.body.ID);
  });

  test('namespace defaults apply to tokens of the namespace when their own rules say nothing', async () => {
    await s.root('PUT', '/v1/acl/policy', { Name: 'kv-write-all', Rules: 'key_prefix "" { policy = "write" }' });
    await s.root('PUT', '/v1/namespace', { Name: 'team-d', ACLs: { PolicyDefaults: [{ Name: 'kv-write-all' }] } });
    const token = await s.root('PUT', '/v1/acl/token?ns=team-d', {});
    expect(token.body.Namespace).toBe('team-d');
    const put = await s.call('catalog', 'PUT', '/v1/kv/x?ns=team-d', { raw: 'v', headers: { 'x-consul-token': token.body.SecretID } });
    expect(put.status).toBe(200);
    const elsewhere = await s.call('catalog', 'PUT', '/v1/kv/x?ns=default', { raw: 'v', headers: { 'x-consul-token': token.body.SecretID } });
    expect(elsewhere.status).toBe(403);
    // namespace listing is filtered by privileges
    expect((await s.as(token.body.SecretID, 'GET', '/v1/namespaces')).body).toEqual([]);
  });
});
