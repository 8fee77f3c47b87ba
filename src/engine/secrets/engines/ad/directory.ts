import type { ConnectionOptions } from 'node:tls';
import { Attribute, Change, Client, EqualityFilter, Filter, OrFilter } from 'ldapts';
import { AdConfig, urlsOf } from './config';
import { HangarError } from '../../../http/errors';

/** A directory account as the engine sees it. */
export interface Account {
  readonly dn: string;
  /** When the directory last saw its password set (epoch ms), if it records that. */
  readonly lastSet?: number;
}

const TLS_NAMES = { tls10: 'TLSv1', tls11: 'TLSv1.1', tls12: 'TLSv1.2', tls13: 'TLSv1.3' } as const;
/** 100-ns intervals between 1601-01-01 (Windows FILETIME) and 1970-01-01. */
const FILETIME_EPOCH = 116_444_736_000_000_000n;

/** A directory failure: the upstream's fault, shown with its message (never a password). */
const directoryError = (err: unknown) =>
  err instanceof HangarError ? err : new HangarError(502, [`directory: ${(err as Error).message || String(err)}`]);

/** `pwdLastSet` (FILETIME) or `pwdChangedTime` (GeneralizedTime, `20240102030405Z`) as epoch ms. */
export function parseLastSet(schema: AdConfig['schema'], raw: unknown): number | undefined {
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (typeof value !== 'string' || value === '') return undefined;
  if (schema === 'ad') {
    if (!/^\d+$/.test(value) || value === '0') return undefined;
    return Number((BigInt(value) - FILETIME_EPOCH) / 10_000n);
  }
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:[.,](\d+))?Z$/.exec(value);
  if (!m) return undefined;
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6], m[7] ? Math.round(Number(`0.${m[7]}`) * 1000) : 0);
}

/**
 * One bound connection to the configured directory, in one of two dialects:
 * - `ad`: accounts by `userPrincipalName` (a bare name gets `@upndomain`) or `sAMAccountName`;
 *   the password is `unicodePwd` (the quoted password in UTF-16LE); last set is `pwdLastSet`;
 * - `openldap`: accounts by `uid` or `cn`; the password is `userPassword`; last set is
 *   `pwdChangedTime`, which the ppolicy overlay keeps.
 * Either accepts a full DN as the account name. Values go into filters escaped (ldapts filter objects).
 */
export class Directory {
  /** Connects to the first URL of `url` that answers, with StartTLS when asked, and binds. */
  static async open(config: AdConfig, bindpass = config.bindpass): Promise<Directory> {
    const tls: ConnectionOptions = {
      rejectUnauthorized: !config.insecure_tls,
      minVersion: TLS_NAMES[config.tls_min_version],
      maxVersion: TLS_NAMES[config.tls_max_version],
      ...(config.certificate ? { ca: config.certificate } : {}),
    };
    const timeout = config.request_timeout * 1000;
    const errors: string[] = [];
    for (const url of urlsOf(config)) {
      // ldapts fails StartTLS when TLS options are also given for a plain URL: give them only for ldaps.
      const client = new Client({ url, timeout, connectTimeout: timeout, ...(url.startsWith('ldaps:') ? { tlsOptions: tls } : {}) });
      try {
        if (config.starttls && url.startsWith('ldap:')) await client.startTLS(tls);
        await client.bind(config.binddn, bindpass);
        return new Directory(client, config);
      } catch (err) {
        errors.push(`${url}: ${(err as Error).message}`);
        await client.unbind().catch(() => undefined);
      }
    }
    throw new HangarError(502, [`directory: no URL of the configuration could be bound (${errors.join('; ')})`]);
  }

  /** Runs fn on a bound connection and closes it; directory failures become 502s. */
  static async with<T>(config: AdConfig, fn: (d: Directory) => Promise<T>): Promise<T> {
    const d = await Directory.open(config);
    try {
      return await fn(d);
    } catch (err) {
      throw directoryError(err);
    } finally {
      await d.client.unbind().catch(() => undefined);
    }
  }

  private constructor(
    private readonly client: Client,
    private readonly config: AdConfig,
  ) {}

  private base(): string {
    if (!this.config.userdn) throw new HangarError(400, ['userdn is not configured: the base DN under which service accounts are searched']);
    return this.config.userdn;
  }

  private filterFor(name: string): Filter {
    const eq = (attribute: string, value: string) => new EqualityFilter({ attribute, value });
    const filters = [eq('entryDN', name)];
    if (this.config.schema === 'ad') {
      const upn = name.includes('@') || !this.config.upndomain ? name : `${name}@${this.config.upndomain}`;
      filters.push(eq('userPrincipalName', upn), eq('sAMAccountName', name), eq('distinguishedName', name));
    } else {
      filters.push(eq('uid', name), eq('cn', name));
    }
    return new OrFilter({ filters });
  }

  private lastSetAttribute(): string {
    return this.config.schema === 'ad' ? 'pwdLastSet' : 'pwdChangedTime';
  }

  private async search(filter: Filter): Promise<Account[]> {
    const attr = this.lastSetAttribute();
    const { searchEntries } = await this.client.search(this.base(), { scope: 'sub', filter, attributes: ['1.1', attr] });
    return searchEntries.map((e) => ({ dn: e.dn, lastSet: parseLastSet(this.config.schema, e[attr]) }));
  }

  /** The account of a name, or undefined; a name that matches several entries is refused. */
  async find(name: string): Promise<Account | undefined> {
    const found = await this.search(this.filterFor(name));
    if (found.length > 1) throw new HangarError(400, [`service account "${name}" matches ${found.length} directory entries; use a unique name`]);
    return found[0];
  }

  /** The entries whose DN is `dn` (more than one when several trees hold it): root rotation refuses ambiguity. */
  async entriesWithDn(dn: string): Promise<Account[]> {
    const eq = (attribute: string) => new EqualityFilter({ attribute, value: dn });
    return this.search(this.config.schema === 'ad' ? new OrFilter({ filters: [eq('entryDN'), eq('distinguishedName')] }) : eq('entryDN'));
  }

  /** Replaces an entry's password, as the bound administrator. */
  async setPassword(dn: string, password: string): Promise<void> {
    const modification =
      this.config.schema === 'ad'
        ? new Attribute({ type: 'unicodePwd', values: [Buffer.from(`"${password}"`, 'utf16le')] })
        : new Attribute({ type: 'userPassword', values: [password] });
    await this.client.modify(dn, new Change({ operation: 'replace', modification }));
  }
}
