import { ApiError } from './errors';
import { ApiResponse, Transport } from './transport';

export interface RegistryBox {
  readonly tag: string;
  readonly name: string;
  readonly username: string;
  readonly short_description: string;
  readonly description_markdown: string;
  readonly description_html: string;
  readonly private: boolean;
  readonly downloads: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly current_version: unknown;
  readonly versions?: unknown[];
}

export interface RegistryToken {
  readonly description: string;
  readonly token: string;
  readonly token_hash: string;
  readonly created_at: string;
}

export interface BoxInput {
  readonly shortDescription?: string;
  readonly description?: string;
  readonly isPrivate?: boolean;
}

/** Typed client of the box registry API. */
export class RegistryClient {
  constructor(
    private readonly transport: Transport,
    private readonly token?: string,
  ) {}

  /** The same client acting with another token. */
  withToken(token: string): RegistryClient {
    return new RegistryClient(this.transport, token);
  }

  private async call<T>(method: string, path: string, body?: unknown, ok = [200, 201, 204]): Promise<T> {
    const res: ApiResponse = await this.transport.request('registry', method, path, { body, token: this.token });
    if (!ok.includes(res.status)) throw ApiError.from(res);
    return res.body as T;
  }

  authenticate(login: string, password: string, description = ''): Promise<RegistryToken> {
    return this.call('POST', '/api/v1/authenticate', { token: { description }, user: { login, password } });
  }

  async validateToken(): Promise<boolean> {
    const res = await this.transport.request('registry', 'GET', '/api/v1/authenticate', { token: this.token });
    return res.status === 200;
  }

  deleteToken(): Promise<void> {
    return this.call('DELETE', '/api/v1/authenticate');
  }

  createUser(user: { username: string; password: string; email?: string; phone?: string }): Promise<{ username: string }> {
    return this.call('POST', '/api/v1/admin/users', { user });
  }

  createOrganization(username: string, owner: string): Promise<{ username: string }> {
    return this.call('POST', '/api/v1/admin/organizations', { organization: { username, owner } });
  }

  /** Administrator: owner flags (delinquent, two-factor, phone, profile). */
  updateOwner(username: string, owner: { delinquent?: boolean; two_factor?: 'sms' | false; phone?: string; profile_markdown?: string }) {
    return this.call<Record<string, unknown>>('PUT', `/api/v1/admin/owners/${encodeURIComponent(username)}`, { owner });
  }

  /** Administrator: maintenance mode on or off. */
  setMaintenance(enabled: boolean): Promise<{ maintenance: { enabled: boolean } }> {
    return this.call('PUT', '/api/v1/admin/maintenance', { maintenance: { enabled } });
  }

  setMember(organization: string, member: string, role: 'owner' | 'member' = 'member'): Promise<{ members: { username: string; role: string }[] }> {
    return this.call('PUT', `/api/v1/organization/${encodeURIComponent(organization)}/members/${encodeURIComponent(member)}`, { member: { role } });
  }

  removeMember(organization: string, member: string): Promise<{ members: { username: string; role: string }[] }> {
    return this.call('DELETE', `/api/v1/organization/${encodeURIComponent(organization)}/members/${encodeURIComponent(member)}`);
  }

  /** The box, or undefined when it does not exist (or the caller may not see it). */
  async getBox(username: string, name: string): Promise<RegistryBox | undefined> {
    try {
      return await this.call<RegistryBox>('GET', boxPath(username, name));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  createBox(username: string, name: string, input: BoxInput): Promise<RegistryBox> {
    return this.call('POST', '/api/v1/boxes', { box: { username, name, ...boxBody(input) } });
  }

  updateBox(username: string, name: string, input: BoxInput & { name?: string }): Promise<RegistryBox> {
    return this.call('PUT', boxPath(username, name), { box: { ...(input.name ? { name: input.name } : {}), ...boxBody(input) } });
  }

  /** Deletes the box; false when it was already gone. */
  async deleteBox(username: string, name: string): Promise<boolean> {
    try {
      await this.call('DELETE', boxPath(username, name));
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return false;
      throw err;
    }
  }
}

function boxPath(username: string, name: string): string {
  return `/api/v1/box/${encodeURIComponent(username)}/${encodeURIComponent(name)}`;
}

function boxBody(input: BoxInput): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (input.shortDescription !== undefined) body.short_description = input.shortDescription;
  if (input.description !== undefined) body.description = input.description;
  if (input.isPrivate !== undefined) body.is_private = input.isPrivate;
  return body;
}
