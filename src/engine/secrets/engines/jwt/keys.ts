import { fetchJson, jose, JwksCache, KeySet, verifyWithKeySet } from '../../../jwt-keys';
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

const jwksCache = new JwksCache();

/** The JWKS at a URL; errors say the signing keys could not be fetched. */
async function fetchKeySet(url: string, caPem: string | undefined): Promise<KeySet> {
  try {
    const res = await fetchJson(url, caPem);
    if (res.status !== 200 || !Array.isArray((res.body as { keys?: unknown }).keys)) throw new Error(`${url} is not a JWKS (status ${res.status})`);
    return jose().createLocalJWKSet(res.body as never);
  } catch (err) {
    throw badInput(`cannot fetch the signing keys: ${(err as Error).message}`);
  }
}

/** A refetch after a failed signature, at most once per URL in this interval. */
const SIGNATURE_REFETCH_MS = 30_000;
const signatureRefetches = new Map<string, number>();

/**
 * Verifies a compact JWS against the JWKS at a URL (cached for an hour; one refetch when the key id
 * is unknown). A signature that fails with a known key id also refetches once, rate-limited, as
 * Vault does: the issuer may have replaced the key behind the same `kid`.
 */
export async function verifyWithJwks(url: string, caPem: string | undefined, token: string, algorithms: readonly string[] | undefined) {
  const options = algorithms?.length ? { algorithms: [...algorithms] } : undefined;
  const keySet = (refresh: boolean) => jwksCache.keySet(url, () => fetchKeySet(url, caPem), Date.now(), refresh);
  try {
    // The cache refreshes whenever asked (no minimum interval), so a result always comes back.
    return (await verifyWithKeySet(token, keySet, options))!;
  } catch (err) {
    const now = Date.now();
    const recent = now - (signatureRefetches.get(url) ?? -Infinity) < SIGNATURE_REFETCH_MS;
    if (!(err instanceof jose().errors.JWSSignatureVerificationFailed) || recent) throw err;
    signatureRefetches.set(url, now);
    return jose().compactVerify(token, (await keySet(true))!, options);
  }
}
