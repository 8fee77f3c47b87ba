import { ApiError } from './errors';
import { ApiResponse, Transport } from './transport';

/** A mount as `sys/mounts/<path>` and `sys/auth` show it. */
export interface SecretsMountInfo {
  readonly type: string;
  readonly description: string;
  readonly accessor: string;
  readonly config: { readonly default_lease_ttl: number; readonly max_lease_ttl: number };
}

export interface MountInput {
  readonly type: string;
  readonly description?: string;
  /** Seconds or a duration string; 0 is the system default. */
  readonly defaultLeaseTtl?: number | string;
  readonly maxLeaseTtl?: number | string;
}

/** The secrets envelope, as far as this client reads it. */
export interface SecretsEnvelope<D = Record<string, any>> {
  readonly request_id: string;
  readonly lease_id: string;
  readonly lease_duration: number;
  readonly renewable: boolean;
  readonly data: D | null;
  readonly auth: Record<string, any> | null;
  readonly warnings: string[] | null;
}

const enc = (path: string) => path.split('/').map(encodeURIComponent).join('/');
const trim = (path: string) => path.replace(/^\/+|\/+$/g, '');

/** Typed client of the secrets API (Vault's protocol, paths under /v1). */
export class SecretsClient {
  constructor(
    private readonly transport: Transport,
    private readonly token?: string,
  ) {}

  /** The same client acting with another token. */
  withToken(token: string): SecretsClient {
    return new SecretsClient(this.transport, token);
  }

  /** One request; throws ApiError unless the status is one of `ok`. */
  protected async call<T>(method: string, path: string, body?: unknown, ok = [200, 204]): Promise<T> {
    const res: ApiResponse = await this.transport.request('secrets', method, path, { body, token: this.token });
    if (!ok.includes(res.status)) throw ApiError.from(res);
    return res.body as T;
  }

  /** A read that is undefined on 404. */
  private async find<T>(path: string): Promise<T | undefined> {
    try {
      return await this.call<T>('GET', path);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** Any read under /v1 (`pki/roles/web`). */
  read(path: string): Promise<SecretsEnvelope | undefined> {
    return this.find(`/v1/${trim(path)}`);
  }

  /** Any write under /v1; undefined for 204. */
  write(path: string, body: Record<string, unknown>): Promise<SecretsEnvelope | undefined> {
    return this.call('POST', `/v1/${trim(path)}`, body);
  }

  async delete(path: string): Promise<void> {
    await this.call('DELETE', `/v1/${trim(path)}`);
  }

  /** The names under a path (LIST, sent as `GET ?list=true`); empty when there are none. */
  async list(path: string): Promise<string[]> {
    const res = await this.find<SecretsEnvelope<{ keys: string[] }>>(`/v1/${trim(path)}?list=true`);
    return res?.data?.keys ?? [];
  }

  /** A secrets engine (`sys/mounts/<path>`), or undefined. */
  async getMount(path: string): Promise<SecretsMountInfo | undefined> {
    return (await this.find<SecretsEnvelope<SecretsMountInfo>>(`/v1/sys/mounts/${enc(trim(path))}`))?.data ?? undefined;
  }

  async enableMount(path: string, input: MountInput): Promise<void> {
    await this.call('POST', `/v1/sys/mounts/${enc(trim(path))}`, mountBody(input));
  }

  async tuneMount(path: string, input: Omit<MountInput, 'type'>): Promise<void> {
    await this.call('POST', `/v1/sys/mounts/${enc(trim(path))}/tune`, tuneBody(input));
  }

  /** Disables a secrets engine (its leases are revoked); false when there was none. */
  async disableMount(path: string): Promise<boolean> {
    const existed = (await this.getMount(path)) !== undefined;
    await this.call('DELETE', `/v1/sys/mounts/${enc(trim(path))}`);
    return existed;
  }

  /** An auth method (from `sys/auth`), or undefined. */
  async getAuth(path: string): Promise<SecretsMountInfo | undefined> {
    const all = await this.call<SecretsEnvelope<Record<string, SecretsMountInfo>>>('GET', '/v1/sys/auth');
    return all.data?.[`${trim(path)}/`];
  }

  async enableAuth(path: string, input: MountInput): Promise<void> {
    await this.call('POST', `/v1/sys/auth/${enc(trim(path))}`, mountBody(input));
  }

  async tuneAuth(path: string, input: Omit<MountInput, 'type'>): Promise<void> {
    await this.call('POST', `/v1/sys/auth/${enc(trim(path))}/tune`, tuneBody(input));
  }

  /** Disables an auth method (its tokens are revoked); false when there was none. */
  async disableAuth(path: string): Promise<boolean> {
    const existed = (await this.getAuth(path)) !== undefined;
    await this.call('DELETE', `/v1/sys/auth/${enc(trim(path))}`);
    return existed;
  }

  /** An ACL policy's text, or undefined. */
  async getPolicy(name: string): Promise<string | undefined> {
    return (await this.find<SecretsEnvelope<{ policy: string }>>(`/v1/sys/policies/acl/${encodeURIComponent(name)}`))?.data?.policy;
  }

  async putPolicy(name: string, policy: string): Promise<void> {
    await this.call('PUT', `/v1/sys/policies/acl/${encodeURIComponent(name)}`, { policy });
  }

  /** Deletes a policy; false when there was none. */
  async deletePolicy(name: string): Promise<boolean> {
    const existed = (await this.getPolicy(name)) !== undefined;
    await this.call('DELETE', `/v1/sys/policies/acl/${encodeURIComponent(name)}`);
    return existed;
  }

  /** Creates a token (`auth/token/create`); returns the `auth` object. */
  async createToken(body: Record<string, unknown>): Promise<Record<string, any>> {
    return (await this.call<SecretsEnvelope>('POST', '/v1/auth/token/create', body)).auth ?? {};
  }

  /** The caller's own token (`auth/token/lookup-self`). */
  async lookupSelf(): Promise<Record<string, any>> {
    return (await this.call<SecretsEnvelope>('GET', '/v1/auth/token/lookup-self')).data ?? {};
  }
}

function mountBody(input: MountInput): Record<string, unknown> {
  return { type: input.type, description: input.description ?? '', config: tuneBody(input) };
}

function tuneBody(input: Omit<MountInput, 'type'>): Record<string, unknown> {
  return {
    ...(input.description !== undefined ? { description: input.description } : {}),
    default_lease_ttl: input.defaultLeaseTtl ?? 0,
    max_lease_ttl: input.maxLeaseTtl ?? 0,
  };
}
