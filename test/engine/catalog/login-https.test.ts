import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:https';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CatalogServer, startCatalogServer } from './helpers';
import { ManualClock } from '../../../src/engine/clock';
import { jose } from '../../../src/engine/jwt-keys';
import { STORAGE_KINDS, tempDir } from '../../helpers/storage';

/**
 * Login with keys fetched over HTTPS from an issuer whose certificate a private CA signed: through
 * OIDCDiscoveryURL (with OIDCDiscoveryCACert) and through JWKSURL (with JWKSCACert). The CA and
 * the certificate are made here with openssl.
 */

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A CA (ca.pem) and, when `server`, a certificate for 127.0.0.1 that it signed (server.pem, server.key). */
function makeCa(dir: string, server: boolean): { ca: string; cert?: string; key?: string } {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(dir, 'req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=Hangar test CA');
  const ca = readFileSync(join(dir, 'ca.pem'), 'utf8');
  if (!server) return { ca };
  openssl(dir, 'req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(dir, 'x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '1', '-extfile', 'san.ext');
  return { ca, cert: readFileSync(join(dir, 'server.pem'), 'utf8'), key: readFileSync(join(dir, 'server.key'), 'utf8') };
}

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
