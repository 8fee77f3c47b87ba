import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startSecrets, SecretsTestServer } from './helpers';
import { jwksServer, newKey, sign, TestKey, unsigned } from './jwt-helpers';
import { STORAGE_KINDS, tempDir } from '../../helpers/storage';

const ISSUER = 'https://issuer.example';

describe.each(STORAGE_KINDS)('auth/jwt (%s)', (kind) => {
  let s: SecretsTestServer;
  let key: TestKey;
  let other: TestKey;
  const login = (jwt: string, role?: string) => s.v('POST', 'auth/jwt/login', { jwt, ...(role ? { role } : {}) }, null);
  const token = (claims: Record<string, unknown>, k = key, header?: Record<string, unknown>) =>
    sign(k, { iss: ISSUER, aud: 'hangar', sub: 'u-1', email: 'alice@example.com', ...claims }, s.clock.now(), header);

  beforeAll(async () => {
    s = await startSecrets(kind);
    key = await newKey('k1');
    other = await newKey('k2');
    await s.v('PUT', 'sys/policies/acl/dev', { policy: 'path "secret/*" { capabilities = ["read"] }' });
    expect((await s.v('POST', 'auth/jwt/config', { jwt_validation_pubkeys: [key.publicPem], bound_issuer: ISSUER, default_role: 'ci' })).status).toBe(204);
    const ci = await s.v('POST', 'auth/jwt/role/ci', {
      role_type: 'jwt',
      user_claim: 'email',
      bound_audiences: ['hangar'],
      claim_mappings: { '/org/name': 'org', 'sub': 'subject' },
      token_policies: 'dev',
      token_ttl: '10m',
      token_max_ttl: '1h',
    });
    expect(ci.status).toBe(204);
  });
  afterAll(() => s.close());

  test('config: exactly one key source, clear errors, the client secret never shown', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{}, /exactly one of 'jwt_validation_pubkeys', 'jwks_url', 'jwks_pairs' or 'oidc_discovery_url' must be set/],
      [{ jwks_url: 'http://127.0.0.1:1/jwks', jwks_pairs: [{ jwks_url: 'http://127.0.0.1:1/jwks' }] }, /exactly one of/],
      [{ jwks_pairs: [{ jwks_url: 'http://127.0.0.1:1/jwks' }], jwks_ca_pem: 'x' }, /^jwks_ca_pem: CA PEM must be provided as part of the 'jwks_pairs'/],
      [{ jwks_pairs: [{ jwks_url: 'ftp://x' }] }, /^jwks_pairs\[0\]\.jwks_url: "ftp:\/\/x" must be an http\(s\) URL/],
      [{ jwks_pairs: [{ jwks_url: 'http://127.0.0.1:1/jwks', jwks_ca_pem: 'x' }] }, /^jwks_pairs\[0\]\.jwks_ca_pem: not a PEM certificate/],
      [{ jwks_pairs: [{ jwks_url: 'http://127.0.0.1:1/jwks' }] }, /^error checking jwks URL http:\/\/127\.0\.0\.1:1\/jwks: cannot reach/],
      [{ jwks_url: 'http://127.0.0.1:1/jwks', jwt_validation_pubkeys: [key.publicPem] }, /exactly one of/],
      [{ jwt_validation_pubkeys: ['not a key'] }, /jwt_validation_pubkeys\[0\]: not a PEM public key/],
      [{ jwks_url: 'ftp://x' }, /jwks_url: "ftp:\/\/x" must be an http\(s\) URL/],
      [{ jwks_url: 'http://127.0.0.1:1/jwks' }, /error checking jwks URL: cannot reach/],
      [{ oidc_discovery_url: 'http://127.0.0.1:1' }, /error checking oidc discovery URL: cannot reach/],
      [{ jwt_validation_pubkeys: [key.publicPem], jwt_supported_algs: ['HS256'] }, /jwt_supported_algs: "HS256" is not supported/],
      [{ jwt_validation_pubkeys: [key.publicPem], oidc_response_types: ['id_token'] }, /needs oidc_response_mode 'form_post'/],
      [{ jwt_validation_pubkeys: [key.publicPem], oidc_response_mode: 'fragment' }, /oidc_response_mode: must be query or form_post/],
      [{ jwt_validation_pubkeys: [key.publicPem], jwks_ca_pem: 'x' }, /jwks_ca_pem: not a PEM certificate/],
      [{ jwt_validation_pubkeys: [key.publicPem], oidc_client_id: 'a' }, /need oidc_discovery_url/],
      [{ jwt_validation_pubkeys: [key.publicPem], provider_config: { fetch_groups: true } }, /^invalid provider_config: 'provider' field not found/],
      [{ jwt_validation_pubkeys: [key.publicPem], provider_config: { provider: 'okta' } }, /^invalid provider_config: provider "okta" not found/],
      [{ jwt_validation_pubkeys: [key.publicPem], provider_config: 'azure' }, /^provider_config/],
    ];
    for (const [body, message] of cases) {
      const res = await s.v('POST', 'auth/jwt/config', body);
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatch(message);
    }
    const read = await s.v('GET', 'auth/jwt/config');
    expect(read.body.data).toMatchObject({ jwt_validation_pubkeys: [key.publicPem], bound_issuer: ISSUER, oidc_discovery_url: '', default_role: 'ci' });
    expect(read.body.data).not.toHaveProperty('oidc_client_secret');
    // A known provider is stored and shown; it changes nothing (the logins of the next tests run under it).
    const providerConfig = { provider: 'azure', fetch_groups: true };
    const withProvider = { jwt_validation_pubkeys: [key.publicPem], bound_issuer: ISSUER, default_role: 'ci', provider_config: providerConfig };
    expect((await s.v('POST', 'auth/jwt/config', withProvider)).status).toBe(204);
    expect((await s.v('GET', 'auth/jwt/config')).body.data.provider_config).toEqual(providerConfig);
  });

  test('roles: validation, read with every field, partial update, list, delete', async () => {
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ role_type: 'jwt', bound_audiences: ['a'] }, /user_claim is required/],
      [{ role_type: 'jwt', user_claim: 'sub' }, /at least one bound constraint/],
      [{ user_claim: 'sub' }, /'allowed_redirect_uris' must be set/],
      [{ role_type: 'saml', user_claim: 'sub' }, /role_type: must be oidc or jwt/],
      [{ role_type: 'jwt', user_claim: 'sub', bound_subject: 'x', expiration_leeway: -2 }, /expiration_leeway: must be at least -1/],
      [{ role_type: 'jwt', user_claim: 'sub', bound_subject: 'x', token_type: 'gold' }, /token_type: must be service, batch or default/],
      [{ role_type: 'jwt', user_claim: 'sub', bound_subject: 'x', bound_claims_type: 'glob', bound_claims: { n: 1 } }, /glob values must be strings/],
      [{ role_type: 'jwt', user_claim: 'sub', token_bound_cidrs: ['nope'] }, /token_bound_cidrs: "nope" is not an IP/],
      [{ role_type: 'jwt', user_claim: 'sub', bound_subject: 'x', token_ttl: '2h', token_max_ttl: '1h' }, /token_ttl should not be greater/],
      [{ role_type: 'jwt', user_claim: 'sub', bound_subject: 'x', claim_mappings: { a: 'role' } }, /"role" is reserved/],
      [{ role_type: 'oidc', user_claim: 'sub', allowed_redirect_uris: ['not a url'] }, /allowed_redirect_uris: "not a url" is not a URL/],
    ];
    for (const [body, message] of bad) {
      const res = await s.v('POST', 'auth/jwt/role/bad', body);
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatch(message);
    }
    expect((await s.v('GET', 'auth/jwt/role/bad')).status).toBe(404);
    await s.v('POST', 'auth/jwt/role/web', { user_claim: 'sub', allowed_redirect_uris: 'http://127.0.0.1:8250/oidc/callback', policies: 'dev,ops', ttl: 600 });
    await s.v('POST', 'auth/jwt/role/web', { bound_subject: 'u-1' });
    const read = (await s.v('GET', 'auth/jwt/role/web')).body.data;
    expect(read).toMatchObject({
      role_type: 'oidc',
      user_claim: 'sub',
      bound_subject: 'u-1',
      allowed_redirect_uris: ['http://127.0.0.1:8250/oidc/callback'],
      token_policies: ['dev', 'ops'],
      policies: ['dev', 'ops'],
      token_ttl: 600,
      ttl: 600,
      bound_cidrs: [],
      bound_audiences: [],
      groups_claim: '',
      period: 0,
      num_uses: 0,
      max_ttl: 0,
    });
    expect((await s.v('LIST', 'auth/jwt/role')).body.data.keys).toEqual(['ci', 'web']);
    expect((await s.v('DELETE', 'auth/jwt/role/web')).status).toBe(204);
    expect((await s.v('LIST', 'auth/jwt/role')).body.data.keys).toEqual(['ci']);
  });

  test('JWT login: a token with the role policies, metadata from claims, TTLs', async () => {
    const res = await login(await token({ org: { name: 'acme' } }), 'ci');
    expect(res.status).toBe(200);
    expect(res.body.auth).toMatchObject({
      policies: ['default', 'dev'],
      token_policies: ['default', 'dev'],
      metadata: { role: 'ci', org: 'acme', subject: 'u-1' },
      lease_duration: 600,
      renewable: true,
      token_type: 'service',
    });
    const looked = await s.v('GET', 'auth/token/lookup-self', undefined, res.body.auth.client_token);
    expect(looked.body.data).toMatchObject({ display_name: 'jwt-alice@example.com', path: 'auth/jwt/login', meta: { role: 'ci', org: 'acme' } });
    expect((await s.v('POST', 'auth/token/renew-self', { increment: '2h' }, res.body.auth.client_token)).body.auth.lease_duration).toBe(3600);
    // default_role applies when no role is given
    expect((await login(await token({}))).status).toBe(200);
  });

  test('refused tokens, each with a clear error', async () => {
    const now = Math.floor(s.clock.now() / 1000);
    const cases: Array<[string, RegExp]> = [
      [await token({}, other), /signature is invalid/],
      [unsigned({ iss: ISSUER, aud: 'hangar', email: 'a@b' }), /alg "none" is refused/],
      [await token({ exp: now - 211 }), /token is expired/],
      [await token({ nbf: now + 211 }), /not valid yet/],
      [await token({ iss: 'https://evil.example' }), /iss claim "https:\/\/evil.example" does not match the bound issuer/],
      [await token({ aud: 'someone-else' }), /aud claim does not match any bound audience/],
      [await token({ email: 42 }), /claim "email" must be a non-empty string/],
      [await token({ email: undefined }), /claim "email" not found/],
      ['not.a.jwt', /not a compact JWT/],
      [`${(await token({})).slice(0, -4)}AAAA`, /signature is invalid/],
    ];
    for (const [jwt, message] of cases) {
      const res = await login(jwt, 'ci');
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatch(message);
    }
    // Within the default leeways (60 s skew + 150 s) an expired token still passes.
    expect((await login(await token({ exp: now - 200 }), 'ci')).status).toBe(200);
    expect((await login(await token({}), 'nosuch')).body.errors[0]).toMatch(/role "nosuch" could not be found/);
    expect((await s.v('POST', 'auth/jwt/login', { role: 'ci' }, null)).body.errors).toEqual(['jwt is required']);
  });

  test('leeways: -1 disables, a number replaces the default', async () => {
    const now = Math.floor(s.clock.now() / 1000);
    await s.v('POST', 'auth/jwt/role/strict', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'hangar', clock_skew_leeway: -1, expiration_leeway: -1, not_before_leeway: '10s' });
    expect((await login(await token({ exp: now }), 'strict')).body.errors[0]).toMatch(/expired/);
    expect((await login(await token({ exp: now + 1 }), 'strict')).status).toBe(200);
    expect((await login(await token({ nbf: now + 10 }), 'strict')).status).toBe(200);
    expect((await login(await token({ nbf: now + 11 }), 'strict')).body.errors[0]).toMatch(/not valid yet/);
  });

  test('bound audiences: needed when the token carries aud; any match suffices', async () => {
    await s.v('POST', 'auth/jwt/role/subject', { role_type: 'jwt', user_claim: 'sub', bound_subject: 'u-1' });
    expect((await login(await token({}), 'subject')).body.errors[0]).toMatch(/audience claim found in JWT but no audiences bound/);
    expect((await login(await token({ aud: undefined }), 'subject')).status).toBe(200);
    expect((await login(await token({ aud: undefined, sub: 'u-2' }), 'subject')).body.errors[0]).toMatch(/sub claim does not match bound subject/);
    await s.v('POST', 'auth/jwt/role/multi', { role_type: 'jwt', user_claim: 'sub', bound_audiences: ['x', 'hangar'] });
    expect((await login(await token({ aud: ['other', 'hangar'] }), 'multi')).status).toBe(200);
  });

  test('bound claims: strings, lists (any match), globs, JSON pointers', async () => {
    await s.v('POST', 'auth/jwt/role/claims', {
      role_type: 'jwt',
      user_claim: '/profile/login',
      user_claim_json_pointer: true,
      bound_audiences: 'hangar',
      bound_claims: { 'team': ['ops', 'dev'], '/ci/ref': 'refs/heads/main' },
      groups_claim: '/profile/groups',
    });
    const base = { profile: { login: 'alice', groups: ['a', 'b'] }, ci: { ref: 'refs/heads/main' } };
    const ok = await login(await token({ ...base, team: 'dev' }), 'claims');
    expect(ok.status).toBe(200);
    expect(ok.body.auth.metadata).toEqual({ role: 'claims' });
    expect((await login(await token({ ...base, team: ['qa', 'ops'] }), 'claims')).status).toBe(200);
    expect((await login(await token({ ...base, team: 'qa' }), 'claims')).body.errors[0]).toMatch(/claim "team" does not match/);
    expect((await login(await token({ ...base, team: 'dev', ci: { ref: 'refs/heads/x' } }), 'claims')).body.errors[0]).toMatch(/claim "\/ci\/ref" does not match/);
    expect((await login(await token({ ...base, team: undefined }), 'claims')).body.errors[0]).toMatch(/claim "team" is missing/);
    expect((await login(await token({ ...base, team: 'dev', profile: { login: 'a', groups: 'g' } }), 'claims')).status).toBe(200);
    expect((await login(await token({ ...base, team: 'dev', profile: { login: 'a', groups: [1] } }), 'claims')).body.errors[0]).toMatch(/groups claim .* list of strings/);
    await s.v('POST', 'auth/jwt/role/glob', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'hangar', bound_claims_type: 'glob', bound_claims: { ref: 'refs/heads/release-*' } });
    expect((await login(await token({ ref: 'refs/heads/release-1.2' }), 'glob')).status).toBe(200);
    expect((await login(await token({ ref: 'refs/tags/release-1.2' }), 'glob')).status).toBe(400);
  });

  test('token_* fields are applied to the issued token', async () => {
    await s.v('POST', 'auth/jwt/role/limits', {
      role_type: 'jwt',
      user_claim: 'sub',
      bound_audiences: 'hangar',
      token_policies: ['dev'],
      token_no_default_policy: true,
      token_num_uses: 3,
      token_explicit_max_ttl: '20m',
      token_ttl: '1h',
      token_bound_cidrs: ['127.0.0.1/32', '::1'],
    });
    const auth = (await login(await token({}), 'limits')).body.auth;
    expect(auth).toMatchObject({ policies: ['dev'], lease_duration: 1200, num_uses: 3 });
    const looked = await s.v('POST', 'auth/token/lookup', { token: auth.client_token });
    expect(looked.body.data).toMatchObject({ explicit_max_ttl: 1200, num_uses: 3, bound_cidrs: ['127.0.0.1/32', '::1'] });
    await s.v('POST', 'auth/jwt/role/periodic', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'hangar', token_period: '30m', token_type: 'default-service' });
    const periodic = (await login(await token({}), 'periodic')).body.auth;
    expect(periodic.lease_duration).toBe(1800);
    await s.v('POST', 'auth/jwt/role/batch', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'hangar', token_type: 'batch' });
    const batch = (await login(await token({}), 'batch')).body.auth;
    expect(batch).toMatchObject({ token_type: 'batch', renewable: false });
    await s.v('POST', 'auth/jwt/role/far', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'hangar', token_bound_cidrs: ['10.0.0.0/8'] });
    expect((await login(await token({}), 'far')).status).toBe(403);
  });

  test('jwt_validation_pubkeys mixing EC and RSA keys: the key that fits the alg verifies', async () => {
    const ec = await newKey('ec', 'ES256');
    await s.v('POST', 'sys/auth/mixed', { type: 'jwt' });
    expect((await s.v('POST', 'auth/mixed/config', { jwt_validation_pubkeys: [ec.publicPem, key.publicPem], jwt_supported_algs: ['RS256', 'ES256'] })).status).toBe(204);
    await s.v('POST', 'auth/mixed/role/r', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'hangar' });
    for (const k of [key, ec]) {
      const jwt = await sign(k, { aud: 'hangar', sub: 'svc' }, s.clock.now());
      const res = await s.v('POST', 'auth/mixed/login', { role: 'r', jwt }, null);
      expect(res.status).toBe(200);
    }
    const rogue = await sign(other, { aud: 'hangar', sub: 'svc' }, s.clock.now());
    expect((await s.v('POST', 'auth/mixed/login', { role: 'r', jwt: rogue }, null)).body.errors[0]).toMatch(/signature is invalid/);
    // The mount's tuned token_type decides the type of login tokens; a role's own type wins over a default-*.
    expect((await s.v('POST', 'sys/auth/mixed/tune', { token_type: 'default-batch' })).status).toBe(204);
    const jwt = await sign(key, { aud: 'hangar', sub: 'svc' }, s.clock.now());
    expect((await s.v('POST', 'auth/mixed/login', { role: 'r', jwt }, null)).body.auth.token_type).toBe('batch');
    await s.v('POST', 'auth/mixed/role/r', { token_type: 'service' });
    expect((await s.v('POST', 'auth/mixed/login', { role: 'r', jwt }, null)).body.auth.token_type).toBe('service');
    await s.v('POST', 'sys/auth/mixed/tune', { token_type: 'batch' });
    expect((await s.v('POST', 'auth/mixed/login', { role: 'r', jwt }, null)).body.auth.token_type).toBe('batch');
  });

  test('login tokens are leases: listed under sys/leases/lookup/auth/..., revoked by revoke-prefix', async () => {
    const a = (await login(await token({}), 'ci')).body.auth;
    const b = (await login(await token({}), 'ci')).body.auth;
    const listed = await s.v('LIST', 'sys/leases/lookup/auth/jwt/login');
    expect(listed.status).toBe(200);
    expect(listed.body.data.keys.length).toBeGreaterThanOrEqual(2);
    expect((await s.v('LIST', 'sys/leases/lookup/auth/jwt')).body.data.keys).toEqual(['login/']);
    const leaseId = `auth/jwt/login/${listed.body.data.keys[0]}`;
    expect((await s.v('PUT', 'sys/leases/lookup', { lease_id: leaseId })).body.data).toMatchObject({ id: leaseId, ttl: expect.any(Number), renewable: true });
    expect((await s.v('PUT', 'sys/leases/renew', { lease_id: leaseId })).body.errors[0]).toMatch(/tokens cannot be renewed through this endpoint/);
    const single = (await login(await token({}), 'ci')).body.auth.client_token;
    const singleLease = `auth/jwt/login/${createHash('sha256').update(single).digest('hex')}`;
    expect((await s.v('PUT', 'sys/leases/revoke', { lease_id: singleLease })).status).toBe(204);
    expect((await s.v('GET', 'auth/token/lookup-self', undefined, single)).status).toBe(403);
    expect((await s.v('PUT', 'sys/leases/revoke-prefix/auth/jwt')).status).toBe(204);
    for (const t of [a, b]) expect((await s.v('GET', 'auth/token/lookup-self', undefined, t.client_token)).status).toBe(403);
    expect((await s.v('LIST', 'sys/leases/lookup/auth/jwt/login')).status).toBe(404);
  });

  test('an oidc role cannot log in with a bare JWT', async () => {
    await s.v('POST', 'auth/jwt/role/browser', { user_claim: 'sub', allowed_redirect_uris: ['http://127.0.0.1:8250/oidc/callback'] });
    expect((await login(await token({}), 'browser')).body.errors[0]).toMatch(/role_type oidc/);
  });

  test('JWKS URL: cached, fetched again for an unknown key id (rotation)', async () => {
    const k3 = await newKey('k3', 'ES256');
    const k4 = await newKey('k4', 'ES256');
    const jwks = await jwksServer([k3]);
    try {
      await s.v('POST', 'sys/auth/keys', { type: 'jwt' });
      expect((await s.v('POST', 'auth/keys/config', { jwks_url: jwks.url, jwt_supported_algs: ['ES256'] })).status).toBe(204);
      await s.v('POST', 'auth/keys/role/r', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'hangar' });
      const keysLogin = (k: TestKey) => sign(k, { aud: 'hangar', sub: 'svc' }, s.clock.now()).then((jwt) => s.v('POST', 'auth/keys/login', { role: 'r', jwt }, null));
      expect((await keysLogin(k3)).status).toBe(200);
      const afterFirst = jwks.fetches();
      expect((await keysLogin(k3)).status).toBe(200);
      expect(jwks.fetches()).toBe(afterFirst);
      jwks.set([k3, k4]);
      expect((await keysLogin(k4)).status).toBe(200);
      expect(jwks.fetches()).toBe(afterFirst + 1);
      const rogue = await newKey('k5', 'ES256');
      expect((await keysLogin(rogue)).body.errors[0]).toMatch(/no key in the provider's JWKS matches this token \(kid "k5"\)/);
      const rs = await sign(key, { aud: 'hangar', sub: 'svc' }, s.clock.now());
      expect((await s.v('POST', 'auth/keys/login', { role: 'r', jwt: rs }, null)).body.errors[0]).toMatch(/alg "RS256" is not allowed/);
      // The issuer replaces the key behind a kid: a failed signature refetches the set once.
      const replaced = { ...(await newKey('k4', 'ES256')) };
      jwks.set([k3, replaced]);
      const beforeRotation = jwks.fetches();
      expect((await keysLogin(replaced)).status).toBe(200);
      expect(jwks.fetches()).toBe(beforeRotation + 1);
      // ...but not again right away: a forged signature cannot make the server hammer the issuer.
      expect((await keysLogin(k4)).body.errors[0]).toMatch(/signature is invalid/);
      expect(jwks.fetches()).toBe(beforeRotation + 1);
    } finally {
      await jwks.close();
    }
  });
});

describe('JWKS over HTTPS with a private CA (jwks_ca_pem)', () => {
  test('the CA chain is used for the fetch; without it the certificate is refused', async () => {
    const dir = tempDir();
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
      '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'pipe' });
    const ca = readFileSync(join(dir, 'cert.pem'), 'utf8');
    const key = await newKey('tls-key', 'ES256');
    const server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: ca }, (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [key.publicJwk] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
    const s = await startSecrets('sqlite');
    try {
      const refused = await s.v('POST', 'auth/jwt/config', { jwks_url: url });
      expect(refused.status).toBe(400);
      expect(refused.body.errors[0]).toMatch(/error checking jwks URL: cannot reach https:\/\/127\.0\.0\.1:\d+\/jwks: .*certificate/i);
      expect((await s.v('POST', 'auth/jwt/config', { jwks_url: url, jwks_ca_pem: ca })).status).toBe(204);
      await s.v('POST', 'auth/jwt/role/r', { role_type: 'jwt', user_claim: 'sub', bound_subject: 'svc' });
      const jwt = await sign(key, { sub: 'svc' }, s.clock.now());
      expect((await s.v('POST', 'auth/jwt/login', { role: 'r', jwt }, null)).status).toBe(200);
    } finally {
      await s.close();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('jwks_pairs: several JWKS URLs, each with its own CA (Vault 1.16+)', () => {
  /** An HTTPS JWKS server with a certificate of its own (its CA for the pair). */
  async function tlsJwks(key: TestKey) {
    const dir = tempDir();
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
      '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'pipe' });
    const ca = readFileSync(join(dir, 'cert.pem'), 'utf8');
    const server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: ca }, (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [key.publicJwk] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`, ca, close: () => new Promise((r) => server.close(r)) };
  }

  test('a token signed by a key of any of the sets logs in; each fetch trusts only its own CA; read shows the pairs', async () => {
    const [ka, kb] = [await newKey('pair-a', 'ES256'), await newKey('pair-b', 'RS256')];
    const [a, b] = [await tlsJwks(ka), await tlsJwks(kb)];
    const s = await startSecrets('sqlite');
    try {
      // The other pair's CA does not vouch for this server: refused when the config is written.
      const crossed = await s.v('POST', 'auth/jwt/config', { jwks_pairs: [{ jwks_url: a.url, jwks_ca_pem: b.ca }] });
      expect([crossed.status, crossed.body.errors[0]]).toEqual([400, expect.stringMatching(/^error checking jwks URL https:.*certificate/i)]);
      const pairs = [{ jwks_url: a.url, jwks_ca_pem: a.ca }, { jwks_url: b.url, jwks_ca_pem: b.ca }];
      expect((await s.v('POST', 'auth/jwt/config', { jwks_pairs: pairs })).status).toBe(204);
      const read = (await s.v('GET', 'auth/jwt/config')).body.data;
      expect([read.jwks_pairs, read.jwks_url, read.jwks_ca_pem]).toEqual([pairs, '', '']);
      await s.v('POST', 'auth/jwt/role/r', { role_type: 'jwt', user_claim: 'sub', bound_subject: 'svc' });
      for (const k of [ka, kb]) {
        const jwt = await sign(k, { sub: 'svc' }, s.clock.now());
        expect((await s.v('POST', 'auth/jwt/login', { role: 'r', jwt }, null)).status).toBe(200);
      }
      const rogue = await newKey('pair-c', 'ES256');
      const refused = await s.v('POST', 'auth/jwt/login', { role: 'r', jwt: await sign(rogue, { sub: 'svc' }, s.clock.now()) }, null);
      expect([refused.status, refused.body.errors[0]]).toEqual([400, expect.stringMatching(/no key in the provider's JWKS matches this token \(kid "pair-c"\)/)]);
      // Another source replaces the pairs.
      expect((await s.v('POST', 'auth/jwt/config', { jwks_url: a.url, jwks_ca_pem: a.ca })).status).toBe(204);
      expect((await s.v('GET', 'auth/jwt/config')).body.data.jwks_pairs).toEqual([]);
    } finally {
      await s.close();
      await Promise.all([a.close(), b.close()]);
    }
  });
});
