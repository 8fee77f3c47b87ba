import { useEffect, useState } from 'preact/hooks';
import { ApiClient, ApiError, browserTransport, errorMessages, type Query, withQuery } from '../shared/api';

/**
 * The catalog's reads and writes from the console, and its live updates: every list and object is
 * read once by the page's loader, then followed with blocking queries (`?index=N&wait=`), which the
 * API answers as soon as something changed. Navigating away aborts the waiting request.
 */

/** What a page reads: an API path and query, and what a 404 means (no KV keys under a prefix, a deleted key). */
export interface Source<T> {
  readonly path: string;
  readonly query?: Query;
  /** The value of a 404 answer; without it a 404 is an error ("not found"). */
  readonly missing?: T;
}

/** A read and the catalog index it was answered at (X-Catalog-Index). */
export interface Live<T> {
  readonly data: T;
  readonly index: string;
}

/** How long the API may hold a blocking query (the public service allows up to 10 minutes). */
const WAIT = '5m';

/** GET through the API with the user's token; a 404 answers `source.missing` when the source has one. */
export async function readLive<T>(api: ApiClient, source: Source<T>, extra?: Query, signal?: AbortSignal): Promise<Live<T>> {
  const res = await browserTransport({
    method: 'GET',
    url: withQuery(source.path, { ...source.query, ...extra }),
    headers: { accept: 'application/json', ...api.authHeaders() },
    signal,
  });
  const index = res.headers['x-catalog-index'] ?? '';
  if (res.status === 404 && source.missing !== undefined && !res.text) return { data: source.missing, index };
  if (res.status < 200 || res.status > 299) throw apiError(res.status, res.text);
  return { data: (res.text ? JSON.parse(res.text) : undefined) as T, index };
}

/**
 * A write whose body is sent as it is (a KV value is raw bytes, not JSON); resolves to the parsed
 * answer (`true`/`false` for KV writes).
 */
export async function writeRaw<T = unknown>(api: ApiClient, method: string, path: string, query: Query, body?: string): Promise<T> {
  const res = await browserTransport({
    method,
    url: withQuery(path, query),
    headers: { 'accept': 'application/json', 'content-type': 'application/octet-stream', ...api.authHeaders() },
    body,
  });
  if (res.status < 200 || res.status > 299) throw apiError(res.status, res.text);
  return (res.text ? JSON.parse(res.text) : undefined) as T;
}

function apiError(status: number, text: string): ApiError {
  const { messages, body } = errorMessages(status, text);
  return new ApiError(status, messages, body);
}

/**
 * The current value of `source`, starting from what the loader read and updated by blocking
 * queries until the component goes away (the request in flight is aborted then).
 */
export function useLive<T>(api: ApiClient, source: Source<T>, initial: Live<T>): T {
  const [live, setLive] = useState(initial);
  const key = JSON.stringify([source.path, source.query]);
  useEffect(() => {
    setLive(initial);
    if (!initial.index) return; // nothing to follow (a read the API answers without an index)
    const controller = new AbortController();
    void follow(api, source, initial.index, controller.signal, setLive);
    return () => controller.abort();
  }, [api, key, initial]);
  return live.data;
}

async function follow<T>(api: ApiClient, source: Source<T>, from: string, signal: AbortSignal, set: (live: Live<T>) => void): Promise<void> {
  let index = from;
  let failures = 0;
  while (!signal.aborted) {
    try {
      const next = await readLive(api, source, { index, wait: WAIT }, signal);
      failures = 0;
      if (next.index !== index) set(next);
      // An index that goes backwards starts over from 0, as the public service advises its clients.
      index = next.index && BigInt(next.index) >= BigInt(index) ? next.index : '0';
    } catch (err) {
      if (signal.aborted) return;
      // The page shows what it has; a token that lost its permission stops following.
      if (err instanceof ApiError && (err.status === 403 || err.status === 401)) return;
      failures++;
      await pause(Math.min(30_000, 1000 * 2 ** failures), signal);
    }
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Reads several sources at once for a loader: `{ nodes: Live<...>, checks: Live<...> }`. */
export async function readAll<S extends Record<string, Source<any>>>(
  api: ApiClient,
  sources: S,
): Promise<{ [K in keyof S]: Live<S[K] extends Source<infer T> ? T : never> }> {
  const entries = await Promise.all(Object.entries(sources).map(async ([name, source]) => [name, await readLive(api, source)] as const));
  return Object.fromEntries(entries) as any;
}
