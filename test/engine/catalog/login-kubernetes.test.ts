import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { AddressInfo } from 'node:net';
import { CatalogServer, startCatalogServer } from './helpers';
import { STORAGE_KINDS, tempDir } from '../../helpers/storage';
import { makeCa } from '../../helpers/tls';

const REVIEWER = 'reviewer-service-account-jwt';

/**
 * A small Kubernetes API server that answers TokenReview (a real HTTP server on loopback): tokens
 * `sa:<namespace>:<name>` are authenticated service accounts, anything else is not. Over HTTPS
 * with `tls` (a certificate for 127.0.0.1).
 */
async function tokenReviewServer(tls?: { cert: string; key: string }): Promise<{ url: string; reviews: () => number; server: Server }> {
  let reviews = 0;
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.url !== '/apis/authentication.k8s.io/v1/tokenreviews' || req.method !== 'POST' || req.headers.authorization !== `Bearer ${REVIEWER}`) {
        res.statusCode = 401;
        res.end(JSON.stringify({ kind: 'Status', status: 'Failure', code: 401 }));
        return;
      }
      reviews++;
      const token = (JSON.parse(body) as { spec: { token: string } }).spec.token;
      const [kind, ns, name] = token.split(':');
      const status = kind === 'sa' ? { authenticated: true, user: { username: `system:serviceaccount:${ns}:${name}`, uid: `uid-${name}` } } : { authenticated: false, error: 'invalid bearer token' };
      res.statusCode = 201;
      res.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', status }));
    });
  };
  const server = tls ? createHttpsServer(tls, handler) : createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http${tls ? 's' : ''}://127.0.0.1:${(server.address() as AddressInfo).port}`, reviews: () => reviews, server };
}

describe.each(STORAGE_KINDS)('ACL login with a kubernetes auth method (%s)', (kind) => {
  let s: CatalogServer;
  let k8s: Awaited<ReturnType<typeof tokenReviewServer>>;
  beforeAll(async () => {
    k8s = await tokenReviewServer();
    s = await startCatalogServer(kind);
  });
  afterAll(async () => {
    await s.close();
    await new Promise((resolve) => k8s.server.close(resolve));
  });

  test('config is checked; a reviewed service account logs in through binding rules (service and policy); others are refused', async () => {
    for (const [config, message] of [
      [{ Host: 'not a url', ServiceAccountJWT: REVIEWER }, /Host "not a url" is not a host, host:port or http\(s\) URL/],
      [{ Host: k8s.url }, /Config\.ServiceAccountJWT/],
      [{ Host: k8s.url, ServiceAccountJWT: REVIEWER, CACert: 'nope' }, /CACert is not a PEM certificate/],
      [{ Host: k8s.url, ServiceAccountJWT: REVIEWER, Colour: 'red' }, /unknown field "Colour"/],
    ] as const) {
      const res = await s.root('PUT', '/v1/acl/auth-method', { Name: 'k8s-bad', Type: 'kubernetes', Config: config });
      expect([res.status, res.text]).toEqual([400, expect.stringMatching(message)]);
    }
    const method = await s.root('PUT', '/v1/acl/auth-method', { Name: 'k8s', Type: 'kubernetes', Config: { Host: k8s.url, ServiceAccountJWT: REVIEWER } });
    expect(method.status).toBe(200);
    // The reviewer token is sealed at rest, and answered on reads like the rest of Config.
    const stored = await s.engine.storage.tx((db) => db.get<{ config: string }>("SELECT config FROM catalog_acl_auth_methods WHERE name = 'k8s'"));
    expect(stored!.config).not.toContain(REVIEWER);
    expect((await s.root('GET', '/v1/acl/auth-method/k8s')).body.Config).toEqual({ Host: k8s.url, ServiceAccountJWT: REVIEWER });
    const policy = await s.root('PUT', '/v1/acl/policy', { Name: 'k8s-apps', Rules: 'key_prefix "apps/" { policy = "write" }' });
    const rules = [
      { AuthMethod: 'k8s', BindType: 'service', BindName: '${serviceaccount.name}', Selector: 'serviceaccount.namespace == "apps"' },
      { AuthMethod: 'k8s', BindType: 'policy', BindName: 'k8s-apps', Selector: 'serviceaccount.namespace == "apps"' },
    ];
    for (const rule of rules) expect((await s.root('PUT', '/v1/acl/binding-rule', rule)).status).toBe(200);
    const badSelector = await s.root('PUT', '/v1/acl/binding-rule', { ...rules[0], Selector: 'value.user == "x"' });
    expect([badSelector.status, badSelector.text]).toEqual([400, expect.stringContaining('Selector "value.user" is not valid')]);

    const login = await s.as(null, 'POST', '/v1/acl/login', { AuthMethod: 'k8s', BearerToken: 'sa:apps:web' });
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({ AuthMethod: 'k8s', ServiceIdentities: [{ ServiceName: 'web' }], Policies: [{ ID: policy.body.ID, Name: 'k8s-apps' }] });
    expect((await s.as(login.body.SecretID, 'PUT', '/v1/kv/apps/web', 'x')).status).toBe(200);
    expect(k8s.reviews()).toBe(1);

    // No rule matches another namespace; an unauthenticated token is refused with the reviewer's reason.
    const other = await s.as(null, 'POST', '/v1/acl/login', { AuthMethod: 'k8s', BearerToken: 'sa:batch:job' });
    expect([other.status, other.text]).toEqual([403, 'Permission denied']);
    const refused = await s.as(null, 'POST', '/v1/acl/login', { AuthMethod: 'k8s', BearerToken: 'garbage' });
    expect([refused.status, refused.text]).toEqual([403, 'Permission denied: lookup failed: invalid bearer token']);
    // A wrong reviewer token: the API server answers 401, the login is refused.
    await s.root('PUT', '/v1/acl/auth-method/k8s', { Name: 'k8s', Type: 'kubernetes', Config: { Host: k8s.url, ServiceAccountJWT: 'wrong' } });
    const unreviewed = await s.as(null, 'POST', '/v1/acl/login', { AuthMethod: 'k8s', BearerToken: 'sa:apps:web' });
    expect([unreviewed.status, unreviewed.text]).toEqual([403, 'Permission denied: TokenReview answered 401']);
  });

  test('a CA certificate (CACert) is accepted and trusted for the TokenReview API over HTTPS; another CA is not', async () => {
    const dir = tempDir();
    const { ca, cert, key } = makeCa(dir, true);
    const https = await tokenReviewServer({ cert: cert!, key: key! });
    try {
      const method = await s.root('PUT', '/v1/acl/auth-method', {
        Name: 'k8s-tls', Type: 'kubernetes', Config: { Host: https.url, ServiceAccountJWT: REVIEWER, CACert: ca },
      });
      expect([method.status, method.text]).toEqual([200, expect.any(String)]);
      expect((await s.root('GET', '/v1/acl/auth-method/k8s-tls')).body.Config.CACert).toBe(ca);
      await s.root('PUT', '/v1/acl/binding-rule', { AuthMethod: 'k8s-tls', BindType: 'service', BindName: '${serviceaccount.name}' });
      const login = await s.as(null, 'POST', '/v1/acl/login', { AuthMethod: 'k8s-tls', BearerToken: 'sa:apps:tls-web' });
      expect(login.status).toBe(200);
      expect(https.reviews()).toBe(1);

      const other = makeCa(tempDir(), false).ca;
      expect((await s.root('PUT', '/v1/acl/auth-method', {
        Name: 'k8s-other-ca', Type: 'kubernetes', Config: { Host: https.url, ServiceAccountJWT: REVIEWER, CACert: other },
      })).status).toBe(200);
      await s.root('PUT', '/v1/acl/binding-rule', { AuthMethod: 'k8s-other-ca', BindType: 'service', BindName: '${serviceaccount.name}' });
      const refused = await s.as(null, 'POST', '/v1/acl/login', { AuthMethod: 'k8s-other-ca', BearerToken: 'sa:apps:tls-web' });
      expect(refused.status).not.toBe(200);
      expect(https.reviews()).toBe(1);
    } finally {
      await new Promise((resolve) => https.server.close(resolve));
    }
  });
});
