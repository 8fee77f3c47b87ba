import { ROOT_TOKEN, startSecrets, SecretsTestServer } from './helpers';
import { storedText } from '../../helpers/raw-db';
import { STORAGE_KINDS } from '../../helpers/storage';

describe.each(STORAGE_KINDS)('response wrapping (%s)', (kind) => {
  let s: SecretsTestServer;
  /** A request with X-Vault-Wrap-TTL (and a token: root unless given). */
  const wrapped = (method: string, path: string, ttl: string, body?: unknown, token = ROOT_TOKEN) =>
    s.call('secrets', method, `/v1/${path}`, { body, headers: { 'x-vault-token': token, 'x-vault-wrap-ttl': ttl } });
  const unwrap = (wrappingToken: string, caller: string | null = ROOT_TOKEN) =>
    caller === wrappingToken ? s.v('POST', 'sys/wrapping/unwrap', undefined, wrappingToken) : s.v('POST', 'sys/wrapping/unwrap', { token: wrappingToken }, caller);

  beforeAll(async () => {
    s = await startSecrets(kind);
    expect((await s.v('POST', 'sys/mounts/kv', { type: 'kv-v2' })).status).toBe(204);
    expect((await s.v('POST', 'kv/data/app', { data: { password: 'wrapped-secret-value' } })).status).toBe(200);
  });
  afterAll(() => s.close());

  test('a wrapped read: wrap_info only, sealed at rest, looked up without a use, unwrapped exactly once', async () => {
    const res = await wrapped('GET', 'kv/data/app', '5m');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      request_id: '',
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      data: null,
      wrap_info: { token: expect.stringMatching(/^hvs\./), accessor: expect.any(String), ttl: 300, creation_time: expect.stringMatching(/Z$/), creation_path: 'kv/data/app' },
      warnings: null,
      auth: null,
      mount_type: '',
    });
    const token = res.body.wrap_info.token as string;
    expect(await storedText(s.engine.storage, s.dataDir)).not.toContain('wrapped-secret-value');

    // The token is a single-use orphan with only the response-wrapping policy.
    const info = await s.v('POST', 'auth/token/lookup', { token });
    expect(info.body.data).toMatchObject({ policies: ['response-wrapping'], num_uses: 1, orphan: true, renewable: false, ttl: 300, path: 'kv/data/app' });

    // Lookup needs no token and leaves the wrapping token usable.
    for (let i = 0; i < 2; i++) {
      const look = await s.v('POST', 'sys/wrapping/lookup', { token }, null);
      expect([look.status, look.body.data]).toEqual([200, { creation_path: 'kv/data/app', creation_time: res.body.wrap_info.creation_time, creation_ttl: 300 }]);
    }
    expect((await s.v('POST', 'sys/wrapping/lookup', undefined, token)).body.data.creation_ttl).toBe(300);

    const first = await unwrap(token);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ request_id: expect.any(String), data: { data: { password: 'wrapped-secret-value' }, metadata: { version: 1 } }, mount_type: 'kv' });
    for (const again of [await unwrap(token), await s.v('POST', 'sys/wrapping/lookup', { token }, null)]) {
      expect([again.status, again.body.errors]).toEqual([400, ['wrapping token is not valid or does not exist']]);
    }
  });

  test('the wrapping token itself as the caller; a wrapped token creation names the wrapped accessor', async () => {
    const res = await wrapped('POST', 'auth/token/create', '60', { policies: ['default'], ttl: '1h' });
    const info = res.body.wrap_info;
    expect(info).toMatchObject({ ttl: 60, creation_path: 'auth/token/create', wrapped_accessor: expect.any(String) });
    // The wrapping token may unwrap, nothing else.
    expect((await s.v('GET', 'auth/token/lookup-self', undefined, info.token)).status).toBe(403);
    const out = await unwrap(info.token, info.token);
    expect(out.status).toBe(200);
    expect(out.body.auth).toMatchObject({ accessor: info.wrapped_accessor, policies: ['default'] });
    expect((await s.v('GET', 'auth/token/lookup-self', undefined, out.body.auth.client_token)).status).toBe(200);
    // Used up: the same call now gets Vault's wrapping error rather than a 403.
    const again = await unwrap(info.token, info.token);
    expect([again.status, again.body.errors]).toEqual([400, ['wrapping token is not valid or does not exist']]);
  });

  test('sys/wrapping/wrap and rewrap; expiry; the pipeline refusals', async () => {
    const bare = await s.v('POST', 'sys/wrapping/wrap', { a: 1 });
    expect(bare.status).toBe(400);
    expect(bare.body.errors[0]).toMatch(/^endpoint requires response wrapping to be used/);

    const w = await wrapped('POST', 'sys/wrapping/wrap', '10m', { a: 1, nested: { b: 'two' } });
    expect(w.body.wrap_info).toMatchObject({ ttl: 600, creation_path: 'sys/wrapping/wrap' });
    const re = await s.v('POST', 'sys/wrapping/rewrap', { token: w.body.wrap_info.token });
    expect(re.status).toBe(200);
    expect(re.body.wrap_info).toMatchObject({ ttl: 600, creation_path: 'sys/wrapping/wrap' });
    expect(re.body.wrap_info.token).not.toBe(w.body.wrap_info.token);
    expect((await unwrap(w.body.wrap_info.token)).status).toBe(400);
    expect((await unwrap(re.body.wrap_info.token)).body.data).toEqual({ a: 1, nested: { b: 'two' } });

    // A wrapping token expires with its TTL (the engine clock), and its cubbyhole goes with it.
    const short = await wrapped('POST', 'sys/wrapping/wrap', '30s', { x: 'y' });
    s.clock.advance(31_000);
    expect((await unwrap(short.body.wrap_info.token)).status).toBe(400);
    await s.engine.scheduler.runOnce();

    // Errors are never wrapped; no answer (204) has nothing to wrap.
    expect((await wrapped('GET', 'kv/data/none', '5m')).status).toBe(404);
    expect((await wrapped('DELETE', 'kv/data/none', '5m')).status).toBe(204);
    for (const [ttl, message] of [['soon', /^error parsing X-Vault-Wrap-TTL header: "soon" is not a duration/], ['-5', /cannot be negative/]] as const) {
      const bad = await wrapped('GET', 'kv/data/app', ttl);
      expect([bad.status, bad.body.errors[0]]).toEqual([400, expect.stringMatching(message)]);
    }
    // A caller without the capability learns nothing; the response-wrapping policy is built in and immutable.
    const none = await s.tokenWith('path "kv/*" { capabilities = ["read"] }');
    expect((await wrapped('POST', 'sys/wrapping/wrap', '5m', { a: 1 }, none)).status).toBe(403);
    expect((await s.v('PUT', 'sys/policies/acl/response-wrapping', { policy: 'path "*" { capabilities = ["sudo"] }' })).status).toBe(400);
    expect((await s.v('POST', 'auth/token/create', { policies: ['response-wrapping'] })).body.errors).toEqual(['cannot assign policy "response-wrapping"']);
    expect((await s.v('POST', 'sys/wrapping/unwrap', { token: 42 })).body.errors).toEqual(['token: must be a string']);
    expect((await unwrap(ROOT_TOKEN)).body.errors).toEqual(['wrapping token is not valid or does not exist']);
  });
});
