import type { Dispatcher } from 'undici';

/**
 * What the catalog's and the secrets service's JWT logins share: jose, fetching JSON documents
 * (JWKS, OIDC discovery) with an optional CA, and JWKS caching with a refetch when a token names a
 * key id the cached set lacks. Each service keeps its own error messages and claim rules.
 */

/** jose is ESM-only: required lazily (Node >= 22.12 loads ESM with require), typed as its import. */
export type Jose = typeof import('jose', { with: { 'resolution-mode': 'import' } });
let joseModule: Jose | undefined;
export function jose(): Jose {
  joseModule ??= require('jose') as Jose;
  return joseModule;
}

export type KeySet = ReturnType<Jose['createLocalJWKSet']>;

const FETCH_TIMEOUT_MS = 10_000;
const MAX_DOCUMENT_BYTES = 1024 * 1024;
/** A cached set is fetched again after an hour. */
const JWKS_MAX_AGE_MS = 3600_000;

/** A JSON document over HTTP(S), with an optional CA chain; errors name the URL. */
export async function fetchJson(url: string, caPem?: string, init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {}) {
  const { request, Agent } = require('undici') as typeof import('undici');
  const dispatcher: Dispatcher | undefined = caPem ? new Agent({ connect: { ca: caPem } }) : undefined;
  try {
    let res;
    try {
      res = await request(url, {
        method: init.method ?? 'GET',
        headers: { accept: 'application/json', ...init.headers },
        body: init.body,
        dispatcher,
        headersTimeout: FETCH_TIMEOUT_MS,
        bodyTimeout: FETCH_TIMEOUT_MS,
      });
    } catch (err) {
      throw new Error(`cannot reach ${url}: ${(err as Error).message}`);
    }
    const text = await res.body.text();
    if (text.length > MAX_DOCUMENT_BYTES) throw new Error(`${url} answered more than ${MAX_DOCUMENT_BYTES} bytes`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`${url} answered ${res.statusCode} with a body that is not JSON`);
    }
    return { status: res.statusCode, body: body as Record<string, unknown> };
  } finally {
    await dispatcher?.close();
  }
}

interface CachedSet<T> {
  readonly keys: Promise<T>;
  readonly fetchedAt: number;
}

/**
 * Key sets by a caller's key (URL and CA), fetched when absent, older than an hour, or when asked to
 * refresh (a token named an unknown key id: the issuer rotated its keys), but not more often than
 * `minRefreshMs` so that made-up key ids cannot make the server hammer the issuer. Times are the
 * caller's clock. Concurrent logins share one fetch; a failed fetch is not cached.
 */
export class JwksCache<T = KeySet> {
  private readonly sets = new Map<string, CachedSet<T>>();

  constructor(private readonly minRefreshMs = 0) {}

  /** The key set, or undefined when asked to refresh one that was fetched too recently. */
  async keySet(key: string, load: () => Promise<T>, nowMs: number, refresh: boolean): Promise<T | undefined> {
    const cached = this.sets.get(key);
    if (cached && refresh && nowMs - cached.fetchedAt < this.minRefreshMs) return undefined;
    if (!cached || refresh || nowMs - cached.fetchedAt >= JWKS_MAX_AGE_MS) {
      const entry: CachedSet<T> = { keys: load(), fetchedAt: nowMs };
      this.sets.set(key, entry);
      entry.keys.catch(() => this.sets.get(key) === entry && this.sets.delete(key));
      return entry.keys;
    }
    return cached.keys;
  }
}

/**
 * Verifies a compact JWS against a key set, and once more against a refreshed set when no key
 * matches its key id. Undefined when that refresh was refused (see JwksCache.keySet).
 */
export async function verifyWithKeySet(
  token: string,
  keySet: (refresh: boolean) => Promise<KeySet | undefined>,
  options: { algorithms?: string[] } | undefined,
) {
  const { compactVerify, errors } = jose();
  try {
    return await compactVerify(token, (await keySet(false))!, options);
  } catch (err) {
    if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
  }
  const fresh = await keySet(true);
  return fresh && compactVerify(token, fresh, options);
}
