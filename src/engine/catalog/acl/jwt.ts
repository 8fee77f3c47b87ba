import { createPublicKey, KeyObject } from 'node:crypto';
import { fetchJson, jose, Jose, JwksCache, KeySet, verifyWithKeySet } from '../../jwt-keys';
import { parseDuration } from '../route';
import type { JwtConfig } from './auth-methods';
import type { Variables } from './selector';

/** Why a bearer token was refused (answered to the caller; never contains the token). */
export class JwtError extends Error {}

/** The public service's defaults (hashicorp/cap): leeways of 150 s for exp and nbf, 60 s of clock skew on all. */
const DEFAULT_EXPIRATION_LEEWAY_S = 150;
const DEFAULT_NOT_BEFORE_LEEWAY_S = 150;
const DEFAULT_CLOCK_SKEW_S = 60;

/** A JSON document of the issuer; errors are JwtErrors naming the URL. */
async function fetchDocument(url: string, caPem: string | undefined): Promise<Record<string, unknown>> {
  let res;
  try {
    res = await fetchJson(url, caPem);
  } catch (err) {
    throw new JwtError(`error fetching keys from ${url}: ${(err as Error).message}`);
  }
  if (res.status !== 200) throw new JwtError(`${url} answered ${res.status}`);
  return res.body;
}

/** At most every 10 s for an unknown key id (see JwksCache). */
const JWKS_MIN_REFRESH_MS = 10_000;
const jwksCache = new JwksCache(JWKS_MIN_REFRESH_MS);

/** The method's key set, from its JWKS URL or its OIDC discovery document's jwks_uri. */
async function fetchKeySet(config: JwtConfig): Promise<KeySet> {
  let url = config.JWKSURL;
  let ca = config.JWKSCACert;
  if (!url) {
    const base = config.OIDCDiscoveryURL!.replace(/\/+$/, '');
    const doc = await fetchDocument(`${base}/.well-known/openid-configuration`, config.OIDCDiscoveryCACert);
    if (typeof doc.jwks_uri !== 'string') throw new JwtError(`${base} has no jwks_uri in its discovery document`);
    url = doc.jwks_uri;
    ca = config.OIDCDiscoveryCACert;
  }
  const doc = await fetchDocument(url, ca);
  try {
    return jose().createLocalJWKSet(doc as unknown as Parameters<Jose['createLocalJWKSet']>[0]);
  } catch (err) {
    throw new JwtError(`${url} is not a JSON Web Key Set: ${(err as Error).message}`);
  }
}

/** A leeway in seconds: unset or 0 is the default, negative disables it; strings are Go durations, numbers nanoseconds. */
function leewaySeconds(value: string | number | undefined, fallback: number): number {
  const ns = typeof value === 'string' ? (parseDuration(value) ?? 0) : (value ?? 0);
  if (ns === 0) return fallback;
  return ns < 0 ? 0 : ns / 1e9;
}

function audiences(aud: unknown): string[] {
  if (typeof aud === 'string') return [aud];
  return Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : [];
}

/** Checks the time claims, issuer and audiences of verified claims against the method's configuration. */
function checkClaims(claims: Record<string, unknown>, config: JwtConfig, nowMs: number): void {
  const now = nowMs / 1000;
  const skew = leewaySeconds(config.ClockSkewLeeway, DEFAULT_CLOCK_SKEW_S);
  const { exp, nbf, iat } = claims;
  for (const [name, value] of [['exp', exp], ['nbf', nbf], ['iat', iat]] as const) {
    if (value !== undefined && typeof value !== 'number') throw new JwtError(`invalid ${name} claim: not a number`);
  }
  if (typeof exp === 'number' && now > exp + leewaySeconds(config.ExpirationLeeway, DEFAULT_EXPIRATION_LEEWAY_S) + skew) {
    throw new JwtError('token is expired (exp)');
  }
  if (typeof nbf === 'number' && now < nbf - leewaySeconds(config.NotBeforeLeeway, DEFAULT_NOT_BEFORE_LEEWAY_S) - skew) {
    throw new JwtError('token is not valid yet (nbf)');
  }
  if (typeof iat === 'number' && now < iat - skew) throw new JwtError('token is issued in the future (iat)');
  if (config.BoundIssuer && claims.iss !== config.BoundIssuer) throw new JwtError('invalid issuer (iss) claim');
  if (config.BoundAudiences?.length) {
    const aud = audiences(claims.aud);
    if (!config.BoundAudiences.some((a) => aud.includes(a))) throw new JwtError('invalid audience (aud) claim');
  }
}

/** Verifies the signature with one of the static PEM keys or the JWKS; answers the payload. */
async function verifiedPayload(token: string, config: JwtConfig, nowMs: number): Promise<Record<string, unknown>> {
  const { compactVerify } = jose();
  // Without JWTSupportedAlgs the public service accepts RS256 only; `none` is never accepted.
  const algorithms = config.JWTSupportedAlgs?.length ? config.JWTSupportedAlgs : ['RS256'];
  const decode = (payload: Uint8Array) => {
    const claims = JSON.parse(new TextDecoder().decode(payload)) as unknown;
    if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) throw new JwtError('the token payload is not a JSON object');
    return claims as Record<string, unknown>;
  };
  const describe = (err: unknown) => new JwtError(`failed to verify token: ${(err as Error).message}`);
  if (config.JWTValidationPubKeys?.length) {
    const keys: KeyObject[] = config.JWTValidationPubKeys.map((pem) => createPublicKey(pem));
    let last: unknown;
    for (const key of keys) {
      try {
        return decode((await compactVerify(token, key, { algorithms })).payload);
      } catch (err) {
        last = err;
      }
    }
    throw describe(last);
  }
  // Times are the engine clock's; the cache key is the method's key source.
  const key = `${config.JWKSURL ?? ''}\n${config.JWKSCACert ?? ''}\n${config.OIDCDiscoveryURL ?? ''}\n${config.OIDCDiscoveryCACert ?? ''}`;
  let verified;
  try {
    verified = await verifyWithKeySet(token, (refresh) => jwksCache.keySet(key, () => fetchKeySet(config), nowMs, refresh), { algorithms });
  } catch (err) {
    if (err instanceof JwtError) throw err;
    throw describe(err); // fetch errors are JwtErrors already
  }
  if (!verified) throw new JwtError('failed to verify token: no key of the JWKS matches the token');
  try {
    return decode(verified.payload);
  } catch (err) {
    throw describe(err);
  }
}

/** A claim by name, or by JSON pointer when the mapping's key starts with "/". */
function claimAt(claims: Record<string, unknown>, path: string): unknown {
  if (!path.startsWith('/')) return claims[path];
  let at: unknown = claims;
  for (const part of path.slice(1).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

function scalar(claim: string, value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new JwtError(`error converting claim '${claim}' to string`);
}

/**
 * The identity's selector variables: every mapped name is present (empty when its claim is absent),
 * `value.*` from ClaimMappings and `list.*` from ListClaimMappings.
 */
function variablesOf(claims: Record<string, unknown>, config: JwtConfig): Variables {
  const values: Record<string, string> = {};
  const lists: Record<string, string[]> = {};
  for (const [claim, name] of Object.entries(config.ClaimMappings ?? {})) {
    const raw = claimAt(claims, claim);
    values[name] = raw === undefined || raw === null ? '' : scalar(claim, raw);
  }
  for (const [claim, name] of Object.entries(config.ListClaimMappings ?? {})) {
    const raw = claimAt(claims, claim);
    if (raw === undefined || raw === null) lists[name] = [];
    else if (Array.isArray(raw)) lists[name] = raw.map((v) => scalar(claim, v));
    else lists[name] = [scalar(claim, raw)];
  }
  return { values, lists };
}

/** Validates a bearer JWT for a `jwt` auth method and answers the identity's selector variables. */
export async function validateJwtLogin(token: string, config: JwtConfig, nowMs: number): Promise<Variables> {
  if (token.split('.').length !== 3) throw new JwtError('the bearer token is not a compact JWT');
  const claims = await verifiedPayload(token, config, nowMs);
  checkClaims(claims, config, nowMs);
  return variablesOf(claims, config);
}
