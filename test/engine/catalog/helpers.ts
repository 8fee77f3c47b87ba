import { Clock } from '../../../src/engine/clock';
import { CallResult, ROOT_TOKEN, startTestServer, TestServer } from '../../helpers/server';
import type { FreshStorage } from '../../helpers/storage';

export interface CatalogServer extends TestServer {
  /** A catalog request with a token (default: the root token; `null` for none). */
  as(token: string | null, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<CallResult>;
  /** A catalog request with the root token. */
  root(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<CallResult>;
  /** A token with the given rules (HCL or JSON); returns its SecretID. */
  tokenWithRules(rules: string, ns?: string): Promise<string>;
}

let counter = 0;

export async function startCatalogServer(
  kind: 'sqlite' | 'postgres',
  options: { clock?: Clock; defaultPolicy?: 'allow' | 'deny'; sharedStorage?: FreshStorage; catalogNode?: { name?: string; address?: string } } = {},
): Promise<CatalogServer> {
  const server = await startTestServer(kind, { clock: options.clock, sharedStorage: options.sharedStorage, catalogNode: options.catalogNode });
  // startTestServer has no catalog option; the engine reads the default policy on every request.
  (server.engine as { catalogDefaultPolicy: string }).catalogDefaultPolicy = options.defaultPolicy ?? 'deny';
  const as: CatalogServer['as'] = (token, method, path, body, headers = {}) =>
    server.call('catalog', method, path, { body, headers: token === null ? headers : { 'x-consul-token': token, ...headers } });
  const root: CatalogServer['root'] = (method, path, body, headers) => as(ROOT_TOKEN, method, path, body, headers);
  return Object.assign(server, {
    as,
    root,
    async tokenWithRules(rules: string, ns = 'default') {
      const q = `?ns=${ns}`;
      const policy = await root('PUT', `/v1/acl/policy${q}`, { Name: `p${++counter}`, Rules: rules });
      if (policy.status !== 200) throw new Error(`policy: ${policy.status} ${policy.text}`);
      const token = await root('PUT', `/v1/acl/token${q}`, { Policies: [{ ID: policy.body.ID }] });
      if (token.status !== 200) throw new Error(`token: ${token.status} ${token.text}`);
      return token.body.SecretID as string;
    },
  });
}
