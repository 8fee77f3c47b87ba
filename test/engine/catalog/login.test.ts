import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { CatalogServer, startCatalogServer } from './helpers';
import { ManualClock } from '../../../src/engine/clock';
import { jose } from '../../../src/engine/jwt-keys';
import { STORAGE_KINDS } from '../../helpers/storage';

type Key = { privateKey: CryptoKey; publicPem: string; jwk: Record<string, unknown> };

async function keyPair(alg: 'RS256' | 'ES256', kid: string): Promise<Key> {
  const { generateKeyPair, exportSPKI, exportJWK } = jose();
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { privateKey, publicPem: await exportSPKI(publicKey), jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** A JWKS served over HTTP on loopback; `keys` may be swapped to rotate. */
async function jwksServer(keys: () => Key[]): Promise<{ url: string; fetches: () => number; server: Server }> {
  let count = 0;
  const server = createServer((_req, res) => {
    count++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: keys().map((k) => k.jwk) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`, fetches: () => count, server };
}

describe.each(STORAGE_KINDS)('ACL login and logout with jwt auth methods (%s)', (kind) => {
  const clock = new ManualClock();
  let s: CatalogServer;
  let rsa: Key;
  let ec: Key;
  let rotated: Key;
  let served: Key[];
  let jwks: Awaited<ReturnType<typeof jwksServer>>;
  const now = () => Math.floor(clock.now() / 1000);

  const sign = (key: Key, claims: Record<string, unknown>, alg: string = 'RS256', kid?: string) =>
    new (jose().SignJWT)({ iss: 'https://issuer.example', aud: 'hangar', iat: now(), exp: now() + 300, ...claims })
      .setProtectedHeader({ alg, ...(kid ? { kid } : {}) })
      .sign(key.privateKey);
  const login = (method: string, bearer: string, extra: Record<string, unknown> = {}, q = '') =>
    s.as(null, 'POST', `/v1/acl/login${q}`, { AuthMethod: method, BearerToken: bearer, ...extra });

  beforeAll(async () => {
    rsa = await keyPair('RS256', 'k1');
    ec = await keyPair('ES256', 'k-ec');
    rotated = await keyPair('RS256', 'k2');
    served = [rsa];
    jwks = await jwksServer(() => served);
    s = await startCatalogServer(kind, { clock });
    const config = {
      BoundIssuer: 'https://issuer.example',
      BoundAudiences: ['hangar'],
      ClaimMappings: { 'sub': 'user', '/team/name': 'team' },
      ListClaimMappings: { groups: 'groups' },
    };
    const create = async (body: Record<string, unknown>) => {
      const res = await s.root('PUT', '/v1/acl/auth-method', { Type: 'jwt', ...body });
      expect(res.status).toBe(200);
    };
    await create({ Name: 'static', Config: { ...config, JWTValidationPubKeys: [ec.publicPem, rsa.publicPem], JWTSupportedAlgs: ['RS256', 'ES256'] } });
    await create({ Name: 'remote', MaxTokenTTL: '10m', TokenLocality: 'global', Config: { ...config, JWKSURL: jwks.url } });
    await create({ Name: 'unbound', Config: { ...config, JWTValidationPubKeys: [rsa.publicPem] } });
    expect((await s.root('PUT', '/v1/acl/role', { Name: 'web-admins' })).status).toBe(200);
    const rules = [
      { AuthMethod: 'static', Selector: 'value.team == web', BindType: 'service', BindName: 'svc-${value.user}' },
      { AuthMethod: 'static', Selector: '"admins" in list.groups', BindType: 'role', BindName: 'web-admins' },
      { AuthMethod: 'static', Selector: '"ops" in list.groups', BindType: 'role', BindName: 'no-such-role' },
      { AuthMethod: 'static', Selector: 'value.user == "node1"', BindType: 'node', BindName: '${value.user}' },
      { AuthMethod: 'remote', BindType: 'service', BindName: 'remote-svc' },
    ];
    for (const rule of rules) expect((await s.root('PUT', '/v1/acl/binding-rule', rule)).status).toBe(200);
  });
  afterAll(async () => {
    await s.close();
    jwks.server.close();
  });

  test('a login maps claims through the binding rules into a token; logout deletes it', async () => {
    const jwt = await sign(rsa, { sub: 'alice', team: { name: 'web' }, groups: ['admins', 'ops'] });
    const res = await login('static', jwt, { Meta: { pod: 'p1' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      Description: 'token created via login: {"pod":"p1"}',
      AuthMethod: 'static',
      Local: true,
      Namespace: 'default',
      ServiceIdentities: [{ ServiceName: 'svc-alice' }],
      Roles: [{ Name: 'web-admins' }],
    });
    expect(res.body.Roles).toHaveLength(1); // the role that does not exist is ignored
    expect(res.body.NodeIdentities).toBeUndefined();
    const secret = res.body.SecretID as string;
    expect((await s.as(secret, 'GET', '/v1/acl/token/self')).body.AccessorID).toBe(res.body.AccessorID);
    expect((await s.root('GET', '/v1/acl/tokens?authmethod=static')).body.map((t: any) => t.AccessorID)).toContain(res.body.AccessorID);

    const logout = await s.as(secret, 'POST', '/v1/acl/logout');
    expect(logout).toMatchObject({ status: 200, body: true });
    expect((await s.as(secret, 'GET', '/v1/acl/token/self')).status).toBe(403);
    expect((await s.as(secret, 'POST', '/v1/acl/logout')).text).toBe('ACL not found');
  });

  test('node identities are in the local datacenter; ES256 with the second static key', async () => {
    const res = await login('static', await sign(ec, { sub: 'node1' }, 'ES256'));
    expect(res.status).toBe(200);
    expect(res.body.NodeIdentities).toEqual([{ NodeName: 'node1', Datacenter: 'dc1' }]);
  });

  test('no matching rule, or a token refused, is 403; nothing is stored', async () => {
    const before = (await s.root('GET', '/v1/acl/tokens')).body.length;
    const cases: [string, string, RegExp][] = [
      ['static', await sign(rsa, { sub: 'bob', team: { name: 'db' } }), /^Permission denied$/],
      ['unbound', await sign(rsa, { sub: 'bob' }), /^Permission denied$/],
      ['static', await sign(rotated, { sub: 'alice', team: { name: 'web' } }), /signature verification failed/],
      ['static', await sign(rsa, { sub: 'alice', team: { name: 'web' }, exp: now() - 211 }), /expired/],
      ['static', await sign(rsa, { sub: 'alice', team: { name: 'web' }, nbf: now() + 300 }), /not valid yet/],
      ['static', await sign(rsa, { sub: 'alice', team: { name: 'web' }, iss: 'https://evil.example' }), /issuer/],
      ['static', await sign(rsa, { sub: 'alice', team: { name: 'web' }, aud: ['other'] }), /audience/],
      ['unbound', await sign(ec, { sub: 'alice' }, 'ES256'), /signature|alg/i],
    ];
    // alg none: an unsigned token with the same claims.
    const payload = Buffer.from(JSON.stringify({ iss: 'https://issuer.example', aud: 'hangar', sub: 'alice', team: { name: 'web' } })).toString('base64url');
    cases.push(['static', `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`, /Permission denied: failed to verify token/]);
    for (const [method, jwt, message] of cases) {
      const res = await login(method, jwt);
      expect([res.status, res.text]).toEqual([403, expect.stringMatching(message)]);
    }
    // Within the leeways (150 s for exp plus 60 s of skew) an expired token still logs in.
    expect((await login('static', await sign(rsa, { sub: 'alice', team: { name: 'web' }, exp: now() - 200 }))).status).toBe(200);
    expect((await s.root('GET', '/v1/acl/tokens')).body.length).toBe(before + 1);
  });

  test('the method and the token are in the request namespace (ns, then the namespace header)', async () => {
    expect((await s.root('PUT', '/v1/namespace', { Name: 'team-l' })).status).toBe(200);
    expect((await s.root('PUT', '/v1/acl/auth-method?ns=team-l', { Name: 'static', Type: 'jwt', Config: { JWTValidationPubKeys: [rsa.publicPem] } })).status).toBe(200);
    expect((await s.root('PUT', '/v1/acl/binding-rule?ns=team-l', { AuthMethod: 'static', BindType: 'service', BindName: 'team-svc' })).status).toBe(200);
    const jwt = await sign(rsa, { sub: 'dave' });
    const viaQuery = await login('static', jwt, {}, '?ns=team-l');
    expect(viaQuery.body).toMatchObject({ Namespace: 'team-l', ServiceIdentities: [{ ServiceName: 'team-svc' }] });
    const viaHeader = await s.as(null, 'POST', '/v1/acl/login', { AuthMethod: 'static', BearerToken: jwt }, { 'x-consul-namespace': 'team-l' });
    expect(viaHeader.body).toMatchObject({ Namespace: 'team-l' });
    // In the default namespace the same JWT meets the other method of that name and its rules.
    expect((await login('static', jwt)).status).toBe(403);
  });

  test('bad requests name the field', async () => {
    expect((await login('', 'x')).text).toBe('Invalid Login request: Missing auth method name');
    expect((await login('static', '')).text).toBe('Invalid Login request: Missing auth method bearer token');
    expect((await login('missing', 'a.b.c'))).toMatchObject({ status: 403, text: expect.stringMatching(/ACL not found/) });
    expect((await login('static', 'a.b.c', { Bogus: 1 }))).toMatchObject({ status: 400, text: expect.stringMatching(/unknown field "Bogus"/) });
    expect((await login('static', 'a.b.c', { Meta: { k: 1 } })).status).toBe(400);
    expect((await login('static', 'not-a-jwt')).text).toMatch(/not a compact JWT/);
    expect(await login('static', 5 as unknown as string)).toMatchObject({ status: 400, text: expect.stringContaining('BearerToken') });
    expect((await s.as(null, 'POST', '/v1/acl/login', [1])).status).toBe(400);
    expect((await s.root('POST', '/v1/acl/logout')).text).toBe('Permission denied');
    expect((await s.as(null, 'POST', '/v1/acl/logout')).text).toBe('ACL not found');
  });

  test('JWKS: fetched once, cached, fetched again for an unknown kid; TTL and locality from the method', async () => {
    const first = await login('remote', await sign(rsa, { sub: 'carol' }, 'RS256', 'k1'));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ ServiceIdentities: [{ ServiceName: 'remote-svc' }], Local: false });
    expect(Date.parse(first.body.ExpirationTime) - clock.now()).toBe(600_000);
    const fetched = jwks.fetches();
    expect((await login('remote', await sign(rsa, { sub: 'carol' }, 'RS256', 'k1'))).status).toBe(200);
    expect(jwks.fetches()).toBe(fetched);
    served = [rsa, rotated];
    // An unknown key id fetches the set again, at most every 10 s.
    const rotatedJwt = await sign(rotated, { sub: 'carol' }, 'RS256', 'k2');
    expect((await login('remote', rotatedJwt)).text).toMatch(/no key of the JWKS matches/);
    expect(jwks.fetches()).toBe(fetched);
    clock.advance(10_000);
    expect((await login('remote', rotatedJwt)).status).toBe(200);
    expect(jwks.fetches()).toBe(fetched + 1);
    const unknown = await login('remote', await sign(rsa, { sub: 'carol' }, 'RS256', 'k9'));
    expect(unknown).toMatchObject({ status: 403, text: expect.stringMatching(/no key of the JWKS matches/) });
    expect(jwks.fetches()).toBe(fetched + 1);
    // The token expires with the engine clock.
    clock.advance(590_001);
    expect((await s.as(first.body.SecretID, 'GET', '/v1/acl/token/self')).status).toBe(403);
  });
});
