import type { IncomingMessage, RequestOptions } from 'node:http';
import type { Readable } from 'node:stream';
import { ApiRequest, ApiResponse, Endpoints, parseBody, tokenHeaders, Transport, withQuery } from './transport';
import type { ApiName } from '../engine/http/api';

/** How long a request may wait for its answer, or between two chunks of it (undici's default). */
const IDLE_TIMEOUT_MS = 300_000;

/**
 * HTTP to a running Hangar server, through node:http (node:https for https URLs). Every custom
 * resource starts a CLI process that makes a call or two: loading undici cost such a process more
 * CPU (about 50-150 ms) than the rest of its work, node:http about 15 ms.
 */
export class HttpTransport implements Transport {
  constructor(private readonly endpoints: Endpoints) {}

  async request(api: ApiName, method: string, path: string, options: ApiRequest = {}): Promise<ApiResponse> {
    const base = this.endpoints[api];
    if (!base) throw new Error(`no address configured for the ${api} API`);
    const url = new URL(withQuery(path, options.query), base);
    const headers: Record<string, string> = { accept: 'application/json', ...tokenHeaders(api, options.token) };
    let json: string | undefined;
    if (options.stream) {
      headers['content-type'] = 'application/octet-stream';
    } else if (options.body !== undefined) {
      json = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(json));
    }
    const res = await send(url, { method, headers }, options.stream ?? json);
    const text = await readText(res);
    return { status: res.statusCode ?? 0, headers: res.headers, body: parseBody(text, String(res.headers['content-type'] ?? '')) };
  }

  async close(): Promise<void> {}
}

/** Sends one request (a stream body is piped, chunked) and resolves with the answer's head. */
function send(url: URL, options: RequestOptions, body: Readable | string | undefined): Promise<IncomingMessage> {
  // The TLS stack is loaded only for an https address.
  const { request } = (url.protocol === 'https:' ? require('node:https') : require('node:http')) as typeof import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(url, options, resolve);
    req.setTimeout(IDLE_TIMEOUT_MS, () => req.destroy(new Error(`no answer from ${url.origin} within ${IDLE_TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
    if (typeof body === 'object') {
      // A failing source aborts the request, which rejects through its 'error' event.
      body.on('error', (err) => req.destroy(err));
      body.pipe(req);
    } else {
      req.end(body);
    }
  });
}

function readText(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}
