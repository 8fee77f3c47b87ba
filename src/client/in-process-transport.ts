import { ApiRequest, ApiResponse, parseBody, tokenHeaders, Transport, withQuery } from './transport';
import { Engine, LOCAL_ADMIN_HEADER } from '../engine/engine';
import type { ApiName } from '../engine/http/api';

/** Into the engine of this process through the same HTTP pipeline (Fastify inject), no socket. */
export class InProcessTransport implements Transport {
  constructor(private readonly engine: Engine) {}

  async request(api: ApiName, method: string, path: string, options: ApiRequest = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = options.token
      ? tokenHeaders(api, options.token)
      : { [LOCAL_ADMIN_HEADER]: this.engine.localAdminSecret };
    if (options.stream) headers['content-type'] = 'application/octet-stream';
    else if (options.body !== undefined) headers['content-type'] = 'application/json';
    const res = await this.engine.app(api).inject({
      method: method as 'GET',
      url: withQuery(path, options.query),
      headers,
      payload: options.stream ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
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
