import { open } from 'node:fs/promises';
import { ApiError } from './errors';
import { TransferProgress } from './progress';
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

export type ChecksumType = 'md5' | 'sha1' | 'sha256' | 'sha384' | 'sha512';

export interface RegistryProvider {
  readonly name: string;
  readonly hosted: boolean;
  readonly hosted_token: string | null;
  readonly original_url: string | null;
  readonly download_url: string;
  readonly checksum: string | null;
  readonly checksum_type: ChecksumType | null;
  readonly created_at: string;
  readonly updated_at: string;
  /** API v2 only (a provider addressed by architecture). */
  readonly architecture?: string;
  readonly default_architecture?: boolean;
}

/**
 * A provider by name (API v1: the name's default architecture) or by name and architecture (API v2).
 */
export type ProviderId = string | { readonly name: string; readonly architecture: string };

export type VersionStatus = 'unreleased' | 'active' | 'revoked';

export interface RegistryVersion {
  readonly version: string;
  readonly number: string;
  readonly status: VersionStatus;
  readonly description_markdown: string;
  readonly description_html: string;
  readonly release_url: string;
  readonly revoke_url: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly providers: RegistryProvider[];
}

/** A provider's fields; undefined keeps a value, `""` clears it (url, checksum with its type). */
export interface ProviderInput {
  readonly name?: string;
  readonly url?: string;
  readonly checksum?: string;
  readonly checksumType?: ChecksumType | '';
  /** Sent through API v2: makes this architecture its name's default (true only; see the registry docs). */
  readonly defaultArchitecture?: boolean;
}

/** Where an upload goes: `upload_path` takes the file; a direct upload is finished through `callback`. */
export interface UploadTarget {
  readonly upload_path: string;
  readonly callback?: string;
}

export interface UploadResult {
  readonly success: boolean;
  readonly name: string;
  readonly hosted: boolean;
  readonly size: number;
  readonly checksum_type: ChecksumType;
  readonly checksum: string;
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
  getBox(username: string, name: string): Promise<RegistryBox | undefined> {
    return this.found(boxPath(username, name));
  }

  createBox(username: string, name: string, input: BoxInput): Promise<RegistryBox> {
    return this.call('POST', '/api/v1/boxes', { box: { username, name, ...boxBody(input) } });
  }

  updateBox(username: string, name: string, input: BoxInput & { name?: string }): Promise<RegistryBox> {
    return this.call('PUT', boxPath(username, name), { box: { ...(input.name ? { name: input.name } : {}), ...boxBody(input) } });
  }

  /** Deletes the box; false when it was already gone. */
  deleteBox(username: string, name: string): Promise<boolean> {
    return this.deleted(boxPath(username, name));
  }

  /** The version, or undefined when it does not exist (or the caller may not see it). */
  getVersion(username: string, name: string, version: string): Promise<RegistryVersion | undefined> {
    return this.found(versionPath(username, name, version));
  }

  createVersion(username: string, name: string, version: string, description?: string): Promise<RegistryVersion> {
    return this.call('POST', `${boxPath(username, name)}/versions`, { version: { version, description } });
  }

  /** Changes the description, or the number of an unreleased version (`input.version`). */
  updateVersion(username: string, name: string, version: string, input: { version?: string; description?: string }): Promise<RegistryVersion> {
    return this.call('PUT', versionPath(username, name, version), { version: input });
  }

  /** Deletes the version with its providers; false when it was already gone. */
  deleteVersion(username: string, name: string, version: string): Promise<boolean> {
    return this.deleted(versionPath(username, name, version));
  }

  releaseVersion(username: string, name: string, version: string): Promise<RegistryVersion> {
    return this.call('PUT', `${versionPath(username, name, version)}/release`);
  }

  revokeVersion(username: string, name: string, version: string): Promise<RegistryVersion> {
    return this.call('PUT', `${versionPath(username, name, version)}/revoke`);
  }

  /** The provider, or undefined when it (or its version) does not exist or the caller may not see it. */
  getProvider(username: string, name: string, version: string, provider: ProviderId): Promise<RegistryProvider | undefined> {
    return this.found(providerPath(username, name, version, provider));
  }

  /** Creates a provider; with an `architecture`, through API v2. */
  createProvider(
    username: string,
    name: string,
    version: string,
    input: ProviderInput & { name: string; architecture?: string },
  ): Promise<RegistryProvider> {
    const path = `${versionPath(username, name, version, input.architecture !== undefined)}/providers`;
    return this.call('POST', path, { provider: providerBody(input) });
  }

  updateProvider(username: string, name: string, version: string, provider: ProviderId, input: ProviderInput): Promise<RegistryProvider> {
    return this.call('PUT', providerPath(username, name, version, provider), { provider: providerBody(input) });
  }

  /** Deletes the provider and its file; false when it was already gone. */
  deleteProvider(username: string, name: string, version: string, provider: ProviderId): Promise<boolean> {
    return this.deleted(providerPath(username, name, version, provider));
  }

  /** A fresh upload URL (plain: the PUT stores the file; direct: `callback` then finishes it). */
  prepareUpload(username: string, name: string, version: string, provider: ProviderId, direct = false): Promise<UploadTarget> {
    return this.call('GET', `${providerPath(username, name, version, provider)}/upload${direct ? '/direct' : ''}`);
  }

  /**
   * PUTs a file to an `upload_path`, streamed from disk (never read into memory). The URL is the
   * capability: no token is sent with it.
   */
  async putFile(uploadPath: string, file: string, progressLabel?: string): Promise<UploadResult> {
    // Opened first, so that a missing or unreadable file fails here, before any request.
    const handle = await open(file, 'r');
    const progress = progressLabel === undefined ? undefined : new TransferProgress(progressLabel, (await handle.stat()).size);
    const stream = handle.createReadStream();
    try {
      const res = await this.transport.request('registry', 'PUT', uploadPath, { stream: progress ? progress.track(stream) : stream });
      if (res.status !== 200) throw ApiError.from(res);
      progress?.finish();
      return res.body as UploadResult;
    } finally {
      stream.destroy();
    }
  }

  /** Finishes a direct upload: the file that arrived at `upload_path` becomes the provider's. */
  finishDirectUpload(callback: string): Promise<RegistryProvider> {
    return this.call('PUT', callback);
  }

  /**
   * Uploads a box file for a provider: prepares the upload, streams the file, finishes a direct one.
   * With `progressLabel`, an upload that takes longer than a second reports its progress on stderr.
   */
  async upload(
    username: string, name: string, version: string, provider: ProviderId, file: string, direct = false, progressLabel?: string,
  ): Promise<void> {
    const target = await this.prepareUpload(username, name, version, provider, direct);
    await this.putFile(target.upload_path, file, progressLabel);
    if (direct) await this.finishDirectUpload(target.callback!);
  }

  private async found<T>(path: string): Promise<T | undefined> {
    try {
      return await this.call<T>('GET', path);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  private async deleted(path: string): Promise<boolean> {
    try {
      await this.call('DELETE', path);
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return false;
      throw err;
    }
  }
}

function versionPath(username: string, name: string, version: string, v2 = false): string {
  return `${boxPath(username, name, v2)}/version/${encodeURIComponent(version)}`;
}

/** v1's path of a provider name, or v2's of a name and architecture. */
function providerPath(username: string, name: string, version: string, provider: ProviderId): string {
  if (typeof provider === 'string') return `${versionPath(username, name, version)}/provider/${encodeURIComponent(provider)}`;
  const { name: p, architecture } = provider;
  return `${versionPath(username, name, version, true)}/provider/${encodeURIComponent(p)}/${encodeURIComponent(architecture)}`;
}

function providerBody(input: ProviderInput): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (input.name !== undefined) body.name = input.name;
  if (input.url !== undefined) body.url = input.url;
  if (input.checksum !== undefined) body.checksum = input.checksum;
  if (input.checksumType !== undefined) body.checksum_type = input.checksumType;
  const { architecture } = input as { architecture?: string };
  if (architecture !== undefined) body.architecture = architecture;
  if (input.defaultArchitecture !== undefined) body.default_architecture = input.defaultArchitecture;
  return body;
}

function boxPath(username: string, name: string, v2 = false): string {
  return `/api/${v2 ? 'v2' : 'v1'}/box/${encodeURIComponent(username)}/${encodeURIComponent(name)}`;
}

function boxBody(input: BoxInput): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (input.shortDescription !== undefined) body.short_description = input.shortDescription;
  if (input.description !== undefined) body.description = input.description;
  if (input.isPrivate !== undefined) body.is_private = input.isPrivate;
  return body;
}
