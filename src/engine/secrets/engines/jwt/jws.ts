import { constants, createPublicKey, KeyObject, verify } from 'node:crypto';
import { badInput } from '../../core/request';

/**
 * Compact JWS signatures checked with node:crypto's synchronous `verify` and KeyObjects made once
 * per key. jose went through WebCrypto: argument normalisation, a CryptoKey and a hand-off to the
 * thread pool and back on every check, 1.3–1.8x the signature's own CPU (docs/performance.md).
 */

/** How a JWS alg verifies (RFC 7518 §3, RFC 8037): digest, key type, curve, padding. */
interface AlgSpec {
  readonly hash: string | null;
  readonly kty: 'RSA' | 'EC' | 'OKP';
  readonly crv?: readonly string[];
  readonly pss?: boolean;
}

const rsa = (bits: number, pss = false): AlgSpec => ({ hash: `sha${bits}`, kty: 'RSA', pss });
const ec = (bits: number, crv: string): AlgSpec => ({ hash: `sha${bits}`, kty: 'EC', crv: [crv] });
const ALGS: Readonly<Record<string, AlgSpec>> = {
  RS256: rsa(256),
  RS384: rsa(384),
  RS512: rsa(512),
  PS256: rsa(256, true),
  PS384: rsa(384, true),
  PS512: rsa(512, true),
  ES256: ec(256, 'P-256'),
  ES384: ec(384, 'P-384'),
  ES512: ec(512, 'P-521'),
  EdDSA: { hash: null, kty: 'OKP', crv: ['Ed25519', 'Ed448'] },
};

/** The curve names node:crypto reports for each JWK curve. */
const NODE_CURVES: Readonly<Record<string, string>> = { 'P-256': 'prime256v1', 'P-384': 'secp384r1', 'P-521': 'secp521r1' };
const MIN_RSA_BITS = 2048;

export interface Jws {
  readonly alg: string;
  /** The header's `kid` as given (a key set only matches a string). */
  readonly kid: unknown;
  /** `header.payload` as sent: what the signature covers. */
  readonly signingInput: Buffer;
  readonly signature: Buffer;
  readonly payload: string;
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * A compact JWS split and its header checked: `alg: none` is refused, and so are algorithms
 * outside `algorithms` and `crit` extensions (none is understood). Messages say which.
 */
export function parseJws(token: string, algorithms: readonly string[]): Jws {
  const parts = token.split('.');
  let header: unknown;
  try {
    if (parts.length !== 3 || !parts[0] || !BASE64URL.test(parts[0])) throw new Error();
    header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
  } catch {
    throw badInput('the token is not a compact JWT (header.payload.signature)');
  }
  if (!header || typeof header !== 'object' || Array.isArray(header)) throw badInput('the token is not a compact JWT (header.payload.signature)');
  const { alg, kid, crit } = header as Record<string, unknown>;
  if (typeof alg !== 'string' || !alg || alg.toLowerCase() === 'none') throw badInput('JWT with alg "none" is refused: tokens must be signed');
  if (!algorithms.includes(alg)) throw badInput(`JWT alg "${alg}" is not allowed; jwt_supported_algs: ${algorithms.join(', ')}`);
  if (!ALGS[alg]) throw badInput(`JWT alg "${alg}" is not supported`);
  if (crit !== undefined) throw badInput('invalid JWT: the "crit" header parameter names extensions that are not supported');
  if (!BASE64URL.test(parts[1])) throw badInput('invalid JWT: the payload is not base64url');
  if (!parts[2] || !BASE64URL.test(parts[2])) throw badInput('invalid JWT: the signature is not base64url');
  return {
    alg,
    kid,
    signingInput: Buffer.from(`${parts[0]}.${parts[1]}`, 'latin1'),
    signature: Buffer.from(parts[2], 'base64url'),
    payload: parts[1],
  };
}

// `asymmetricKeyDetails` builds a new object on every read: read once per key.
const keyDetails = new WeakMap<KeyObject, { type?: string; bits?: number; curve?: string }>();

/**
 * Whether a public key can verify signatures of a JWS alg: RS* an RSA key of 2048 bits or more
 * (PS* also an RSA-PSS one), ES* an EC key on the alg's curve, EdDSA an Ed25519 or Ed448 key.
 */
export function keyFitsAlg(key: KeyObject, alg: string): boolean {
  const spec = ALGS[alg];
  if (!spec) return false;
  let details = keyDetails.get(key);
  if (!details) {
    details = { type: key.asymmetricKeyType, bits: key.asymmetricKeyDetails?.modulusLength, curve: key.asymmetricKeyDetails?.namedCurve };
    keyDetails.set(key, details);
  }
  const { type, bits = 0, curve } = details;
  if (spec.kty === 'RSA') return (type === 'rsa' || (type === 'rsa-pss' && !!spec.pss)) && bits >= MIN_RSA_BITS;
  if (spec.kty === 'OKP') return type === 'ed25519' || type === 'ed448';
  return type === 'ec' && curve === NODE_CURVES[spec.crv![0]];
}

/**
 * Whether `key` (which fits the alg) signed the JWS; a malformed signature is a bad one. The check
 * is synchronous: handing it to the thread pool (as WebCrypto does, or node:crypto's callback form)
 * moves about 70 µs of it off the event loop under load but costs 15–30 µs more CPU in all, and
 * about 100 µs more when logins come one at a time (docs/performance.md).
 */
export function signedBy(jws: Jws, key: KeyObject): boolean {
  const spec = ALGS[jws.alg];
  const options = spec.kty === 'EC' ? { key, dsaEncoding: 'ieee-p1363' as const }
    : spec.pss ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }
      : key;
  try {
    return verify(spec.hash, jws.signingInput, options, jws.signature);
  } catch {
    return false;
  }
}

/** The payload's JSON object (the claims). */
export function payloadOf(jws: Jws): Record<string, unknown> {
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(jws.payload, 'base64url').toString('utf8'));
  } catch {
    throw badInput('the JWT payload is not JSON');
  }
  if (!claims || typeof claims !== 'object' || Array.isArray(claims)) throw badInput('the JWT payload is not a claims object');
  return claims as Record<string, unknown>;
}

/** A JWKS member that may verify signatures, with its key made once when the set is loaded. */
interface JwkEntry {
  readonly kty: unknown;
  readonly kid: unknown;
  readonly alg: unknown;
  readonly crv: unknown;
  readonly key: KeyObject;
}

export type JwkSet = readonly JwkEntry[];

/**
 * The signing keys of a JWKS document. Members that cannot verify (`use` other than `sig`,
 * `key_ops` without `verify`, private or symmetric keys, keys node:crypto cannot read) are left out.
 */
export function jwkSet(doc: unknown): JwkSet {
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new Error('not a JWKS: no "keys" list');
  const set: JwkEntry[] = [];
  for (const jwk of keys as Array<Record<string, unknown>>) {
    if (!jwk || typeof jwk !== 'object' || 'd' in jwk || (jwk.use !== undefined && jwk.use !== 'sig')) continue;
    if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify'))) continue;
    if (jwk.kty !== 'RSA' && jwk.kty !== 'EC' && jwk.kty !== 'OKP') continue;
    try {
      set.push({ kty: jwk.kty, kid: jwk.kid, alg: jwk.alg, crv: jwk.crv, key: createPublicKey({ key: jwk as never, format: 'jwk' }) });
    } catch {
      // A member this process cannot read cannot verify anything.
    }
  }
  return set;
}

/** The keys of a set that may have signed a JWS: its kid (when it names one), the alg's key type and curve. */
export function candidateKeys(set: JwkSet, jws: Jws): KeyObject[] {
  const spec = ALGS[jws.alg];
  return set
    .filter((k) => k.kty === spec.kty && (jws.kid === undefined || (typeof jws.kid === 'string' && k.kid === jws.kid)) && (k.alg === undefined || k.alg === jws.alg))
    .filter((k) => !spec.crv || spec.crv.includes(k.crv as string))
    .map((k) => k.key)
    .filter((key) => keyFitsAlg(key, jws.alg));
}
