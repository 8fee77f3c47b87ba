import { X509Certificate } from 'node:crypto';
import type { RoleIndex } from './names';
import type { Pending } from './rotation';
import { badInput } from '../../core/request';
import type { MountStore } from '../../core/store';
import type { EngineContext } from '../../core/types';

export const TLS_VERSIONS = ['tls10', 'tls11', 'tls12', 'tls13'] as const;
export type TlsVersion = (typeof TLS_VERSIONS)[number];

/** The directory dialects: how accounts are found and how their passwords are written. */
export const SCHEMAS = ['openldap', 'ad', 'racf'] as const;
export type Schema = (typeof SCHEMAS)[number];

/**
 * What the shared directory code needs of an engine's configuration (`ad` and `ldap` each store a
 * superset of it, sealed at `config`, the bind password included).
 */
export interface DirectoryConfig {
  readonly url: string;
  readonly binddn: string;
  readonly bindpass: string;
  readonly userdn: string;
  readonly upndomain: string;
  readonly starttls: boolean;
  readonly insecure_tls: boolean;
  readonly certificate: string;
  readonly tls_min_version: TlsVersion;
  readonly tls_max_version: TlsVersion;
  /** Seconds: each operation's timeout; also when an unfinished rotation counts as abandoned. */
  readonly request_timeout: number;
  /** Seconds to wait for a connection to a URL before the next (default: request_timeout). */
  readonly connection_timeout?: number;
  readonly case_sensitive_names: boolean;
  readonly schema: Schema;
  /**
   * The attribute account names are matched against (`ldap` engine: cn, uid, userPrincipalName,
   * racfid...). Absent (`ad` engine): the dialect's fixed set of naming attributes.
   */
  readonly userattr?: string;
  /** PEM client certificate and key presented to the directory. */
  readonly client_tls_cert?: string;
  readonly client_tls_key?: string;
  /** RACF: `phrase` writes racfPassPhrase instead of racfPassword. */
  readonly credential_type?: 'password' | 'phrase';
  /** A root rotation under way (rotation.ts). */
  readonly pending?: Pending;
  /** When Hangar last set the bind password itself (rotate-root), epoch ms. */
  readonly root_rotated_at?: number;
}

/** The URLs of `url`, in the order they are tried. */
export function urlsOf(config: Pick<DirectoryConfig, 'url'>): string[] {
  return config.url.split(',').map((u) => u.trim()).filter((u) => u !== '');
}

/** Checks the connection settings both engines share; each message names its field. */
export function checkConnection(c: DirectoryConfig): void {
  const urls = urlsOf(c);
  if (urls.length === 0) throw badInput('url: give at least one LDAP URL');
  for (const u of urls) {
    let parsed: URL;
    try {
      parsed = new URL(u);
    } catch {
      throw badInput(`url: "${u}" is not a URL`);
    }
    if (parsed.protocol !== 'ldap:' && parsed.protocol !== 'ldaps:') throw badInput(`url: "${u}" must be an ldap:// or ldaps:// URL`);
  }
  if (c.certificate) {
    try {
      new X509Certificate(c.certificate);
    } catch {
      throw badInput('certificate: not a PEM certificate');
    }
  }
  if (c.client_tls_cert) {
    try {
      new X509Certificate(c.client_tls_cert);
    } catch {
      throw badInput('client_tls_cert: not a PEM certificate');
    }
  }
  if (!!c.client_tls_cert !== !!c.client_tls_key) throw badInput('client_tls_cert and client_tls_key: give both or neither');
  if (TLS_VERSIONS.indexOf(c.tls_min_version) > TLS_VERSIONS.indexOf(c.tls_max_version)) {
    throw badInput(`tls_min_version (${c.tls_min_version}) must not be above tls_max_version (${c.tls_max_version})`);
  }
}

/**
 * What distinguishes the engines built on the shared directory code (`ad`, `ldap`): their
 * configuration, password rules, where their roles live and how sets are named.
 */
export interface DirectoryProfile<C extends DirectoryConfig = DirectoryConfig> {
  /** Where the engine's password-rotating roles are, so an account serves one role or one set. */
  readonly roles: RoleIndex;
  /** Whether names may hold `/` (`org/team/set`): lists then show sub-folders. */
  readonly hierarchical: boolean;
  /** The configuration, or a 400 that says to write it first. */
  requireConfig(store: MountStore): Promise<C>;
  /** A new password under the configuration's rules (a transaction of its own when it needs one). */
  newPassword(ctx: EngineContext, config: C): Promise<string>;
  /** A library set's name from its URL parameter, checked, lowercased as the public service does. */
  setName(raw: string): string;
}
