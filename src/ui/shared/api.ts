/**
 * The consoles' one way to the HTTP APIs: the public endpoints, with the signed-in user's own token
 * in a header (never in a URL, never in a cookie, so no request can be forged cross-site). The same
 * client runs in the browser (over fetch) and on the server (over Fastify's inject, anonymously,
 * to render the box catalog's pages), so both read the same API.
 */
export interface TransportRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly signal?: AbortSignal;
}

export interface TransportResponse {
  readonly status: number;
  readonly text: string;
  readonly headers: Record<string, string>;
}

export type Transport = (request: TransportRequest) => Promise<TransportResponse>;

/** fetch from the page's own origin; the browser sends no cookie and caches nothing. */
export const browserTransport: Transport = async (req) => {
  const res = await fetch(req.url, {
    method: req.method,
    headers: req.headers,
    body: req.body,
    signal: req.signal,
    credentials: 'omit',
    cache: 'no-store',
  });
  const headers: Record<string, string> = {};
  res.headers.forEach((value, key) => (headers[key] = value));
  return { status: res.status, text: await res.text(), headers };
};

/** An API's answer other than 2xx: the status and the messages of the API's error envelope. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly messages: readonly string[],
    /** The parsed JSON body when there is one (the registry's two-factor 406 lists delivery methods). */
    readonly body?: unknown,
  ) {
    super(messages.join('; ') || `HTTP ${status}`);
  }
}

export type Query = Record<string, string | number | boolean | undefined | null>;

export interface RequestOptions {
  readonly query?: Query;
  /** JSON body (serialized here). */
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** Cancels the request (a blocking query left behind by a navigation). */
  readonly signal?: AbortSignal;
}

/** A 2xx answer with its headers (the catalog's X-Catalog-Index for blocking queries). */
export interface ApiResponse<T> {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: T;
}

/** The error messages of any of the three envelopes: `{errors: [...]}` (registry, secrets) or plain text (catalog). */
export function errorMessages(status: number, text: string): { messages: string[]; body?: unknown } {
  try {
    const body = JSON.parse(text) as { errors?: unknown };
    if (Array.isArray(body?.errors)) return { messages: body.errors.map(String), body };
    return { messages: [`HTTP ${status}`], body };
  } catch {
    return { messages: [text.trim() || `HTTP ${status}`] };
  }
}

export class ApiClient {
  constructor(
    private readonly transport: Transport,
    /** The header the API reads the token from: `Authorization` (as Bearer), `X-Secrets-Token`, `X-Catalog-Token`. */
    readonly tokenHeader: string,
    readonly token?: string,
    /** Headers sent with every request besides the token's (the catalog console's namespace). */
    private readonly fixedHeaders: Readonly<Record<string, string>> = {},
  ) {}

  /** The same client with another token (undefined: anonymous). */
  withToken(token: string | undefined): ApiClient {
    return new ApiClient(this.transport, this.tokenHeader, token, this.fixedHeaders);
  }

  /** The same client sending these headers too with every request. */
  withHeaders(headers: Record<string, string>): ApiClient {
    return new ApiClient(this.transport, this.tokenHeader, this.token, { ...this.fixedHeaders, ...headers });
  }

  /**
   * Headers that carry the token (and the client's fixed headers), for requests made outside this
   * client (uploads with progress, the catalog's raw reads and writes).
   */
  authHeaders(): Record<string, string> {
    if (!this.token) return { ...this.fixedHeaders };
    const auth = this.tokenHeader.toLowerCase() === 'authorization' ? { authorization: `Bearer ${this.token}` } : { [this.tokenHeader]: this.token };
    return { ...this.fixedHeaders, ...auth };
  }

  get<T = any>(path: string, query?: Query): Promise<T> {
    return this.request<T>('GET', path, { query });
  }

  post<T = any>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', path, { body });
  }

  put<T = any>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('PUT', path, { body });
  }

  patch<T = any>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('PATCH', path, { body });
  }

  delete<T = any>(path: string, query?: Query): Promise<T> {
    return this.request<T>('DELETE', path, { query });
  }

  /** Resolves to the parsed JSON body (undefined when empty); rejects with an ApiError for any status but 2xx. */
  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return (await this.send<T>(method, path, options)).body;
  }

  /** As `request`, with the status and the response headers (lower-case names). */
  async send<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { accept: 'application/json', ...this.authHeaders(), ...options.headers };
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await this.transport({ method, url: withQuery(path, options.query), headers, body, signal: options.signal });
    if (res.status < 200 || res.status > 299) {
      const { messages, body: errorBody } = errorMessages(res.status, res.text);
      throw new ApiError(res.status, messages, errorBody);
    }
    let parsed: unknown = undefined;
    if (res.text) {
      try {
        parsed = JSON.parse(res.text);
      } catch {
        parsed = res.text;
      }
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  }
}

/** `path?a=1&b=x`, leaving out undefined, null and empty values. */
export function withQuery(path: string, query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  }
  const qs = params.toString();
  return qs ? `${path}${path.includes('?') ? '&' : '?'}${qs}` : path;
}
