import { Clock, ManualClock } from '../../../src/engine/clock';
import { Logger } from '../../../src/engine/logger';
import { CallResult, ROOT_TOKEN, startTestServer, TestServer } from '../../helpers/server';

export { ROOT_TOKEN };

export interface SecretsTestServer extends TestServer {
  /** The engine's clock: a ManualClock unless another was given. */
  readonly clock: ManualClock;
  /** A request to the secrets API under /v1 with a token (the root token unless given; null for none). */
  v(method: string, path: string, body?: unknown, token?: string | null): Promise<CallResult>;
  /** Creates a policy and a token holding it (and no default policy unless asked). */
  tokenWith(policy: string | undefined, options?: Record<string, unknown>): Promise<string>;
}

export async function startSecrets(kind: 'sqlite' | 'postgres', options: { clock?: Clock; logger?: Logger } = {}): Promise<SecretsTestServer> {
  const clock = (options.clock ?? new ManualClock()) as ManualClock;
  const server = await startTestServer(kind, { clock, logger: options.logger });
  let n = 0;
  const v = (method: string, path: string, body?: unknown, token: string | null = ROOT_TOKEN) =>
    server.call('secrets', method, `/v1/${path}`, { body, headers: token ? { 'x-vault-token': token } : {} });
  return Object.assign(server, {
    clock,
    v,
    async tokenWith(policy: string | undefined, extra: Record<string, unknown> = {}) {
      const policies: string[] = [];
      if (policy !== undefined) {
        const name = `p${++n}`;
        const put = await v('PUT', `sys/policies/acl/${name}`, { policy });
        if (put.status !== 204) throw new Error(`policy: ${put.status} ${put.text}`);
        policies.push(name);
      }
      const created = await v('POST', 'auth/token/create', { policies, no_default_policy: true, ...extra });
      if (created.status !== 200) throw new Error(`token: ${created.status} ${created.text}`);
      return created.body.auth.client_token as string;
    },
  });
}
