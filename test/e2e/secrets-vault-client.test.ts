import { systemClock } from '../../src/engine/clock';
import { ROOT_TOKEN, startSecrets, SecretsTestServer } from '../engine/secrets/helpers';
import { newKey, sign, TestKey } from '../engine/secrets/jwt-helpers';

type Vault = Record<string, any>;

/**
 * node-vault, a maintained Vault client from npm, used unchanged but for its address: tokens,
 * policies, mounts, auth methods, leases and the JWT login, including the LIST verb on the wire.
 */
describe('a Vault client (node-vault) against Hangar', () => {
  let s: SecretsTestServer;
  let vault: Vault;
  let key: TestKey;
  // node-vault ships no types; it is used as its README shows.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const client = (token?: string): Vault => (require('node-vault') as (o: object) => Vault)({ apiVersion: 'v1', endpoint: s.urls.secrets, token });

  beforeAll(async () => {
    s = await startSecrets('sqlite', { clock: systemClock });
    vault = client(ROOT_TOKEN);
    key = await newKey('ci-key');
  });
  afterAll(() => s.close());

  test('health and seal status', async () => {
    expect(await vault.health()).toMatchObject({ initialized: true, sealed: false, standby: false });
    expect(await vault.status()).toMatchObject({ sealed: false, t: 1, n: 1, progress: 0 });
  });

  test('policies through sys/policy', async () => {
    await vault.addPolicy({ name: 'reader', rules: 'path "auth/token/lookup-self" { capabilities = ["read"] }\npath "sys/mounts" { capabilities = ["read"] }' });
    expect((await vault.getPolicy({ name: 'reader' })).rules).toContain('sys/mounts');
    expect((await vault.policies()).policies).toEqual(expect.arrayContaining(['default', 'reader', 'root']));
    await vault.addPolicy({ name: 'scratch', rules: '' });
    await vault.removePolicy({ name: 'scratch' });
    expect((await vault.policies()).policies).not.toContain('scratch');
    expect((await vault.list('sys/policies/acl')).data.keys).toContain('reader');
  });

  test('tokens: create, look up, renew, revoke; a token only gets what its policies allow', async () => {
    const created = await vault.tokenCreate({ policies: ['reader'], ttl: '1h', meta: { app: 'web' } });
    const { client_token: token, accessor } = created.auth;
    expect(created.auth.policies).toEqual(['default', 'reader']);
    // node-vault switches to a token it created (tokenSource); back to root for the admin calls.
    expect(vault.token).toBe(token);
    vault.token = ROOT_TOKEN;
    expect((await vault.tokenLookup({ token })).data).toMatchObject({ accessor, meta: { app: 'web' }, ttl: 3600 });
    expect((await vault.tokenLookupAccessor({ accessor })).data.accessor).toBe(accessor);
    const user = client(token);
    expect((await user.tokenLookupSelf()).data.policies).toEqual(['default', 'reader']);
    expect((await user.tokenRenewSelf({ increment: '2h' })).auth.lease_duration).toBe(7200);
    expect(Object.keys((await user.mounts()).data)).toContain('sys/');
    await expect(user.tokenCreate({})).rejects.toMatchObject({ response: { statusCode: 403 } });
    await expect(user.addPolicy({ name: 'x', rules: '' })).rejects.toThrow(/permission denied/);
    await user.tokenRevokeSelf();
    await expect(user.tokenLookupSelf()).rejects.toMatchObject({ response: { statusCode: 403 } });
    const orphan = await vault.tokenCreateOrphan({ policies: ['reader'] });
    vault.token = ROOT_TOKEN;
    await vault.tokenRevokeAccessor({ accessor: orphan.auth.accessor });
    await expect(client(orphan.auth.client_token).tokenLookupSelf()).rejects.toMatchObject({ response: { statusCode: 403 } });
  });

  test('mounts and auth methods', async () => {
    await vault.mount({ mount_point: 'team-pki', type: 'pki', description: 'team CA', config: { max_lease_ttl: '720h' } });
    expect((await vault.mounts())['team-pki/']).toMatchObject({ type: 'pki', description: 'team CA', config: { max_lease_ttl: 2592000 } });
    await vault.write('sys/mounts/team-pki/tune', { default_lease_ttl: '24h' });
    expect((await vault.read('sys/mounts/team-pki/tune')).data.default_lease_ttl).toBe(86400);
    await vault.unmount({ mount_point: 'team-pki' });
    expect((await vault.mounts()).data['team-pki/']).toBeUndefined();
    await vault.enableAuth({ mount_point: 'ci', type: 'jwt', description: 'CI logins' });
    expect((await vault.auths()).data['ci/']).toMatchObject({ type: 'jwt', description: 'CI logins' });
    await expect(vault.mount({ mount_point: 'x', type: 'nosuch' })).rejects.toThrow(/plugin not found in the catalog/);
  });

  test('JWT login through the client', async () => {
    await vault.write('auth/ci/config', { jwt_validation_pubkeys: [key.publicPem], bound_issuer: 'https://ci.example' });
    await vault.write('auth/ci/role/deploy', { role_type: 'jwt', user_claim: 'sub', bound_audiences: ['hangar'], token_policies: ['reader'], token_ttl: 900 });
    expect((await vault.list('auth/ci/role')).data.keys).toEqual(['deploy']);
    const jwt = await sign(key, { iss: 'https://ci.example', aud: 'hangar', sub: 'pipeline-42' }, Date.now());
    const anonymous = client();
    const login = await anonymous.jwtLogin({ mount_point: 'ci', role: 'deploy', jwt });
    expect(login.auth).toMatchObject({ policies: ['default', 'reader'], lease_duration: 900, metadata: { role: 'deploy' } });
    // node-vault keeps the token of a login and uses it from then on.
    expect((await anonymous.tokenLookupSelf()).data.display_name).toBe('ci-pipeline-42');
    const bad = await sign(key, { iss: 'https://other.example', aud: 'hangar', sub: 'x' }, Date.now());
    await expect(client().jwtLogin({ mount_point: 'ci', role: 'deploy', jwt: bad })).rejects.toThrow(/does not match the bound issuer/);
    await vault.disableAuth({ mount_point: 'ci' });
    await expect(anonymous.tokenLookupSelf()).rejects.toMatchObject({ response: { statusCode: 403 } });
  });
});
