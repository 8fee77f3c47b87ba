import { ROOT_TOKEN, startSecrets, SecretsTestServer } from './helpers';
import { afterCommitRuns, mountTestEngine, testEngine } from './test-engine';
import { ManualClock } from '../../../src/engine/clock';
import { Engine } from '../../../src/engine/engine';
import { secretsCore } from '../../../src/engine/secrets/service';
import { Db, TxOptions } from '../../../src/engine/storage/types';
import { freshStorage, STORAGE_KINDS } from '../../helpers/storage';

describe.each(STORAGE_KINDS)('sys/mounts and sys/auth (%s)', (kind) => {
  let s: SecretsTestServer;
  beforeAll(async () => {
    s = await startSecrets(kind);
    (await secretsCore(s.engine)).register(testEngine);
  });
  afterAll(() => s.close());

  test('dev mode mounts the spec defaults, in Vault shapes', async () => {
    const mounts = await s.v('GET', 'sys/mounts');
    expect(Object.keys(mounts.body.data).sort()).toEqual(['ad/', 'cubbyhole/', 'database/', 'identity/', 'pki/', 'rabbitmq/', 'secret/', 'ssh/', 'sys/', 'transform/']);
    // As the public dev server: `secret/` is a KV version 2 store.
    expect(mounts.body.data['secret/']).toMatchObject({ type: 'kv', options: { version: '2' }, description: 'key/value secret storage' });
    expect((await s.v('POST', 'secret/data/dev', { data: { a: 1 } })).status).toBe(200);
    expect(mounts.body['pki/']).toEqual(mounts.body.data['pki/']);
    expect(mounts.body.data['pki/']).toMatchObject({
      type: 'pki',
      accessor: expect.stringMatching(/^pki_[0-9a-f]{8}$/),
      uuid: expect.any(String),
      config: { default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false },
      local: false,
      seal_wrap: false,
    });
    const auth = await s.v('GET', 'sys/auth');
    expect(Object.keys(auth.body.data).sort()).toEqual(['jwt/', 'token/']);
    expect(auth.body.data['jwt/']).toMatchObject({ type: 'jwt', accessor: expect.stringMatching(/^auth_jwt_/) });
  });

  test('dev mode: enabling what it mounted (the tutorials\' `vault secrets enable pki`) keeps the mount, tuned', async () => {
    const before = (await s.v('GET', 'sys/mounts/pki')).body.data;
    const again = await s.v('POST', 'sys/mounts/pki', { type: 'pki', description: 'tutorial', config: { max_lease_ttl: '87600h' } });
    expect(again.status).toBe(200);
    expect(again.body.warnings[0]).toMatch(/^pki\/ was already mounted \(pki\) by Hangar's dev mode/);
    expect((await s.v('GET', 'sys/mounts/pki')).body.data).toMatchObject({ uuid: before.uuid, description: 'tutorial', config: { max_lease_ttl: 87600 * 3600 } });
    expect((await s.v('POST', 'sys/mounts/secret', { type: 'kv-v2' })).status).toBe(200);
    expect((await s.v('POST', 'sys/auth/jwt', { type: 'jwt' })).status).toBe(200);
    // Another type or KV version there: refused, saying how to go on.
    expect((await s.v('POST', 'sys/mounts/secret', { type: 'kv' })).body.errors).toEqual([
      "path is already in use at secret/: Hangar's dev mode mounted kv there; disable it first (vault secrets disable secret/) or choose another path",
    ]);
    expect((await s.v('POST', 'sys/mounts/pki/sub', { type: 'pki' })).body.errors).toEqual(['path is already in use at pki/']);
    expect((await s.v('POST', 'sys/mounts/pki/tune', { max_lease_ttl: 'system', description: '' })).status).toBe(204);
  });

  test('enable, read, tune, disable a secrets engine', async () => {
    const enabled = await s.v('POST', 'sys/mounts/team/kv', {
      type: 'hangar-test',
      description: 'team engine',
      config: { default_lease_ttl: '30m', max_lease_ttl: 7200 },
    });
    expect(enabled.status).toBe(204);
    const read = await s.v('GET', 'sys/mounts/team/kv');
    expect(read.body.data).toMatchObject({ type: 'hangar-test', description: 'team engine', config: { default_lease_ttl: 1800, max_lease_ttl: 7200 } });
    expect((await s.v('GET', 'sys/mounts/team/kv/tune')).body.data).toEqual({
      default_lease_ttl: 1800,
      max_lease_ttl: 7200,
      force_no_cache: false,
      description: 'team engine',
    });
    expect((await s.v('POST', 'sys/mounts/team/kv/tune', { default_lease_ttl: '1h', description: 'tuned' })).status).toBe(204);
    expect((await s.v('GET', 'sys/mounts/team/kv/tune')).body).toMatchObject({ default_lease_ttl: 3600, description: 'tuned' });
    const lease = await s.v('GET', 'team/kv/creds/a');
    expect(lease.body.lease_duration).toBe(3600);
    expect((await s.v('DELETE', 'sys/mounts/team/kv')).status).toBe(204);
    expect((await s.v('GET', 'team/kv/creds/a')).status).toBe(404);
    expect((await s.v('DELETE', 'sys/mounts/team/kv')).status).toBe(204);
  });

  test('`generic`, the public service\'s older name of kv, mounts kv and reads back as generic', async () => {
    expect((await s.v('POST', 'sys/mounts/old-generic', { type: 'generic' })).status).toBe(204);
    expect((await s.v('GET', 'sys/mounts/old-generic')).body.data).toMatchObject({ type: 'generic' });
    expect((await s.v('PUT', 'old-generic/app', { password: 'p' })).status).toBe(204);
    expect((await s.v('GET', 'old-generic/app')).body.data).toEqual({ password: 'p' });
    expect((await s.v('DELETE', 'sys/mounts/old-generic')).status).toBe(204);
  });

  test('bad mount requests: clear errors, nothing mounted', async () => {
    const before = Object.keys((await s.v('GET', 'sys/mounts')).body.data);
    const cases: Array<[string, unknown, RegExp]> = [
      ['sys/mounts/pki', { type: 'hangar-test' }, /path is already in use at pki\//],
      ['sys/mounts/pki/inner', { type: 'hangar-test' }, /path is already in use at pki\//],
      ['sys/mounts/new', { type: 'nosuch' }, /plugin not found in the catalog: nosuch/],
      ['sys/mounts/new', {}, /type is required/],
      ['sys/mounts/new', { type: 'hangar-test', config: { default_lease_ttl: 'forever' } }, /config.default_lease_ttl: "forever" is not a duration/],
      ['sys/mounts/new', { type: 'hangar-test', config: { default_lease_ttl: '2h', max_lease_ttl: '1h' } }, /default_lease_ttl: cannot be greater than max_lease_ttl/],
      ['sys/mounts/new', { type: 'hangar-test', config: { default_lease_ttl: '9999h' } }, /above the system maximum/],
      ['sys/mounts/new', { type: 'hangar-test', config: { listing_visibility: 'loud' } }, /config.listing_visibility: must be "unauth", "hidden" or ""/],
      ['sys/mounts/new', { type: 'hangar-test', config: { token_type: 'batch' } }, /token_type: only auth mounts issue tokens/],
      ['sys/mounts/bad%20path', { type: 'hangar-test' }, /mount path "bad path" is invalid/],
      ['sys/mounts/sys', { type: 'hangar-test' }, /already in use at sys\//],
      ['sys/mounts/new', { type: 'token' }, /plugin not found/],
      ['sys/mounts/new', { type: 'jwt' }, /plugin not found/],
      ['sys/auth/new', { type: 'hangar-test' }, /plugin not found/],
    ];
    for (const [path, body, message] of cases) {
      const res = await s.v('POST', path, body);
      expect(res.status).toBe(400);
      expect(res.body.errors.join(' ')).toMatch(message);
    }
    expect((await s.v('DELETE', 'sys/mounts/sys')).body.errors[0]).toMatch(/cannot unmount "sys\/"/);
    expect((await s.v('DELETE', 'sys/auth/token')).body.errors[0]).toMatch(/cannot unmount "auth\/token\/"/);
    expect((await s.v('POST', 'sys/mounts/pki/tune', { max_lease_ttl: 'x' })).status).toBe(400);
    expect((await s.v('GET', 'sys/mounts/nothing/tune')).status).toBe(400);
    expect(Object.keys((await s.v('GET', 'sys/mounts')).body.data)).toEqual(before);
  });

  test('auth methods: enable at another path, tune, disable revokes its tokens', async () => {
    expect((await s.v('POST', 'sys/auth/corp-sso', { type: 'jwt', description: 'corporate' })).status).toBe(204);
    expect((await s.v('GET', 'sys/auth')).body.data['corp-sso/']).toMatchObject({ type: 'jwt', description: 'corporate' });
    expect((await s.v('GET', 'sys/auth/corp-sso/tune')).body.data.max_lease_ttl).toBe(768 * 3600);
    expect((await s.v('DELETE', 'sys/auth/corp-sso')).status).toBe(204);
    expect((await s.v('GET', 'sys/auth')).body.data['corp-sso/']).toBeUndefined();
  });

  test('the Go client\'s shapes: nulls are "not given", auth mounts through sys/mounts/auth/, tune fields kept', async () => {
    // vault/api's MountInput with nothing set but the type.
    const goEnable = { type: 'jwt', description: '', config: { options: null, default_lease_ttl: '', max_lease_ttl: '', force_no_cache: false }, local: false, seal_wrap: false, external_entropy_access: false, options: null, plugin_name: null };
    expect((await s.v('POST', 'sys/auth/go-jwt', goEnable)).status).toBe(204);
    expect((await s.v('POST', 'sys/mounts/go-engine', { ...goEnable, type: 'hangar-test', config: { max_lease_ttl: 157680000 } })).status).toBe(204);
    expect((await s.v('GET', 'sys/mounts/go-engine')).body.data.config.max_lease_ttl).toBe(157680000);
    const read = await s.v('GET', 'sys/mounts/auth/go-jwt');
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ type: 'jwt', config: { token_type: 'default-service' } });
    const tune = {
      description: 'tuned through sys/mounts',
      max_lease_ttl: '43800h',
      listing_visibility: 'unauth',
      audit_non_hmac_request_keys: ['role'],
      audit_non_hmac_response_keys: 'a,b',
      passthrough_request_headers: ['X-Custom'],
      allowed_response_headers: ['X-Other'],
      token_type: 'default-batch',
      options: null,
    };
    expect((await s.v('POST', 'sys/mounts/auth/go-jwt/tune', tune)).status).toBe(204);
    const tuned = await s.v('GET', 'sys/auth/go-jwt/tune');
    expect(tuned.body.data).toMatchObject({
      description: 'tuned through sys/mounts',
      max_lease_ttl: 157680000,
      listing_visibility: 'unauth',
      audit_non_hmac_request_keys: ['role'],
      audit_non_hmac_response_keys: ['a', 'b'],
      passthrough_request_headers: ['X-Custom'],
      allowed_response_headers: ['X-Other'],
      token_type: 'default-batch',
    });
    expect((await s.v('GET', 'sys/mounts/auth/go-jwt/tune')).body.data).toEqual(tuned.body.data);
    // The Go client's TuneMount sends unset TTLs as "": they stay as they are.
    await s.v('POST', 'sys/auth/go-jwt/tune', { default_lease_ttl: '20m' });
    await s.v('POST', 'sys/mounts/auth/go-jwt/tune', { default_lease_ttl: '', max_lease_ttl: '', description: 'again' });
    expect((await s.v('GET', 'sys/auth/go-jwt/tune')).body.data).toMatchObject({ default_lease_ttl: 1200, max_lease_ttl: 157680000, description: 'again' });
    expect((await s.v('GET', 'sys/auth')).body.data['go-jwt/'].config).toMatchObject({ listing_visibility: 'unauth', token_type: 'default-batch' });
    // An empty value clears a field.
    await s.v('POST', 'sys/auth/go-jwt/tune', { listing_visibility: '', passthrough_request_headers: [] });
    const cleared = (await s.v('GET', 'sys/auth/go-jwt/tune')).body.data;
    expect(cleared.listing_visibility).toBeUndefined();
    expect(cleared.passthrough_request_headers).toBeUndefined();
    expect(cleared.allowed_response_headers).toEqual(['X-Other']);
    await s.v('DELETE', 'sys/auth/go-jwt');
    await s.v('DELETE', 'sys/mounts/go-engine');
  });

  test('every field Vault returns in mount reads; external_entropy_access and force_no_cache kept; "-" may start a segment', async () => {
    const body = { type: 'kv', external_entropy_access: true, config: { force_no_cache: true, allowed_managed_keys: 'k1,k2' } };
    expect((await s.v('POST', 'sys/mounts/-dash/_under', body)).status).toBe(204);
    const read = (await s.v('GET', 'sys/mounts/-dash/_under')).body.data;
    expect(read).toEqual({
      accessor: expect.stringMatching(/^kv_/),
      config: { default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: true, allowed_managed_keys: ['k1', 'k2'] },
      deprecation_status: 'supported',
      description: '',
      external_entropy_access: true,
      local: false,
      options: null,
      plugin_version: '',
      running_plugin_version: 'v1.21.1+builtin.vault',
      running_sha256: '',
      seal_wrap: false,
      type: 'kv',
      uuid: expect.any(String),
    });
    expect((await s.v('GET', 'sys/mounts')).body.data['-dash/_under/']).toEqual(read);
    expect((await s.v('GET', 'sys/mounts/-dash/_under/tune')).body.data).toMatchObject({ external_entropy_access: true, force_no_cache: true });
    // Core mounts have no deprecation status; `ad` is deprecated in Vault's registry.
    expect((await s.v('GET', 'sys/mounts/sys')).body.data.deprecation_status).toBeUndefined();
    expect((await s.v('GET', 'sys/mounts/ad')).body.data.deprecation_status).toBe('deprecated');
    expect((await s.v('POST', 'sys/mounts/a/.hidden', { type: 'kv' })).body.errors[0]).toMatch(/none starting with "\."/);
    expect((await s.v('POST', 'sys/mounts/pinned', { type: 'kv', plugin_version: 'v9.9.9' })).body.errors[0]).toMatch(/^plugin_version: /);
    expect((await s.v('DELETE', 'sys/mounts/-dash/_under')).status).toBe(204);
  });

  test('sys/internal/ui/mounts: a mount for any token with some capability on or under it, 403 otherwise', async () => {
    const read = (path: string, token: string | null = ROOT_TOKEN) => s.v('GET', `sys/internal/ui/mounts/${path}`, undefined, token);
    const root = await read('secret/data/app');
    expect(root.status).toBe(200);
    expect(root.body.data).toMatchObject({ type: 'kv', options: { version: '2' }, path: 'secret/', config: { default_lease_ttl: 768 * 3600, max_lease_ttl: 768 * 3600 } });
    expect((await read('auth/jwt/login')).body.data).toMatchObject({ type: 'jwt', path: 'jwt/', config: { token_type: 'default-service' } });
    const reader = await s.tokenWith('path "secret/data/team/*" { capabilities = ["read"] }');
    expect((await read('secret', reader)).body.data.options).toEqual({ version: '2' });
    const refused = await read('pki/issue/x', reader);
    expect(refused).toMatchObject({ status: 403, body: { errors: ['preflight capability check returned 403, please ensure client\'s policies grant access to path "pki/issue/x/"'] } });
    // A path with no mount answers the same 403: the endpoint cannot probe for mounts.
    expect((await read('nowhere', ROOT_TOKEN)).status).toBe(403);
    expect((await read('secret', null)).status).toBe(403);
    expect((await read('secret', 'hvs.nope')).status).toBe(403);
    const denied = await s.tokenWith('path "secret/*" { capabilities = ["deny"] }');
    expect((await read('secret', denied)).status).toBe(403);
    // The whole list: what the token may use, in full; without a token, only mounts tuned `listing_visibility: unauth`.
    const all = (await s.v('GET', 'sys/internal/ui/mounts', undefined, reader)).body.data;
    expect(Object.keys(all.secret)).toEqual(['secret/']);
    expect(all.auth).toEqual({});
    expect((await s.v('POST', 'sys/auth/jwt/tune', { listing_visibility: 'unauth' })).status).toBe(204);
    const anonymous = (await s.v('GET', 'sys/internal/ui/mounts', undefined, null)).body.data;
    expect(anonymous).toEqual({ secret: {}, auth: { 'jwt/': { type: 'jwt', description: '', options: null } } });
    expect((await s.v('POST', 'sys/auth/jwt/tune', { listing_visibility: '' })).status).toBe(204);
  });

  test('sys/remount moves a secrets engine with its data; its leases are revoked first, as in Vault', async () => {
    expect((await s.v('POST', 'sys/mounts/move-kv', { type: 'kv', options: { version: '2' }, description: 'to move' })).status).toBe(204);
    expect((await s.v('POST', 'move-kv/data/app', { data: { password: 'FAKEXSECRET' } })).status).toBe(200);
    const before = (await s.v('GET', 'sys/mounts/move-kv')).body.data;
    const started = await s.v('POST', 'sys/remount', { from: 'move-kv/', to: 'moved/kv' });
    expect(started.status).toBe(200);
    expect(started.body.data.migration_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(started.body.warnings).toHaveLength(1);
    const status = await s.v('GET', `sys/remount/status/${started.body.data.migration_id}`);
    expect(status.body.data).toEqual({
      migration_id: started.body.data.migration_id,
      migration_info: { source_mount: 'move-kv/', target_mount: 'moved/kv/', status: 'success' },
    });
    expect((await s.v('GET', 'moved/kv/data/app')).body.data.data).toEqual({ password: 'FAKEXSECRET' });
    expect((await s.v('GET', 'sys/mounts/moved/kv')).body.data).toEqual(before);
    expect((await s.v('GET', 'sys/mounts/move-kv')).status).toBe(404);
    expect((await s.v('GET', 'sys/remount/status/no-such-id')).status).toBe(404);

    // A lease-bearing engine: its leases are revoked through it, then it moves.
    await mountTestEngine(s.engine, s.v, 'move-leases');
    const lease = (await s.v('GET', 'move-leases/creds/app')).body;
    const moved = await s.v('POST', 'sys/remount', { from: 'move-leases', to: 'leases-moved' });
    expect((await s.v('GET', `sys/remount/status/${moved.body.data.migration_id}`)).body.data.migration_info.status).toBe('success');
    expect((await s.v('LIST', 'leases-moved/revoked')).body.data.keys).toEqual([lease.data.id]);
    expect((await s.v('PUT', 'sys/leases/lookup', { lease_id: lease.lease_id })).status).toBe(400);
  });

  test('sys/remount moves an auth method within auth/; Vault\'s refusals', async () => {
    expect((await s.v('POST', 'sys/auth/move-jwt', { type: 'jwt' })).status).toBe(204);
    const accessor = (await s.v('GET', 'sys/auth')).body.data['move-jwt/'].accessor;
    const moved = await s.v('POST', 'sys/remount', { from: 'auth/move-jwt', to: 'auth/jwt-moved' });
    expect(moved.status).toBe(200);
    const auth = (await s.v('GET', 'sys/auth')).body.data;
    expect(auth['move-jwt/']).toBeUndefined();
    expect(auth['jwt-moved/'].accessor).toBe(accessor);
    const refused: Array<[Record<string, unknown>, string]> = [
      [{ from: 'sys', to: 'system' }, 'cannot remount "sys/"'],
      [{ from: 'cubbyhole/', to: 'cubby' }, 'cannot remount "cubbyhole/"'],
      [{ from: 'identity', to: 'ident' }, 'cannot remount "identity/"'],
      [{ from: 'secret', to: 'sys/secret' }, 'cannot remount to destination sys/secret/'],
      [{ from: 'secret', to: 'auth/secret' }, 'cannot remount to destination auth/secret/'],
      [{ from: 'auth/token', to: 'auth/tokens' }, 'cannot remount "auth/token/"'],
      [{ from: 'auth/jwt-moved', to: 'auth/token/x' }, 'cannot remount to destination "auth/token/x/"'],
      [{ from: 'auth/jwt-moved', to: 'jwt' }, 'cannot remount auth mount to non-auth mount "jwt/"'],
      [{ from: 'secret', to: 'pki' }, 'path already in use at "pki/"'],
      [{ from: 'secret', to: 'secret/sub' }, 'path already in use at "secret/"'],
      [{ from: 'nowhere', to: 'elsewhere' }, 'no matching mount at "nowhere/"'],
      [{ from: 'secret' }, "both 'from' and 'to' path must be specified as a string"],
      [{ from: ' secret', to: 'x' }, "'from' path cannot contain trailing whitespace"],
      [{ from: 'secret', to: 'a/.b' }, 'invalid destination mount: mount path "a/.b" is invalid'],
    ];
    for (const [body, message] of refused) {
      const res = await s.v('POST', 'sys/remount', body);
      expect([body, res.status, res.body.errors[0]]).toEqual([body, 400, expect.stringContaining(message)]);
    }
    expect(Object.keys((await s.v('GET', 'sys/mounts')).body.data)).toContain('secret/');
    // Root-protected, as in Vault: a token without sudo on sys/remount is refused.
    const noSudo = await s.tokenWith('path "sys/remount" { capabilities = ["update"] }');
    expect((await s.v('POST', 'sys/remount', { from: 'secret', to: 'kv' }, noSudo)).status).toBe(403);
  });

  test('tuning auth/token sets the TTLs of new tokens', async () => {
    expect((await s.v('POST', 'sys/auth/token/tune', { default_lease_ttl: '2h', max_lease_ttl: '3h' })).status).toBe(204);
    const t = await s.v('POST', 'auth/token/create', { policies: ['default'] });
    expect(t.body.auth.lease_duration).toBe(7200);
    const capped = await s.v('POST', 'auth/token/create', { policies: ['default'], ttl: '10h' });
    expect(capped.body.auth.lease_duration).toBe(3 * 3600);
    await s.v('POST', 'sys/auth/token/tune', { default_lease_ttl: 0, max_lease_ttl: 0 });
  });
});

describe.each(STORAGE_KINDS)('leases (%s)', (kind) => {
  let s: SecretsTestServer;
  beforeAll(async () => {
    s = await startSecrets(kind);
    await mountTestEngine(s.engine, s.v);
  });
  afterAll(() => s.close());

  // An empty list is Vault's 404.
  const keys = async (what: 'issued' | 'revoked') => ((await s.v('LIST', `test/${what}`)).body.data?.keys ?? []) as string[];
  const issue = async (token = ROOT_TOKEN) => {
    const res = await s.v('GET', 'test/creds/app', undefined, token);
    expect(res.status).toBe(200);
    return res.body as { lease_id: string; lease_duration: number; renewable: boolean; data: { id: string } };
  };

  test('a lease-bearing response registers a lease; lookup, renew, revoke go through the engine', async () => {
    const lease = await issue();
    expect(lease.lease_id).toMatch(/^test\/creds\/app\/[A-Za-z0-9_-]+$/);
    expect(lease).toMatchObject({ lease_duration: 3600, renewable: true });
    const looked = await s.v('PUT', 'sys/leases/lookup', { lease_id: lease.lease_id });
    expect(looked.body.data).toMatchObject({ id: lease.lease_id, ttl: 3600, renewable: true, last_renewal: null });
    s.clock.advance(600_000);
    const renewed = await s.v('PUT', 'sys/leases/renew', { lease_id: lease.lease_id, increment: '2h' });
    expect(renewed.body).toMatchObject({ lease_id: lease.lease_id, lease_duration: 7200, renewable: true });
    expect((await s.v('PUT', 'sys/leases/lookup', { lease_id: lease.lease_id })).body.data.last_renewal).not.toBeNull();
    expect(await keys('issued')).toContain(lease.data.id);
    expect((await s.v('PUT', 'sys/leases/revoke', { lease_id: lease.lease_id })).status).toBe(204);
    expect(await keys('issued')).not.toContain(lease.data.id);
    expect(await keys('revoked')).toContain(lease.data.id);
    expect((await s.v('PUT', 'sys/leases/lookup', { lease_id: lease.lease_id })).body.errors).toEqual(['invalid lease']);
  });

  test('renewal stops at the mount maximum', async () => {
    await s.v('POST', 'sys/mounts/test/tune', { max_lease_ttl: '2h' });
    const lease = await issue();
    s.clock.advance(1800_000);
    const renewed = await s.v('PUT', 'sys/renew', { lease_id: lease.lease_id, increment: '5h' });
    expect(renewed.body.lease_duration).toBe(5400);
    // vault/api's Sys().Renew sends `increment: null` for no increment: not given.
    expect((await s.v('PUT', 'sys/leases/renew', { lease_id: lease.lease_id, increment: null })).status).toBe(200);
    s.clock.advance(5400_000);
    expect((await s.v('PUT', 'sys/leases/renew', { lease_id: lease.lease_id })).status).toBe(400);
    await s.v('POST', 'sys/mounts/test/tune', { max_lease_ttl: 0 });
  });

  test('expiry revokes through the engine (background job, engine clock)', async () => {
    const lease = await issue();
    s.clock.advance(3599_000);
    await s.engine.scheduler.runOnce();
    expect(await keys('issued')).toContain(lease.data.id);
    s.clock.advance(1_000);
    await s.engine.scheduler.runOnce();
    expect(await keys('issued')).not.toContain(lease.data.id);
    expect(await keys('revoked')).toContain(lease.data.id);
  });

  test('revoking a token revokes its leases, and its children\'s', async () => {
    await s.v('PUT', 'sys/policies/acl/creds', { policy: 'path "test/creds/*" { capabilities = ["read"] }\npath "auth/token/create" { capabilities = ["update"] }' });
    const parent = (await s.v('POST', 'auth/token/create', { policies: ['creds'] })).body.auth.client_token;
    const child = (await s.v('POST', 'auth/token/create', { policies: ['creds'] }, parent)).body.auth.client_token;
    const a = await issue(parent);
    const b = await issue(child);
    const unrelated = await issue();
    expect((await s.v('POST', 'auth/token/revoke', { token: parent })).status).toBe(204);
    const revoked = await keys('revoked');
    expect(revoked).toEqual(expect.arrayContaining([a.data.id, b.data.id]));
    expect(revoked).not.toContain(unrelated.data.id);
    // A token that expires takes its leases along too.
    const short = (await s.v('POST', 'auth/token/create', { policies: ['creds'], ttl: 60 })).body.auth.client_token;
    const c = await issue(short);
    s.clock.advance(60_000);
    await s.engine.scheduler.runOnce();
    expect(await keys('revoked')).toContain(c.data.id);
  });

  test('revoke-prefix and the sudo-only listing of lease ids', async () => {
    const x = await issue();
    const listed = await s.v('LIST', 'sys/leases/lookup/test/creds/app');
    expect(listed.body.data.keys).toContain(x.lease_id.split('/').pop());
    expect((await s.v('PUT', 'sys/leases/revoke-prefix/test/creds')).status).toBe(204);
    expect(await keys('issued')).toEqual([]);
    expect((await s.v('LIST', 'sys/leases/lookup/test/creds/app')).status).toBe(404);
  });

  test('a failed revocation stays marked and is retried with back-off', async () => {
    await s.v('PUT', 'test/config', { fail_revocations: true });
    const lease = await issue();
    const res = await s.v('PUT', 'sys/leases/revoke', { lease_id: lease.lease_id });
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatch(/retried in the background: .*the test system is down/);
    expect((await s.v('PUT', 'sys/leases/lookup', { lease_id: lease.lease_id })).status).toBe(400);
    await s.v('PUT', 'test/config', { fail_revocations: false });
    await s.engine.scheduler.runOnce();
    expect(await keys('issued')).toContain(lease.data.id); // back-off: not yet
    s.clock.advance(10_000);
    await s.engine.scheduler.runOnce();
    expect(await keys('issued')).not.toContain(lease.data.id);
  });

  test('a transaction that lost a race runs again, and only the committed attempt\'s after-commit work runs', async () => {
    // The storage's own retry, as when another writer held the lock: the first attempt's work is
    // done, then its commit fails with the error the storage retries (SQLite busy, PostgreSQL
    // serialization failure) and rolls back.
    const storage = s.engine.storage;
    const original = storage.tx;
    const tx = original.bind(storage);
    let lost = false;
    storage.tx = <T>(fn: (db: Db) => Promise<T>, options?: TxOptions) =>
      tx(async (db) => {
        const result = await fn(db);
        if (!lost && !options?.readOnly) {
          lost = true;
          throw Object.assign(new Error('database is locked'), { code: '40001' });
        }
        return result;
      }, options);
    try {
      expect((await s.v('PUT', `test/after-commit/retried-${kind}`, {})).status).toBe(204);
    } finally {
      storage.tx = original;
    }
    expect(lost).toBe(true);
    expect(afterCommitRuns.filter((name) => name === `retried-${kind}`)).toEqual([`retried-${kind}`]);
  });

  test('bad lease requests', async () => {
    expect((await s.v('PUT', 'sys/leases/lookup', {})).body.errors).toEqual(['lease_id is required']);
    expect((await s.v('PUT', 'sys/leases/lookup', { lease_id: 'nope' })).body.errors).toEqual(['invalid lease']);
    expect((await s.v('PUT', 'sys/leases/renew', { lease_id: 'nope' })).status).toBe(400);
    expect((await s.v('PUT', 'sys/leases/renew', { lease_id: 'x', increment: 'later' })).body.errors[0]).toMatch(/^increment: /);
    expect((await s.v('PUT', 'sys/leases/revoke', { lease_id: 'nope' })).status).toBe(204);
  });
});

describe.each(STORAGE_KINDS)('pending revocations survive a restart (%s)', (kind) => {
  test('a revocation marked before the stop is completed by the next server', async () => {
    const storage = await freshStorage(kind);
    const clock = new ManualClock();
    const open = async () => {
      const engine = await Engine.open({ storage: storage.config, dataDir: storage.dataDir, devRootToken: ROOT_TOKEN, clock });
      (await secretsCore(engine)).register(testEngine);
      return engine;
    };
    const call = async (engine: Engine, method: string, path: string, body?: unknown) =>
      engine.app('secrets').inject({ method: method as 'GET', url: `/v1/${path}`, headers: { 'x-vault-token': ROOT_TOKEN }, payload: body as object });
    try {
      const first = await open();
      await call(first, 'POST', 'sys/mounts/test', { type: 'hangar-test' });
      await call(first, 'PUT', 'test/config', { fail_revocations: true });
      const lease = JSON.parse((await call(first, 'GET', 'test/creds/app')).body);
      expect((await call(first, 'PUT', 'sys/leases/revoke', { lease_id: lease.lease_id })).statusCode).toBe(400);
      await first.close();

      const second = await open();
      await call(second, 'PUT', 'test/config', { fail_revocations: false });
      clock.advance(60_000);
      await second.scheduler.runOnce();
      // Nothing issued is left: an empty list is Vault's 404.
      expect((await call(second, 'GET', 'test/issued?list=true')).statusCode).toBe(404);
      const revoked = JSON.parse((await call(second, 'GET', 'test/revoked?list=true')).body);
      expect(revoked.data.keys).toEqual([lease.data.id]);
      await second.close();
    } finally {
      await storage.cleanup();
    }
  });
});
