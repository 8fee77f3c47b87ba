import { candidateKeys, Jws, jwkSet, JwkSet, signedBy } from './jws';
import { fetchJson, JwksCache } from '../../../jwt-keys';
import { badInput } from '../../core/request';

export interface Discovery {
  readonly issuer: string;
  readonly jwks_uri: string;
  readonly authorization_endpoint?: string;
  readonly token_endpoint?: string;
  readonly userinfo_endpoint?: string;
  readonly id_token_signing_alg_values_supported?: string[];
}

/** The provider's discovery document (`<url>/.well-known/openid-configuration`); the issuer must match. */
export async function discover(url: string, caPem?: string): Promise<Discovery> {
  const where = `${url.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  const res = await fetchJson(where, caPem);
  if (res.status !== 200) throw new Error(`${where} answered ${res.status}`);
  const doc = res.body as unknown as Discovery;
  if (typeof doc.issuer !== 'string' || typeof doc.jwks_uri !== 'string') throw new Error(`${where} is not an OIDC discovery document`);
  if (doc.issuer.replace(/\/+$/, '') !== url.replace(/\/+$/, '')) {
    throw new Error(`issuer did not match the issuer returned by the provider: expected "${url}", got "${doc.issuer}"`);
  }
  return doc;
}

// Key sets with their keys made once per fetch; the cache refreshes whenever asked (no minimum interval).
const jwksCache = new JwksCache<JwkSet>();

/** The JWKS at a URL; errors say the signing keys could not be fetched. */
async function fetchKeySet(url: string, caPem: string | undefined): Promise<JwkSet> {
  try {
    const res = await fetchJson(url, caPem);
    if (res.status !== 200 || !Array.isArray((res.body as { keys?: unknown }).keys)) throw new Error(`${url} is not a JWKS (status ${res.status})`);
    return jwkSet(res.body);
  } catch (err) {
    throw badInput(`cannot fetch the signing keys: ${(err as Error).message}`);
  }
}

/** A refetch after a failed signature, at most once per URL in this interval. */
const SIGNATURE_REFETCH_MS = 30_000;
const signatureRefetches = new Map<string, number>();

/**
 * Whether a key of the JWKS at a URL signed the JWS (the set cached for an hour; fetched again
 * once when no key matches the token's kid, alg and curve: the issuer rotated its keys). A
 * signature that fails with a matching key also refetches once, rate-limited, as Vault does: the
 * issuer may have replaced the key behind the same `kid`. Undefined when no key matches.
 */
export async function verifyWithJwks(url: string, caPem: string | undefined, jws: Jws): Promise<boolean | undefined> {
  const keySet = async (refresh: boolean) => (await jwksCache.keySet(url, () => fetchKeySet(url, caPem), Date.now(), refresh))!;
  let keys = candidateKeys(await keySet(false), jws);
  if (!keys.length) keys = candidateKeys(await keySet(true), jws);
  if (!keys.length) return undefined;
  if (keys.some((key) => signedBy(jws, key))) return true;
  const now = Date.now();
  if (now - (signatureRefetches.get(url) ?? -Infinity) < SIGNATURE_REFETCH_MS) return false;
  signatureRefetches.set(url, now);
  return candidateKeys(await keySet(true), jws).some((key) => signedBy(jws, key));
}
