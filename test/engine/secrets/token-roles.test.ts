import { startSecrets, SecretsTestServer } from './helpers';
import { STORAGE_KINDS } from '../../helpers/storage';

describe.each(STORAGE_KINDS)('token roles (%s)', (kind) => {
  let s: SecretsTestServer;
  const ok = async (method: string, path: string, body?: unknown, status = 204, token?: string) => {
    const res = await s.v(method, path, body, token);
    if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const refused = async (path: string, body: unknown, message: RegExp, token?: string) => {
    const res = await s.v('POST', path, body, token);
    expect([res.status, res.body.errors?.[0]]).toEqual([400, expect.stringMatching(message)]);
  };

  beforeAll(async () => {
    s = await startSecrets(kind);
    for (const name of ['app-read', 'app-write', 'ops', 'admin']) await ok('PUT', `sys/policies/acl/${name}`, { policy: `path "kv/${name}" { capabilities = ["read"] }` });
  });
  afterAll(() => s.close());

  test('CRUD and LIST in Vault shapes; create defaults, update keeps what is not given', async () => {
    expect((await s.v('LIST', 'auth/token/roles')).status).toBe(404);
    await ok('POST', 'auth/token/roles/apps', { allowed_policies: 'App-Read,app-write', disallowed_policies_glob: ['adm*'], path_suffix: 'v1', token_period: '1h' });
    const read = await ok('GET', 'auth/token/roles/apps', undefined, 200);
    expect(read.data).toEqual({
      allowed_entity_aliases: null,
      allowed_policies: ['app-read', 'app-write'],
      allowed_policies_glob: [],
      disallowed_policies: [],
      disallowed_policies_glob: ['adm*'],
      explicit_max_ttl: 0,
      name: 'apps',
      orphan: false,
      path_suffix: 'v1',
      period: 0,
      renewable: true,
      token_explicit_max_ttl: 0,
      token_no_default_policy: false,
      token_period: 3600,
      token_type: 'default-service',
    });
    await ok('POST', 'auth/token/roles/apps', { orphan: true, period: 120 });
    expect((await ok('GET', 'auth/token/roles/apps', undefined, 200)).data).toMatchObject({ orphan: true, token_period: 120, period: 120, path_suffix: 'v1', allowed_policies: ['app-read', 'app-write'] });
    const both = await ok('POST', 'auth/token/roles/apps', { token_period: 300, period: 60 }, 200);
    expect(both.warnings).toEqual(["Both 'token_period' and deprecated 'period' value supplied, ignoring the deprecated value"]);
    await ok('POST', 'auth/token/roles/batchy', { token_type: 'batch', orphan: true, renewable: false });
    expect((await ok('LIST', 'auth/token/roles', undefined, 200)).data.keys).toEqual(['apps', 'batchy']);
    await ok('DELETE', 'auth/token/roles/batchy');
    await ok('DELETE', 'auth/token/roles/batchy');
    expect((await s.v('GET', 'auth/token/roles/batchy')).status).toBe(404);

    await refused('auth/token/roles/bad', { token_type: 'batch' }, /^token_type: cannot be 'batch' when the role generates non-orphan tokens/);
    await refused('auth/token/roles/bad', { token_type: 'other' }, /^token_type: must be service, batch/);
    await refused('auth/token/roles/bad', { path_suffix: '../x' }, /^path_suffix: "..\/x" is invalid/);
    await refused('auth/token/roles/bad', { token_bound_cidrs: ['10.0.0.0/99'] }, /^token_bound_cidrs: "10.0.0.0\/99" has an invalid prefix length/);
    await refused('auth/token/roles/bad', { token_num_uses: -1 }, /^token_num_uses: must be 0/);
    await refused('auth/token/roles/b@d', {}, /^role name "b@d" is invalid/);
    expect((await s.v('GET', 'auth/token/roles/bad')).status).toBe(404);
  });

  test('create/:role: allowed and disallowed policies (globs too), path and suffix, orphan, period, uses, type', async () => {
    await ok('POST', 'auth/token/roles/web', {
      allowed_policies: ['app-read'],
      allowed_policies_glob: ['app-*'],
      disallowed_policies: ['app-write'],
      path_suffix: 'prod/v2',
      token_explicit_max_ttl: '2h',
      token_num_uses: 5,
      renewable: false,
      allowed_entity_aliases: ['svc-*'],
    });
    // Not limited by the parent's policies (a token holding only `ops` creates app tokens): the role governs.
    const ops = await s.tokenWith(undefined, { policies: ['ops'] });
    await ok('PUT', 'sys/policies/acl/ops', { policy: 'path "auth/token/create/web" { capabilities = ["update"] }' });
    const created = await ok('POST', 'auth/token/create/web', { num_uses: 9, explicit_max_ttl: '3h' }, 200, ops);
    expect(created.auth).toMatchObject({ policies: ['app-read', 'default'], orphan: false, renewable: false, num_uses: 5 });
    expect(created.warnings).toEqual(['Explicit max TTL specified both during creation call and in role; using the lesser value of 7200 seconds']);
    const info = (await ok('POST', 'auth/token/lookup', { token: created.auth.client_token }, 200)).data;
    expect(info).toMatchObject({ path: 'auth/token/create/web/prod/v2', role: 'web', explicit_max_ttl: 7200, ttl: 7200 });

    expect((await ok('POST', 'auth/token/create/web', { policies: ['app-extra'] }, 200)).auth.policies).toEqual(['app-extra', 'default']);
    await refused('auth/token/create/web', { policies: ['admin'] }, /^token policies \(admin, default\) must be a subset of the role's allowed policies/);
    await refused('auth/token/create/web', { policies: ['app-write'] }, /^token policy "app-write" is disallowed by this role/);
    await refused('auth/token/create/none', {}, /^unknown role none/);
    await refused('auth/token/create/web', { entity_alias: 'other' }, /^entity_alias: invalid/);
    expect((await ok('POST', 'auth/token/create/web', { entity_alias: 'svc-a' }, 200)).warnings).toEqual([expect.stringMatching(/no identity entities/)]);
    // Without the capability on the role's create path: 403.
    expect((await s.v('POST', 'auth/token/create/apps', {}, ops)).status).toBe(403);

    // revoke-prefix on the role's path revokes its tokens.
    await ok('PUT', 'sys/leases/revoke-prefix/auth/token/create/web');
    expect((await s.v('GET', 'auth/token/lookup-self', undefined, created.auth.client_token)).status).toBe(403);

    // Orphan and periodic roles; a batch role; a role without policy limits keeps the subset rule.
    await ok('POST', 'auth/token/roles/svc', { orphan: true, token_period: '30m', disallowed_policies: ['default'] });
    const svc = (await ok('POST', 'auth/token/create/svc', { policies: ['ops'] }, 200)).auth;
    expect(svc).toMatchObject({ orphan: true, policies: ['ops'], lease_duration: 1800, renewable: true });
    await ok('POST', 'auth/token/roles/bt', { token_type: 'default-batch', orphan: true, renewable: false });
    expect((await ok('POST', 'auth/token/create/bt', { policies: ['ops'] }, 200)).auth).toMatchObject({ token_type: 'batch', orphan: true });
    expect((await ok('POST', 'auth/token/create/bt', { policies: ['ops'], type: 'service' }, 200)).auth.token_type).toBe('service');
    await ok('POST', 'auth/token/roles/plain', {});
    await ok('PUT', 'sys/policies/acl/ops', { policy: 'path "auth/token/create/plain" { capabilities = ["update"] }' });
    await refused('auth/token/create/plain', { policies: ['admin'] }, /^child policies must be a subset of the parent's/, ops);
  });
});
