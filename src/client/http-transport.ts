import type { Readable } from 'node:stream';
import { ApiRequest, ApiResponse, Endpoints, parseBody, tokenHeaders, Transport, withQuery } from './transport';
import type { ApiName } from '../engine/http/api';

/** HTTP to a running Hangar server (undici). */
export class HttpTransport implements Transport {
  constructor(private readonly endpoints: Endpoints) {}

  async request(api: ApiName, method: string, path: string, options: ApiRequest = {}): Promise<ApiResponse> {
    const base = this.endpoints[api];
    if (!base) throw new Error(`no address configured for the ${api} API`);
    const url = new URL(withQuery(path, options.query), base);
    const headers: Record<string, string> = { accept: 'application/json', ...tokenHeaders(api, options.token) };
    let body: string | Readable | undefined;
    if (options.stream) {
      headers['content-type'] = 'application/octet-stream';
      body = options.stream;
    } else if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    // Loaded on first use: a server that never calls out does not keep undici in memory.
    const { request } = require('undici') as typeof import('undici');
    const res = await request(url, { method: method as 'GET', headers, body });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, body: parseBody(text, String(res.headers['content-type'] ?? '')) };
  }

  async close(): Promise<void> {}
}
