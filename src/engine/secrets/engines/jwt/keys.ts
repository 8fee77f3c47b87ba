import type { Dispatcher } from 'undici';
import { badInput } from '../../core/request';

/** jose is ESM-only: required lazily (Node >= 22.12 loads ESM with require), typed as its import. */
export type Jose = typeof import('jose', { with: { 'resolution-mode': 'import' } });
let joseModule: Jose | undefined;
export function jose(): Jose {
  joseModule ??= require('jose') as Jose;
  return joseModule;
}

const FETCH_TIMEOUT_MS = 10_000;
const JWKS_MAX_AGE_MS = 3600_000;
const MAX_DOCUMENT_BYTES = 1024 * 1024;

export interface Discovery {
  readonly issuer: string;
  readonly jwks_uri: string;
  readonly authorization_endpoint?: string;
  readonly token_endpoint?: string;
  readonly userinfo_endpoint?: string;
  readonly id_token_signing_alg_values_supported?: string[];
}

function agent(caPem: string | undefined): Dispatcher | undefined {
  if (!caPem) return undefined;
  const { Agent } = require('undici') as typeof import('undici');
  return new Agent({ connect: { ca: caPem }, bodyTimeout: FETCH_TIMEOUT_MS, headersTimeout: FETCH_TIMEOUT_MS });
}

/** A JSON document over HTTP(S), with an optional CA chain; errors name the URL. */
export async function fetchJson(url: string, caPem?: string, init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {}) {
  const { request } = require('undici') as typeof import('undici');
  let res;
  try {
    res = await request(url, {
      method: init.method ?? 'GET',
      headers: { accept: 'application/json', ...init.headers },
      body: init.body,
      dispatcher: agent(caPem),
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

interface CachedKeys {
  readonly keys: ReturnType<Jose['createLocalJWKSet']>;
  readonly fetchedAt: number;
}

/**
 * JWKS per URL, cached for an hour and fetched again when a token names a key id the cached set
 * does not have (the provider rotated its keys). Concurrent refreshes share one fetch.
 */
export class JwksCache {
  private readonly sets = new Map<string, CachedKeys>();
  private readonly inflight = new Map<string, Promise<CachedKeys>>();

  async keySet(url: string, caPem: string | undefined, forceRefresh = false): Promise<CachedKeys> {
    const cached = this.sets.get(url);
    if (cached && !forceRefresh && Date.now() - cached.fetchedAt < JWKS_MAX_AGE_MS) return cached;
    let pending = this.inflight.get(url);
    if (!pending) {
      pending = (async () => {
        const res = await fetchJson(url, caPem);
        if (res.status !== 200 || !Array.isArray((res.body as { keys?: unknown }).keys)) throw new Error(`${url} is not a JWKS (status ${res.status})`);
        const entry = { keys: jose().createLocalJWKSet(res.body as never), fetchedAt: Date.now() };
        this.sets.set(url, entry);
        return entry;
      })().finally(() => this.inflight.delete(url));
      this.inflight.set(url, pending);
    }
    return pending;
  }

  /** Verifies a compact JWS against the set; one refetch when the key id is unknown. */
  async verify(url: string, caPem: string | undefined, token: string, algorithms: readonly string[] | undefined) {
    const { compactVerify, errors } = jose();
    const options = algorithms?.length ? { algorithms: [...algorithms] } : undefined;
    let set;
    try {
      set = await this.keySet(url, caPem);
    } catch (err) {
      throw badInput(`cannot fetch the signing keys: ${(err as Error).message}`);
    }
    try {
      return await compactVerify(token, set.keys, options);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
    }
    try {
      set = await this.keySet(url, caPem, true);
    } catch (err) {
      throw badInput(`cannot fetch the signing keys: ${(err as Error).message}`);
    }
    return compactVerify(token, set.keys, options);
  }
}
