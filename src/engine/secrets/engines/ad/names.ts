import type { AdConfig } from './config';
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
export function accountKey(config: Pick<AdConfig, 'case_sensitive_names'>, name: string): string {
  return encodeURIComponent(config.case_sensitive_names ? name : name.toLowerCase());
}

/** The library set an account belongs to (`accounts/<key>`), if any. */
export async function libraryOwner(store: MountStore, config: Pick<AdConfig, 'case_sensitive_names'>, name: string): Promise<string | undefined> {
  return (await store.get<{ set: string }>(`accounts/${accountKey(config, name)}`))?.set;
}

/** The role whose service account is `name`, if any (roles are few: a scan is fine). */
export async function roleUsing(store: MountStore, config: Pick<AdConfig, 'case_sensitive_names'>, name: string): Promise<string | undefined> {
  const key = accountKey(config, name);
  for (const role of await store.list('roles/')) {
    const r = await store.get<{ service_account_name: string }>(`roles/${role}`);
    if (r && accountKey(config, r.service_account_name) === key) return role;
  }
  return undefined;
}

/** The names under `dir` as a list response; none is a 404, as the public service answers an empty list. */
export async function listResponse(store: MountStore, dir: string): Promise<{ data: { keys: string[] } }> {
  const keys = (await store.list(dir)).filter((k) => !k.endsWith('/'));
  if (keys.length === 0) throw missing();
  return { data: { keys } };
}
