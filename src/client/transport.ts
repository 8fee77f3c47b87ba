import type { Readable } from 'node:stream';
import type { ApiName } from '../engine/http/api';

export interface ApiRequest {
  readonly body?: unknown;
  /** A body streamed as it is (application/octet-stream) instead of JSON: box file uploads. */
  readonly stream?: Readable;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** The caller's token; without it an in-process transport acts as the local administrator. */
  readonly token?: string;
}

export interface ApiResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body, or the text when the body is not JSON, or undefined when empty. */
  readonly body: unknown;
}

/** Carries API requests: over HTTP to a server, or into the engine of this process. */
export interface Transport {
  request(api: ApiName, method: string, path: string, options?: ApiRequest): Promise<ApiResponse>;
  close(): Promise<void>;
}

/** The header each API reads its token from (the spec's names). */
export function tokenHeaders(api: ApiName, token: string | undefined): Record<string, string> {
  if (!token) return {};
  if (api === 'registry') return { authorization: `Bearer ${token}` };
  return { [api === 'secrets' ? 'x-secrets-token' : 'x-catalog-token']: token };
}

export function withQuery(path: string, query: ApiRequest['query']): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}${path.includes('?') ? '&' : '?'}${qs}` : path;
}

export function parseBody(text: string, contentType: string | undefined): unknown {
  if (!text) return undefined;
  if (contentType?.includes('json')) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

export type Endpoints = Partial<Readonly<Record<ApiName, string>>>;
