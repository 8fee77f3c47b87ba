import type { ConnectionOptions } from 'node:tls';
import { Attribute, Change, Client, EqualityFilter, Filter, NoSuchObjectError, OrFilter } from 'ldapts';
import type { LdifRecord, LdifValue } from './ldif';
import { DirectoryConfig, Schema, urlsOf } from './settings';
import { HangarError } from '../../../http/errors';

/** A directory account as the engines see it. */
export interface Account {
  readonly dn: string;
  /** When the directory last saw its password set (epoch ms), if it records that. */
  readonly lastSet?: number;
}

const TLS_NAMES = { tls10: 'TLSv1', tls11: 'TLSv1.1', tls12: 'TLSv1.2', tls13: 'TLSv1.3' } as const;
/** 100-ns intervals between 1601-01-01 (Windows FILETIME) and 1970-01-01. */
const FILETIME_EPOCH = 116_444_736_000_000_000n;

/** A directory failure: the upstream's fault, shown with its message (never a password). */
export const directoryError = (err: unknown) =>
  err instanceof HangarError ? err : new HangarError(502, [`directory: ${(err as Error).message || String(err)}`]);

/** `pwdLastSet` (FILETIME) or `pwdChangedTime` (GeneralizedTime, `20240102030405Z`) as epoch ms. */
export function parseLastSet(schema: Schema, raw: unknown): number | undefined {
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

/** LDIF values as ldapts takes them: all bytes (a record may mix text and base64 values). */
const bytes = (values: readonly LdifValue[]): Buffer[] => values.map((v) => (typeof v === 'string' ? Buffer.from(v, 'utf8') : v));

/** The attribute holding when a password was last set, per dialect (RACF exposes none we read). */
const LAST_SET: Record<Schema, string | undefined> = { ad: 'pwdLastSet', openldap: 'pwdChangedTime', racf: undefined };

/**
 * One bound connection to the configured directory, in one of three dialects:
 * - `ad`: the password is `unicodePwd` (the quoted password in UTF-16LE); last set is `pwdLastSet`;
 * - `openldap`: the password is `userPassword`; last set is `pwdChangedTime` (the ppolicy overlay);
 * - `racf`: the password is `racfPassword` (or `racfPassPhrase`), with `racfAttributes: noexpired`.
 * Accounts are found under `userdn` by `userattr` when the configuration names one (`ldap`
 * engine), else by the dialect's naming attributes or the full DN (`ad` engine). Values go into
 * filters escaped (ldapts filter objects).
 */
export class Directory {
  /** Connects to the first URL of `url` that answers, with StartTLS when asked, and binds. */
  static async open(config: DirectoryConfig, bindpass = config.bindpass): Promise<Directory> {
    const tls: ConnectionOptions = {
      rejectUnauthorized: !config.insecure_tls,
      minVersion: TLS_NAMES[config.tls_min_version],
      maxVersion: TLS_NAMES[config.tls_max_version],
      ...(config.certificate ? { ca: config.certificate } : {}),
      ...(config.client_tls_cert && config.client_tls_key ? { cert: config.client_tls_cert, key: config.client_tls_key } : {}),
    };
    const timeout = config.request_timeout * 1000;
    const connectTimeout = (config.connection_timeout || config.request_timeout) * 1000;
    const errors: string[] = [];
    for (const url of urlsOf(config)) {
      // ldapts fails StartTLS when TLS options are also given for a plain URL: give them only for ldaps.
      const client = new Client({ url, timeout, connectTimeout, ...(url.startsWith('ldaps:') ? { tlsOptions: tls } : {}) });
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
  static async with<T>(config: DirectoryConfig, fn: (d: Directory) => Promise<T>): Promise<T> {
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
    private readonly config: DirectoryConfig,
  ) {}

  private base(): string {
    if (!this.config.userdn) throw new HangarError(400, ['userdn is not configured: the base DN under which service accounts are searched']);
    return this.config.userdn;
  }

  private filterFor(name: string): Filter {
    const eq = (attribute: string, value: string) => new EqualityFilter({ attribute, value });
    const { userattr, upndomain, schema } = this.config;
    const upn = name.includes('@') || !upndomain ? name : `${name}@${upndomain}`;
    if (userattr) return eq(userattr, userattr.toLowerCase() === 'userprincipalname' ? upn : name);
    const filters = [eq('entryDN', name)];
    if (schema === 'ad') filters.push(eq('userPrincipalName', upn), eq('sAMAccountName', name), eq('distinguishedName', name));
    else filters.push(eq('uid', name), eq('cn', name));
    return new OrFilter({ filters });
  }

  private async search(base: string, scope: 'sub' | 'base', filter: Filter | string): Promise<Account[]> {
    const attr = LAST_SET[this.config.schema];
    const { searchEntries } = await this.client.search(base, { scope, filter, attributes: attr ? ['1.1', attr] : ['1.1'] });
    return searchEntries.map((e) => ({ dn: e.dn, lastSet: attr ? parseLastSet(this.config.schema, e[attr]) : undefined }));
  }

  /** The account of a name, or undefined; a name that matches several entries is refused. */
  async find(name: string): Promise<Account | undefined> {
    const found = await this.search(this.base(), 'sub', this.filterFor(name));
    if (found.length > 1) throw new HangarError(400, [`service account "${name}" matches ${found.length} directory entries; use a unique name`]);
    return found[0];
  }

  /** The entry at `dn` itself, or undefined when there is none. */
  async at(dn: string): Promise<Account | undefined> {
    try {
      return (await this.search(dn, 'base', '(objectClass=*)'))[0];
    } catch (err) {
      if (err instanceof NoSuchObjectError) return undefined;
      throw err;
    }
  }

  /** The entries whose DN is `dn` (more than one when several trees hold it): root rotation refuses ambiguity. */
  async entriesWithDn(dn: string): Promise<Account[]> {
    const eq = (attribute: string) => new EqualityFilter({ attribute, value: dn });
    return this.search(this.base(), 'sub', this.config.schema === 'ad' ? new OrFilter({ filters: [eq('entryDN'), eq('distinguishedName')] }) : eq('entryDN'));
  }

  /** Replaces an entry's password, as the bound administrator, in the dialect's attributes. */
  async setPassword(dn: string, password: string): Promise<void> {
    const replace = (type: string, values: string[] | Buffer[]) => new Change({ operation: 'replace', modification: new Attribute({ type, values }) });
    switch (this.config.schema) {
      case 'ad':
        return this.client.modify(dn, replace('unicodePwd', [Buffer.from(`"${password}"`, 'utf16le')]));
      case 'racf':
        return this.client.modify(dn, [
          replace(this.config.credential_type === 'phrase' ? 'racfPassPhrase' : 'racfPassword', [password]),
          replace('racfAttributes', ['noexpired']),
        ]);
      default:
        return this.client.modify(dn, replace('userPassword', [password]));
    }
  }

  /**
   * Applies LDIF change records in order. With `continueOnError` (deletion and rollback) every
   * record is tried and the failures are reported together (an entry to delete that is already
   * gone is no failure); otherwise the first failure stops.
   */
  async execute(records: readonly LdifRecord[], continueOnError: boolean): Promise<void> {
    const failures: string[] = [];
    for (const r of records) {
      try {
        if (r.kind === 'add') {await this.client.add(r.dn, r.attributes.map((a) => new Attribute({ type: a.type, values: bytes(a.values) })));} else if (r.kind === 'delete') {await this.client.del(r.dn);} else {
          await this.client.modify(
            r.dn,
            r.changes.map((c) => {
              const modification = new Attribute({ type: c.attribute.type, values: bytes(c.attribute.values) });
              return new Change({ operation: c.operation, modification });
            }),
          );
        }
      } catch (err) {
        // Deleting what is already gone (a revocation run twice) has done its work.
        if (continueOnError && r.kind === 'delete' && err instanceof NoSuchObjectError) continue;
        const message = `${r.kind} "${r.dn}": ${(err as Error).message}`;
        if (!continueOnError) throw new HangarError(502, [`directory: ${message}`]);
        failures.push(message);
      }
    }
    if (failures.length) throw new HangarError(502, [`directory: ${failures.join('; ')}`]);
  }
}
