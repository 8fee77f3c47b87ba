import { request } from 'undici';
import { freshStorage, FreshStorage } from './storage';
import { Clock } from '../../src/engine/clock';
import { Engine } from '../../src/engine/engine';
import { ApiName } from '../../src/engine/http/api';
import { listen } from '../../src/engine/http/server';
import type { ListenersTls } from '../../src/engine/http/tls';
import { Logger } from '../../src/engine/logger';
import type { PeerConfig } from '../../src/engine/peers';

export const ROOT_TOKEN = 'test-root-token';

export interface CallOptions {
  readonly body?: unknown;
  readonly raw?: string | Buffer;
  readonly headers?: Record<string, string>;
}

export interface CallResult {
  readonly status: number;
  readonly headers: Record<string, unknown>;
  readonly body: any;
  readonly text: string;
}

export interface TestServer {
  readonly engine: Engine;
  readonly urls: Record<ApiName, string>;
  readonly dataDir: string;
  /** A JSON request to one API; returns status, headers and the parsed body. */
  call(api: ApiName, method: string, path: string, options?: CallOptions): Promise<CallResult>;
  close(): Promise<void>;
}

/** A real server on ephemeral ports over a fresh storage of the given kind, root token ROOT_TOKEN. */
export async function startTestServer(
  kind: 'sqlite' | 'postgres',
  options: {
    clock?: Clock;
    logger?: Logger;
    sharedStorage?: FreshStorage;
    peers?: PeerConfig;
    catalogNode?: { name?: string; address?: string };
    tls?: ListenersTls;
  } = {},
): Promise<TestServer> {
  // A shared storage (two servers on one database) belongs to the caller, who cleans it up.
  const { sharedStorage, ...engineOptions } = options;
  const storage = sharedStorage ?? (await freshStorage(kind));
  const engine = await Engine.open({ storage: storage.config, dataDir: storage.dataDir, devRootToken: ROOT_TOKEN, ...engineOptions });
  const urls = await listen(engine, { registry: '127.0.0.1:0', secrets: '127.0.0.1:0', catalog: '127.0.0.1:0' });
  return {
    engine,
    urls,
    dataDir: storage.dataDir,
    call: httpCaller(urls),
    async close() {
      await engine.close();
      if (!sharedStorage) await storage.cleanup();
    },
  };
}

/** Creates a user with the admin API and logs in; returns the user's token. */
export async function userWithToken(server: TestServer, username: string, password = 'correct horse battery'): Promise<string> {
  const created = await server.call('registry', 'POST', '/api/v1/admin/users', {
    body: { user: { username, password, email: `${username}@example.com` } },
    headers: { authorization: `Bearer ${ROOT_TOKEN}` },
  });
  if (created.status !== 200) throw new Error(`create user: ${created.status} ${created.text}`);
  const login = await server.call('registry', 'POST', '/api/v1/authenticate', {
    body: { token: { description: 'test' }, user: { login: username, password } },
  });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${login.text}`);
  return login.body.token;
}

/** The `call` of a test server whose listeners are at `urls`: a request, its body parsed as JSON when it is JSON. */
export function httpCaller(urls: TestServer['urls']): TestServer['call'] {
  return async (api, method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    let body: string | Buffer | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await request(`${urls[api]}${path}`, { method: method as 'GET', headers, body });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    return { status: res.statusCode, headers: res.headers, body: parsed, text };
  };
}
