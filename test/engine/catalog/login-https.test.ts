import { createServer, Server } from 'node:https';
import { AddressInfo } from 'node:net';
import { CatalogServer, startCatalogServer } from './helpers';
import { ManualClock } from '../../../src/engine/clock';
import { jose } from '../../../src/engine/jwt-keys';
import { STORAGE_KINDS, tempDir } from '../../helpers/storage';
import { makeCa } from '../../helpers/tls';

/**
 * Login with keys fetched over HTTPS from an issuer whose certificate a private CA signed: through
 * OIDCDiscoveryURL (with OIDCDiscoveryCACert) and through JWKSURL (with JWKSCACert). The CA and
 * the certificate are made here with openssl.
 */

describe.each(STORAGE_KINDS)('ACL login with keys fetched over HTTPS from a private CA (%s)', (kind) => {
  const clock = new ManualClock();
  let s: CatalogServer;
  let issuer: Server;
  let base: string;
  let ca: string;
  let otherCa: string;
  let privateKey: CryptoKey;

  beforeAll(async () => {
    const pki = makeCa(tempDir(), true);
    ca = pki.ca;
    otherCa = makeCa(tempDir(), false).ca;
    const { generateKeyPair, exportJWK } = jose();
    const pair = await generateKeyPair('RS256', { extractable: true });
    privateKey = pair.privateKey;
    const jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] };
    issuer = createServer({ cert: pki.cert, key: pki.key }, (req, res) => {
      const documents: Record<string, unknown> = {
        '/.well-known/openid-configuration': { issuer: base, jwks_uri: `${base}/keys` },
        '/keys': jwks,
      };
      const doc = documents[req.url ?? ''];
      res.statusCode = doc ? 200 : 404;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(doc ?? { error: 'not found' }));
    });
    await new Promise<void>((resolve) => issuer.listen(0, '127.0.0.1', resolve));
    base = `https://127.0.0.1:${(issuer.address() as AddressInfo).port}`;
    s = await startCatalogServer(kind, { clock });
    const methods = [
      { Name: 'oidc', Config: { OIDCDiscoveryURL: base, OIDCDiscoveryCACert: ca, BoundIssuer: base } },
      { Name: 'jwks', Config: { JWKSURL: `${base}/keys`, JWKSCACert: ca, BoundIssuer: base } },
      { Name: 'wrong-ca', Config: { JWKSURL: `${base}/keys`, JWKSCACert: otherCa } },
      { Name: 'system-ca', Config: { OIDCDiscoveryURL: base } },
    ];
    for (const method of methods) {
      expect((await s.root('PUT', '/v1/acl/auth-method', { Type: 'jwt', ...method })).status).toBe(200);
      const rule = { AuthMethod: method.Name, BindType: 'service', BindName: `svc-${method.Name}` };
      expect((await s.root('PUT', '/v1/acl/binding-rule', rule)).status).toBe(200);
    }
  });
  afterAll(async () => {
    await s?.close();
    issuer?.close();
  });

  const login = async (method: string) => {
    const now = Math.floor(clock.now() / 1000);
    const jwt = await new (jose().SignJWT)({ iss: base, sub: 'alice', iat: now, exp: now + 300 })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .sign(privateKey);
    return s.as(null, 'POST', '/v1/acl/login', { AuthMethod: method, BearerToken: jwt });
  };

  test('OIDCDiscoveryURL: the discovery document, then its jwks_uri, trusted through OIDCDiscoveryCACert', async () => {
    const res = await login('oidc');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ AuthMethod: 'oidc', ServiceIdentities: [{ ServiceName: 'svc-oidc' }] });
  });

  test('JWKSURL trusted through JWKSCACert', async () => {
    const res = await login('jwks');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ AuthMethod: 'jwks', ServiceIdentities: [{ ServiceName: 'svc-jwks' }] });
  });

  test('another CA, or none (the system CAs), is refused with a clear error and no token', async () => {
    const tokens = (await s.root('GET', '/v1/acl/tokens')).body.length;
    for (const [method, url] of [['wrong-ca', `${base}/keys`], ['system-ca', `${base}/.well-known/openid-configuration`]]) {
      const res = await login(method);
      expect(res.status).toBe(403);
      expect(res.text).toContain(`error fetching keys from ${url}`);
      expect(res.text).toMatch(/certificate/i);
    }
    expect((await s.root('GET', '/v1/acl/tokens')).body.length).toBe(tokens);
  });
});
