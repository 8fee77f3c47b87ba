import type { DirectoryConfig } from './settings';
import { badInput, missing } from '../../core/request';
import type { MountStore } from '../../core/store';

/** Role and library set names (one URL segment). */
export const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/;

/** A service account name: a UPN, sAMAccountName, uid or DN; printable, bounded. */
export function checkAccountName(field: string, name: string): void {
  if (name.trim() === '' || name.length > 1024 || /[\u0000-\u001f\u007f]/.test(name)) {
    throw badInput(`${field}: "${name.slice(0, 64)}" is not a service account name (printable text, at most 1024 characters)`);
  }
}

/** The storage key of an account name: names compare case-insensitively unless `case_sensitive_names`. */
export function accountKey(config: Pick<DirectoryConfig, 'case_sensitive_names'>, name: string): string {
  return encodeURIComponent(config.case_sensitive_names ? name : name.toLowerCase());
}

/** The library set an account belongs to (`accounts/<key>`), if any. */
export async function libraryOwner(store: MountStore, config: Pick<DirectoryConfig, 'case_sensitive_names'>, name: string): Promise<string | undefined> {
  return (await store.get<{ set: string }>(`accounts/${accountKey(config, name)}`))?.set;
}

/** Every key under `dir`, sub-folders included (hierarchical names such as `org/team/app`). */
export async function keysUnder(store: MountStore, dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const k of await store.list(dir)) {
    if (k.endsWith('/')) for (const sub of await keysUnder(store, dir + k)) out.push(k + sub);
    else out.push(k);
  }
  return out;
}

/** Where an engine keeps its password-rotating roles, and the field naming each one's account. */
export interface RoleIndex {
  readonly dir: string;
  readonly field: string;
}

/** The `ad` engine's roles (`roles/:name`, `service_account_name`). */
export const AD_ROLES: RoleIndex = { dir: 'roles/', field: 'service_account_name' };

/** The role whose account is `name`, if any (roles are few: a scan is fine). */
export async function roleUsing(store: MountStore, config: Pick<DirectoryConfig, 'case_sensitive_names'>, name: string, roles: RoleIndex): Promise<string | undefined> {
  const key = accountKey(config, name);
  for (const role of await keysUnder(store, roles.dir)) {
    const r = await store.get<Record<string, unknown>>(`${roles.dir}${role}`);
    const account = r?.[roles.field];
    if (typeof account === 'string' && accountKey(config, account) === key) return role;
  }
  return undefined;
}

/**
 * The names under `dir` as a list response; none is a 404, as the public service answers an empty
 * list. Sub-folders are listed (`org/`) where names are hierarchical.
 */
export async function listResponse(store: MountStore, dir: string, folders = false): Promise<{ data: { keys: string[] } }> {
  const keys = (await store.list(dir)).filter((k) => folders || !k.endsWith('/'));
  if (keys.length === 0) throw missing();
  return { data: { keys } };
}
