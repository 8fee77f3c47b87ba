import { startSecrets, SecretsTestServer } from './helpers';
import { newKey, sign, TestKey } from './jwt-helpers';
import { STORAGE_KINDS } from '../../helpers/storage';

const ISSUER = 'https://issuer.example';

describe.each(STORAGE_KINDS)('identity groups and the groups claim (%s)', (kind) => {
  let s: SecretsTestServer;
  let key: TestKey;
  let accessor: string;
  let adminsId: string;
  const login = async (claims: Record<string, unknown>, role = 'grouped') =>
    s.v('POST', 'auth/jwt/login', { role, jwt: await sign(key, { iss: ISSUER, aud: 'hangar', sub: 'u-1', ...claims }, s.clock.now()) }, null);
  /** Reading a policy needs the `admin` policy: the probe of what the group grants. */
  const canReadPolicies = async (token: string) => (await s.v('GET', 'sys/policies/acl/default', undefined, token)).status;

  beforeAll(async () => {
    s = await startSecrets(kind);
    key = await newKey('k1');
    await s.v('PUT', 'sys/policies/acl/admin', {
      policy: 'path "sys/policies/acl/*" { capabilities = ["read"] }\npath "auth/token/create" { capabilities = ["update"] }',
    });
    await s.v('POST', 'auth/jwt/config', { jwt_validation_pubkeys: [key.publicPem], bound_issuer: ISSUER });
    for (const [name, claim] of [['grouped', 'groups'], ['pointer', '/realm/groups']]) {
      const role = await s.v('POST', `auth/jwt/role/${name}`, { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'hangar', groups_claim: claim });
      expect(role.status).toBe(204);
    }
    accessor = (await s.v('GET', 'sys/auth')).body.data['jwt/'].accessor;
  });
  afterAll(() => s.close());

  test('groups: create, read by id and name, list, update, rename, delete', async () => {
    const created = await s.v('POST', 'identity/group', { name: 'admins', type: 'external', policies: 'admin', metadata: { team: 'ops' } });
    expect(created.status).toBe(200);
    adminsId = created.body.data.id;
    expect(created.body.data).toEqual({ id: adminsId, name: 'admins' });
    const read = await s.v('GET', `identity/group/id/${adminsId}`);
    expect(read.body.data).toMatchObject({ id: adminsId, name: 'admins', type: 'external', policies: ['admin'], metadata: { team: 'ops' }, alias: {} });
    expect((await s.v('GET', 'identity/group/name/ADMINS')).body.data.id).toBe(adminsId);

    // identity/group with an existing name updates it (no content, as Vault).
    expect((await s.v('POST', 'identity/group', { name: 'admins', policies: ['admin', 'Extra'] })).status).toBe(204);
    expect((await s.v('GET', `identity/group/id/${adminsId}`)).body.data).toMatchObject({ policies: ['admin', 'extra'], type: 'external', modify_index: 2 });
    expect((await s.v('POST', 'identity/group/name/admins', { policies: ['admin'] })).status).toBe(204);

    // The name path creates an internal group; a rename frees the old name.
    const other = await s.v('POST', 'identity/group/name/tmp', { policies: ['default'] });
    expect(other.status).toBe(200);
    expect((await s.v('POST', `identity/group/id/${other.body.data.id}`, { name: 'tmp2' })).status).toBe(204);
    expect((await s.v('GET', 'identity/group/name/tmp')).status).toBe(404);
    expect((await s.v('LIST', 'identity/group/name')).body.data.keys).toEqual(['admins', 'tmp2']);
    const byId = await s.v('LIST', 'identity/group/id');
    expect(byId.body.data.keys.sort()).toEqual([adminsId, other.body.data.id].sort());
    expect(byId.body.data.key_info[adminsId]).toMatchObject({ name: 'admins' });
    expect((await s.v('DELETE', 'identity/group/name/tmp2')).status).toBe(204);
    expect((await s.v('GET', `identity/group/id/${other.body.data.id}`)).status).toBe(404);
    expect((await s.v('DELETE', 'identity/group/name/tmp2')).status).toBe(204);
  });

  test('groups: bad input is refused with a message naming the field', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['identity/group', { name: 'x', type: 'sideways' }, /^type: must be internal or external/],
      ['identity/group', { name: 'x', policies: ['root'] }, /^policies: the root policy cannot be given to a group/],
      ['identity/group', { name: 'x', policies: ['bad name!'] }, /^policies: policy name "bad name!" is invalid/],
      ['identity/group', { name: 'x', policies: 42 }, /^policies/],
      ['identity/group', { name: '' }, /^name: must not be empty/],
      ['identity/group', { name: 'x', metadata: { a: 1 } }, /^metadata\.a/],
      ['identity/group', { name: 'x', type: 'external', member_entity_ids: ['e1'] }, /cannot be set on an external group/],
      ['identity/group', { name: 'admins', type: 'internal' }, /^type: a group's type cannot be changed/],
      ['identity/group', { id: 'bad id' }, /^id: /],
    ];
    for (const [path, body, message] of cases) {
      const res = await s.v('POST', path, body);
      expect({ path, status: res.status, error: res.body.errors?.[0] }).toMatchObject({ status: 400, error: expect.stringMatching(message) });
    }
    await s.v('POST', 'identity/group', { name: 'clash' });
    expect((await s.v('POST', `identity/group/id/${adminsId}`, { name: 'clash' })).body.errors[0]).toMatch(/^name: a group named "clash" already exists/);
    expect((await s.v('POST', 'identity/group/id/nosuch', { name: 'z' })).status).toBe(404);
    expect((await s.v('GET', 'identity/group/name/nosuch')).status).toBe(404);
  });

  test('group aliases: create, read, list, and their rules', async () => {
    const created = await s.v('POST', 'identity/group-alias', { name: 'Admins', mount_accessor: accessor, canonical_id: adminsId });
    expect(created.status).toBe(200);
    const aliasId = created.body.data.id;
    expect(created.body.data).toEqual({ canonical_id: adminsId, id: aliasId });
    expect((await s.v('GET', `identity/group-alias/id/${aliasId}`)).body.data).toMatchObject({
      name: 'Admins',
      mount_accessor: accessor,
      mount_path: 'auth/jwt/',
      mount_type: 'jwt',
      canonical_id: adminsId,
    });
    expect((await s.v('GET', `identity/group/id/${adminsId}`)).body.data.alias).toMatchObject({ id: aliasId, name: 'Admins' });
    expect((await s.v('LIST', 'identity/group-alias/id')).body.data.keys).toEqual([aliasId]);

    // identity/lookup/group: by id, name, alias id, or alias name and mount accessor; none found is no content.
    for (const body of [{ id: adminsId }, { name: 'admins' }, { alias_id: aliasId }, { alias_name: 'Admins', alias_mount_accessor: accessor }]) {
      const found = await s.v('POST', 'identity/lookup/group', body);
      expect([found.status, found.body.data.id]).toEqual([200, adminsId]);
    }
    expect((await s.v('POST', 'identity/lookup/group', { name: 'nobody' })).status).toBe(204);
    for (const [body, message] of [
      [{}, 'query parameters not supplied'],
      [{ id: adminsId, name: 'admins' }, 'query parameter conflict; please supply distinct set of query parameters'],
      [{ alias_name: 'Admins' }, "both 'alias_name' and 'alias_mount_accessor' needs to be set"],
    ] as const) {
      expect((await s.v('POST', 'identity/lookup/group', body)).body).toEqual({ errors: [message] });
    }

    const internal = (await s.v('POST', 'identity/group', { name: 'internal-one' })).body.data.id;
    const spare = (await s.v('POST', 'identity/group', { name: 'spare', type: 'external' })).body.data.id;
    const tokenAccessor = (await s.v('GET', 'sys/auth')).body.data['token/'].accessor;
    const cases: Array<[unknown, RegExp]> = [
      [{ mount_accessor: accessor, canonical_id: spare }, /^name is required/],
      [{ name: 'x', canonical_id: spare }, /^mount_accessor is required/],
      [{ name: 'x', mount_accessor: accessor }, /^canonical_id is required/],
      [{ name: 'x', mount_accessor: 'auth_jwt_nosuch', canonical_id: spare }, /^mount_accessor: no auth method has the accessor "auth_jwt_nosuch"/],
      [{ name: 'x', mount_accessor: accessor, canonical_id: 'nosuch' }, /^canonical_id: no group has the id "nosuch"/],
      [{ name: 'x', mount_accessor: accessor, canonical_id: internal }, /only external groups have aliases/],
      [{ name: 'x', mount_accessor: accessor, canonical_id: adminsId }, /already has an alias/],
      [{ name: 'admins', mount_accessor: accessor, canonical_id: spare }, /^name: the alias "admins" already exists at mount auth\/jwt\//],
      [{ name: 42, mount_accessor: accessor, canonical_id: spare }, /^name: must be a string/],
    ];
    for (const [body, message] of cases) {
      const res = await s.v('POST', 'identity/group-alias', body);
      expect({ body, status: res.status, error: res.body.errors?.[0] }).toMatchObject({ status: 400, error: expect.stringMatching(message) });
    }
    // The same name at another mount is another alias.
    const elsewhere = await s.v('POST', 'identity/group-alias', { name: 'admins', mount_accessor: tokenAccessor, canonical_id: spare });
    expect(elsewhere.status).toBe(200);
    expect((await s.v('DELETE', `identity/group-alias/id/${elsewhere.body.data.id}`)).status).toBe(204);
    expect((await s.v('GET', `identity/group/id/${spare}`)).body.data.alias).toEqual({});

    // Disabling an auth method removes its aliases, so their groups can be aliased elsewhere.
    expect((await s.v('POST', 'sys/auth/jwt2', { type: 'jwt' })).status).toBe(204);
    const jwt2 = (await s.v('GET', 'sys/auth')).body.data['jwt2/'].accessor;
    const onJwt2 = (await s.v('POST', 'identity/group-alias', { name: 'ops', mount_accessor: jwt2, canonical_id: spare })).body.data.id;
    expect((await s.v('DELETE', 'sys/auth/jwt2')).status).toBe(204);
    expect((await s.v('GET', `identity/group-alias/id/${onJwt2}`)).status).toBe(404);
    expect((await s.v('GET', `identity/group/id/${spare}`)).body.data.alias).toEqual({});
  });

  test('login: the groups claim gives the matching groups\' policies as identity_policies', async () => {
    const member = await login({ groups: ['developers', 'admins'] });
    expect(member.status).toBe(200);
    expect(member.body.auth).toMatchObject({ policies: ['admin', 'default'], token_policies: ['default'], identity_policies: ['admin'] });
    const memberToken = member.body.auth.client_token;
    expect(await canReadPolicies(memberToken)).toBe(200);
    const looked = await s.v('GET', 'auth/token/lookup-self', undefined, memberToken);
    expect(looked.body.data).toMatchObject({ policies: ['default'], identity_policies: ['admin'] });
    const caps = await s.v('POST', 'sys/capabilities-self', { paths: ['sys/policies/acl/x'] }, memberToken);
    expect(caps.body.data.capabilities).toEqual(['read']);

    const outsider = await login({ groups: ['developers'] });
    expect(outsider.status).toBe(200);
    expect(outsider.body.auth).toMatchObject({ policies: ['default'], identity_policies: null });
    expect(await canReadPolicies(outsider.body.auth.client_token)).toBe(403);
    expect((await s.v('GET', 'auth/token/lookup-self', undefined, outsider.body.auth.client_token)).body.data).not.toHaveProperty('identity_policies');

    // A JSON pointer reaches a nested claim; a single string is a list of one.
    expect((await login({ realm: { groups: ['admins'] } }, 'pointer')).body.auth.identity_policies).toEqual(['admin']);
    expect((await login({ groups: 'admins' })).body.auth.identity_policies).toEqual(['admin']);

    // A child token acts for the same identity.
    const child = await s.v('POST', 'auth/token/create', { policies: ['default'] }, memberToken);
    expect(await canReadPolicies(child.body.auth.client_token)).toBe(200);

    // The group's policies are read at each request: a change applies to tokens already issued.
    expect((await s.v('POST', `identity/group/id/${adminsId}`, { policies: [] })).status).toBe(204);
    expect(await canReadPolicies(memberToken)).toBe(403);
    await s.v('POST', `identity/group/id/${adminsId}`, { policies: ['admin'] });
    expect(await canReadPolicies(memberToken)).toBe(200);
  });

  test('login: a groups claim that is not a list of strings is refused', async () => {
    for (const groups of [[1, 2], ['admins', { name: 'x' }], 42, { admins: true }]) {
      const res = await login({ groups });
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toBe('groups claim "groups" must be a list of strings');
    }
    expect((await login({})).body.errors[0]).toBe('groups claim "groups" not found in token');
  });

  test('deleting a group removes its alias and what it granted', async () => {
    const member = (await login({ groups: ['admins'] })).body.auth.client_token;
    expect(await canReadPolicies(member)).toBe(200);
    expect((await s.v('DELETE', `identity/group/id/${adminsId}`)).status).toBe(204);
    expect(await canReadPolicies(member)).toBe(403);
    expect((await s.v('LIST', 'identity/group-alias/id')).status).toBe(404);
    expect((await login({ groups: ['admins'] })).body.auth.identity_policies).toBeNull();
  });
});
