import { request } from 'undici';
import { Engine, LOCAL_ADMIN_HEADER } from '../engine/engine';
import type { ApiName } from '../engine/http/api';

export interface ApiRequest {
  readonly body?: unknown;
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
function tokenHeaders(api: ApiName, token: string | undefined): Record<string, string> {
  if (!token) return {};
  if (api === 'registry') return { authorization: `Bearer ${token}` };
  return { [api === 'secrets' ? 'x-secrets-token' : 'x-catalog-token']: token };
}

function withQuery(path: string, query: ApiRequest['query']): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}${path.includes('?') ? '&' : '?'}${qs}` : path;
}

function parseBody(text: string, contentType: string | undefined): unknown {
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

/** HTTP to a running Hangar server (undici). */
export class HttpTransport implements Transport {
  constructor(private readonly endpoints: Endpoints) {}

  async request(api: ApiName, method: string, path: string, options: ApiRequest = {}): Promise<ApiResponse> {
    const base = this.endpoints[api];
    if (!base) throw new Error(`no address configured for the ${api} API`);
    const url = new URL(withQuery(path, options.query), base);
    const headers: Record<string, string> = { accept: 'application/json', ...tokenHeaders(api, options.token) };
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const res = await request(url, { method: method as 'GET', headers, body });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, body: parseBody(text, String(res.headers['content-type'] ?? '')) };
  }

  async close(): Promise<void> {}
}

/** Into the engine of this process through the same HTTP pipeline (Fastify inject), no socket. */
export class InProcessTransport implements Transport {
  constructor(private readonly engine: Engine) {}

  async request(api: ApiName, method: string, path: string, options: ApiRequest = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = options.token
      ? tokenHeaders(api, options.token)
      : { [LOCAL_ADMIN_HEADER]: this.engine.localAdminSecret };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const res = await this.engine.app(api).inject({
      method: method as 'GET',
      url: withQuery(path, options.query),
      headers,
      payload: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    return {
      status: res.statusCode,
      headers: res.headers as ApiResponse['headers'],
      body: parseBody(res.body, String(res.headers['content-type'] ?? '')),
    };
  }

  async close(): Promise<void> {
    await this.engine.close();
  }
}
