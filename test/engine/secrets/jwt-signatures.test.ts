import { constants, generateKeyPairSync, KeyObject, sign as cryptoSign } from 'node:crypto';
import { startSecrets, SecretsTestServer } from './helpers';
import { jwksServer, newKey, sign, TestKey } from './jwt-helpers';

// Signature checks of JWT logins (node:crypto, src/engine/secrets/engines/jwt/jws.ts): every
// algorithm, and the edges the verifier decides itself. Claims and storage are covered in jwt.test.ts.

const ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** A compact JWS with any header, signed by a node:crypto key as `alg` says (or as `signAs` says). */
function craft(privateKey: KeyObject, header: Record<string, unknown>, claims: Record<string, unknown>, signAs = String(header.alg)): string {
  const input = `${enc(header)}.${enc(claims)}`;
  const hash = signAs === 'EdDSA' ? null : `sha${signAs.slice(2)}`;
  const pss = { key: privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST };
  const options = signAs.startsWith('ES') ? { key: privateKey, dsaEncoding: 'ieee-p1363' as const } : signAs.startsWith('PS') ? pss : privateKey;
  return `${input}.${cryptoSign(hash, Buffer.from(input), options).toString('base64url')}`;
}

/** The node:crypto private key of a test key (made through WebCrypto). */
const nodeKey = (k: TestKey) => KeyObject.from(k.privateKey as unknown as Parameters<typeof KeyObject.from>[0]);

describe('auth/jwt signature checks', () => {
  let s: SecretsTestServer;
  const keys = new Map<string, TestKey>();
  const login = (mount: string, jwt: string) => s.v('POST', `auth/${mount}/login`, { role: 'r', jwt }, null);
  const claims = () => ({ sub: 'svc', aud: 'hangar', iat: Math.floor(s.clock.now() / 1000), exp: Math.floor(s.clock.now() / 1000) + 300 });
  const mount = async (name: string, config: Record<string, unknown>) => {
    await s.v('POST', `sys/auth/${name}`, { type: 'jwt' });
    const res = await s.v('POST', `auth/${name}/config`, config);
    expect(res.status).toBe(204);
    expect((await s.v('POST', `auth/${name}/role/r`, { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'hangar' })).status).toBe(204);
  };
  const error = async (name: string, jwt: string) => {
    const res = await login(name, jwt);
    expect(res.status).toBe(400);
    return res.body.errors[0] as string;
  };

  beforeAll(async () => {
    s = await startSecrets('sqlite');
    for (const alg of ALGS) keys.set(alg, await newKey(alg.toLowerCase(), alg));
    await mount('pem', { jwt_validation_pubkeys: [...keys.values()].map((k) => k.publicPem), jwt_supported_algs: ALGS });
  });
  afterAll(() => s.close());

  test('every supported algorithm verifies with its configured PEM key', async () => {
    for (const [alg, key] of keys) {
      const res = await login('pem', await sign(key, { sub: 'svc', aud: 'hangar' }, s.clock.now()));
      expect({ alg, status: res.status }).toEqual({ alg, status: 200 });
    }
  });

  test('a signature that does not fit the alg in the header is refused (no algorithm confusion)', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await mount('confusion', { jwt_validation_pubkeys: [rsa.publicKey.export({ type: 'spki', format: 'pem' })], jwt_supported_algs: ['RS256', 'PS256'] });
    expect((await login('confusion', craft(rsa.privateKey, { alg: 'RS256' }, claims()))).status).toBe(200);
    expect((await login('confusion', craft(rsa.privateKey, { alg: 'PS256' }, claims()))).status).toBe(200);
    // PKCS#1 v1.5 signature presented as PSS, and the other way round.
    expect(await error('confusion', craft(rsa.privateKey, { alg: 'PS256' }, claims(), 'RS256'))).toMatch(/signature is invalid/);
    expect(await error('confusion', craft(rsa.privateKey, { alg: 'RS256' }, claims(), 'PS256'))).toMatch(/signature is invalid/);
    // An EC signature under an RSA alg: no configured key of that type signed it.
    expect(await error('confusion', craft(ec.privateKey, { alg: 'RS256' }, claims(), 'ES256'))).toMatch(/signature is invalid/);
    // A configured P-256 key's signature presented as ES384 (whose key is P-384).
    expect(await error('pem', craft(nodeKey(keys.get('ES256')!), { alg: 'ES384' }, claims(), 'ES256'))).toMatch(/signature is invalid/);
  });

  test('tampered tokens, RSA keys under 2048 bits, and malformed tokens are refused with a clear error', async () => {
    const es = keys.get('ES256')!;
    const good = await sign(es, { sub: 'svc', aud: 'hangar' }, s.clock.now());
    const [h, , sig] = good.split('.');
    expect(await error('pem', `${h}.${enc({ ...claims(), sub: 'admin' })}.${sig}`)).toMatch(/signature is invalid/);
    expect(await error('pem', `${h}.${good.split('.')[1]}.${sig.slice(0, -10)}`)).toMatch(/signature is invalid/);
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 });
    await mount('small', { jwt_validation_pubkeys: [small.publicKey.export({ type: 'spki', format: 'pem' })] });
    expect(await error('small', craft(small.privateKey, { alg: 'RS256' }, claims()))).toMatch(/signature is invalid/);

    const cases: Array<[string, RegExp]> = [
      [`${h}.${good.split('.')[1]}`, /not a compact JWT/],
      [`${good}.extra`, /not a compact JWT/],
      [`${enc([1])}.${enc(claims())}.${sig}`, /not a compact JWT/],
      [`${enc({ typ: 'JWT' })}.${enc(claims())}.${sig}`, /alg "none" is refused/],
      [`${enc({ alg: 'NONE' })}.${enc(claims())}.`, /alg "none" is refused/],
      [`${enc({ alg: 'HS256' })}.${enc(claims())}.${sig}`, /JWT alg "HS256" is not allowed; jwt_supported_algs: RS256/],
      [craft(nodeKey(es), { alg: 'ES256', crit: ['exp'], exp: 1 }, claims()), /"crit" header parameter/],
      [craft(nodeKey(es), { alg: 'ES256' }, [claims()] as never), /payload is not a claims object/],
      [`${h}.${Buffer.from('{not json').toString('base64url')}.${sig}`, /signature is invalid/],
      [`${h}.${good.split('.')[1]}.${sig}!`, /signature is not base64url/],
    ];
    for (const [jwt, message] of cases) expect(await error('pem', jwt)).toMatch(message);
  });

  test('JWKS: the kid, the key type, use and alg select the keys; without a kid every fitting key is tried', async () => {
    const a = await newKey('a', 'ES256');
    const b = await newKey('b', 'ES256');
    const rs = await newKey('rs', 'RS256');
    const encOnly = { ...(await newKey('enc', 'ES256')) };
    (encOnly as { publicJwk: Record<string, unknown> }).publicJwk = { ...encOnly.publicJwk, use: 'enc' };
    const otherAlg = { ...(await newKey('other', 'ES256')) };
    (otherAlg as { publicJwk: Record<string, unknown> }).publicJwk = { ...otherAlg.publicJwk, alg: 'ES384' };
    const jwks = await jwksServer([rs, a, b, encOnly, otherAlg]);
    try {
      await mount('set', { jwks_url: jwks.url, jwt_supported_algs: ['RS256', 'ES256'] });
      for (const k of [a, b, rs]) expect((await login('set', await sign(k, { sub: 'svc', aud: 'hangar' }, s.clock.now()))).status).toBe(200);
      // No kid: both ES256 keys are candidates, the one that signed verifies.
      expect((await login('set', craft(nodeKey(b), { alg: 'ES256' }, claims()))).status).toBe(200);
      // A kid naming a key of another type, a key for encryption only, a key bound to another alg.
      expect(await error('set', await sign(a, { sub: 'svc', aud: 'hangar' }, s.clock.now(), { kid: 'rs' }))).toMatch(/no key in the provider's JWKS matches this token \(kid "rs"\)/);
      expect(await error('set', await sign(encOnly, { sub: 'svc', aud: 'hangar' }, s.clock.now()))).toMatch(/no key .* \(kid "enc"\)/);
      expect(await error('set', await sign(otherAlg, { sub: 'svc', aud: 'hangar' }, s.clock.now()))).toMatch(/no key .* \(kid "other"\)/);
      // The kid of one key, the signature of another.
      expect(await error('set', await sign(a, { sub: 'svc', aud: 'hangar' }, s.clock.now(), { kid: 'b' }))).toMatch(/signature is invalid/);
      // Claims are still checked after a good signature.
      const now = Math.floor(s.clock.now() / 1000);
      expect(await error('set', await sign(a, { sub: 'svc', aud: 'hangar', exp: now - 600 }, s.clock.now()))).toMatch(/token is expired/);
      expect(await error('set', await sign(a, { sub: 'svc', aud: 'hangar', nbf: now + 600 }, s.clock.now()))).toMatch(/not valid yet/);
    } finally {
      await jwks.close();
    }
  });
});
