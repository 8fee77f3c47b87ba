import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSecrets, SecretsTestServer } from './helpers';
import { newKey, sign, TestKey } from './jwt-helpers';
import { STORAGE_KINDS } from '../../helpers/storage';

/**
 * A provider on loopback that serves discovery and a JWKS: enough for the `form_post` + `id_token`
 * flow, where the test signs the ID token itself and so chooses its `auth_time` (which a real
 * provider sets to the actual login).
 */
async function discoveryServer(key: TestKey): Promise<{ issuer: string; close(): Promise<void> }> {
  let issuer = '';
  const server: Server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') {
      res.end(JSON.stringify({ issuer, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks` }));
    } else if (req.url === '/jwks') {
      res.end(JSON.stringify({ keys: [key.publicJwk] }));
    } else {
      res.statusCode = 404;
      res.end('{}');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { issuer, close: () => new Promise((r) => server.close(() => r())) };
}

const REDIRECT = 'http://127.0.0.1:8250/oidc/callback';
const MAX_AGE = 300;

describe.each(STORAGE_KINDS)('OIDC max_age against auth_time (%s)', (kind) => {
  let s: SecretsTestServer;
  let key: TestKey;
  let provider: { issuer: string; close(): Promise<void> };

  beforeAll(async () => {
    s = await startSecrets(kind);
    key = await newKey('k1');
    provider = await discoveryServer(key);
    const config = await s.v('POST', 'auth/jwt/config', {
      oidc_discovery_url: provider.issuer,
      oidc_client_id: 'hangar',
      oidc_response_mode: 'form_post',
      oidc_response_types: ['id_token'],
    });
    expect(config.status).toBe(204);
    const role = await s.v('POST', 'auth/jwt/role/web', { user_claim: 'sub', allowed_redirect_uris: [REDIRECT], max_age: MAX_AGE });
    expect(role.status).toBe(204);
  });
  afterAll(async () => {
    await s.close();
    await provider.close();
  });

  /** auth_url, then the form_post callback with an ID token carrying the given claims. */
  const loginWith = async (claims: Record<string, unknown>) => {
    const started = await s.v('POST', 'auth/jwt/oidc/auth_url', { role: 'web', redirect_uri: REDIRECT }, null);
    expect(started.status).toBe(200);
    const url = new URL(started.body.data.auth_url);
    expect(url.searchParams.get('max_age')).toBe(String(MAX_AGE));
    const idToken = await sign(key, { iss: provider.issuer, aud: 'hangar', sub: 'alice', nonce: url.searchParams.get('nonce'), ...claims }, s.clock.now());
    return s.v('POST', 'auth/jwt/oidc/callback', { state: url.searchParams.get('state'), id_token: idToken }, null);
  };
  const nowSec = () => Math.floor(s.clock.now() / 1000);

  test('an ID token whose auth_time is older than max_age plus 60 s of skew is refused', async () => {
    const stale = await loginWith({ auth_time: nowSec() - MAX_AGE - 61 });
    expect(stale.status).toBe(400);
    expect(stale.body.errors).toEqual(['auth_time is older than max_age: log in at the provider again']);
  });

  test('within max_age plus the skew the login succeeds', async () => {
    const fresh = await loginWith({ auth_time: nowSec() - MAX_AGE - 59 });
    expect(fresh.status).toBe(200);
    expect(fresh.body.auth.client_token).toMatch(/^hvs\./);
  });

  test('without auth_time a max_age role refuses the ID token', async () => {
    const res = await loginWith({});
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual(['auth_time claim is required when max_age is set']);
  });
});
