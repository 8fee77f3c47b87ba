import { ApiClient, ApiError } from '../shared/api';

/**
 * The secrets API as the console reads it: Vault's envelopes (`data`), listings (`?list=true`,
 * a 404 when nothing is there) and the 403 a token's policies give, which a page shows as
 * "permission denied" rather than as a failure.
 */

/** A read the token's policies refused: the page explains it instead of the data. */
export interface Denied {
  readonly denied: readonly string[];
}

export function isDenied(value: unknown): value is Denied {
  return typeof value === 'object' && value !== null && Array.isArray((value as Denied).denied);
}

/** The read's result, or Denied when the API answers 403. */
export async function readOrDenied<T>(read: Promise<T>): Promise<T | Denied> {
  try {
    return await read;
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) return { denied: err.messages };
    throw err;
  }
}

/** The `data` of a read, or undefined when the API answers 404 (a configuration never written). */
export async function readOptional<T>(api: ApiClient, path: string): Promise<T | undefined> {
  try {
    return (await api.get<{ data: T }>(path)).data;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return undefined;
    throw err;
  }
}

/** The keys of a LIST (GET with `list=true`); none when the API answers 404 (nothing there). */
export async function listKeys(api: ApiClient, path: string): Promise<string[]> {
  try {
    const res = await api.get<{ data?: { keys?: string[] } }>(path, { list: 'true' });
    return res?.data?.keys ?? [];
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return [];
    throw err;
  }
}

/** A path inside the API (`pki/`, `auth/jwt/`) with each segment escaped, without the trailing slash. */
export function apiPath(path: string): string {
  return path
    .replace(/\/+$/, '')
    .split('/')
    .map(encodeURIComponent)
    .join('/');
}

/** One mount as `sys/mounts` and `sys/auth` list it. */
export interface MountInfo {
  readonly type: string;
  readonly description: string;
  readonly accessor: string;
  readonly local: boolean;
  readonly options: Record<string, string> | null;
  readonly config: { readonly default_lease_ttl: number; readonly max_lease_ttl: number };
}

/** The mounts of a kind, keyed by path (`secret/`; auth methods without `auth/`). */
export async function readMounts(api: ApiClient, kind: 'secret' | 'auth'): Promise<Record<string, MountInfo>> {
  const res = await api.get<{ data: Record<string, MountInfo> }>(kind === 'auth' ? '/v1/sys/auth' : '/v1/sys/mounts');
  return res.data;
}

/** The mounts of a type, as paths without the trailing slash (`pki`, `pki-int`). */
export async function mountsOfType(api: ApiClient, types: readonly string[]): Promise<{ path: string; version?: string }[]> {
  const mounts = await readMounts(api, 'secret');
  return Object.entries(mounts)
    .filter(([, m]) => types.includes(m.type))
    .map(([path, m]) => ({ path: path.replace(/\/$/, ''), version: m.options?.version }))
    .sort((a, b) => a.path.localeCompare(b.path));
}

/** What `auth/token/lookup*` says about a token. */
export interface TokenInfo {
  readonly accessor: string;
  readonly display_name: string;
  readonly policies: readonly string[];
  readonly ttl: number;
  readonly expire_time: string | null;
  readonly creation_time: number;
  readonly path: string;
  readonly renewable: boolean;
  readonly orphan: boolean;
  readonly type?: string;
  readonly meta?: Record<string, string> | null;
}

export async function lookupSelf(api: ApiClient): Promise<TokenInfo> {
  return (await api.get<{ data: TokenInfo }>('/v1/auth/token/lookup-self')).data;
}
