/** The registry API's resources as the box catalog reads them (API v2: providers name their architecture). */
export interface Provider {
  readonly name: string;
  readonly hosted: boolean;
  readonly original_url: string | null;
  readonly download_url: string;
  readonly checksum: string | null;
  readonly checksum_type: string | null;
  readonly architecture: string;
  readonly default_architecture: boolean;
}

export interface Version {
  readonly version: string;
  readonly status: 'unreleased' | 'active' | 'revoked';
  readonly description_html: string;
  readonly description_markdown: string;
  readonly created_at: string;
  readonly release_url: string;
  readonly providers: readonly Provider[];
}

export interface Box {
  readonly tag: string;
  readonly name: string;
  readonly username: string;
  readonly short_description: string;
  readonly description_html: string;
  readonly description_markdown: string;
  readonly private: boolean;
  readonly downloads: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly current_version: Version | null;
  readonly versions?: readonly Version[];
}

export interface Owner {
  readonly username: string;
  readonly profile_html: string;
  readonly boxes: readonly Box[];
}

/** The root token signs in as the administrator (it writes every box). */
export const ADMINISTRATOR = 'administrator (root token)';

/** `/api/v2/box/alice/base` */
export function boxApiPath(username: string, name: string): string {
  return `/api/v2/box/${encodeURIComponent(username)}/${encodeURIComponent(name)}`;
}

/** The catalog page of a box: `/alice/boxes/base`. */
export function boxPagePath(username: string, name: string): string {
  return `/${encodeURIComponent(username)}/boxes/${encodeURIComponent(name)}`;
}

export function ownerPagePath(username: string): string {
  return `/${encodeURIComponent(username)}`;
}
