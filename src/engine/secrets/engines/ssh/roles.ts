import { z } from 'zod';
import { duration, flexibleBoolean, flexibleInt } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import type { MountStore } from '../../core/store';
import { checkCidr } from '../../core/tokens';
import { EngineRoute, SecretsRequest } from '../../core/types';

/** Vault's role names (framework.GenericNameWithAtRegex): word characters, `-`, `.`, `@` inside. */
const NAME = /^\w(?:[\w.@-]{0,126}\w)?$/;

/** A comma-separated string field, also accepted as a list (kept as the string Vault shows). */
export const commaString = z
  .union([z.string(), z.array(z.string())], { message: 'must be a comma-separated string or a list of strings' })
  .transform((v) => (Array.isArray(v) ? v.join(',') : v).trim());
/** A boolean; the empty string is false, as the public service's weak decoding reads it (hvac sends "" for unset flags). */
export const weakBoolean = z.union([z.literal('').transform(() => false), flexibleBoolean]);
/** A map of strings; numbers and booleans become their text, as the public engine's maps do. */
export const stringMap = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
  .transform((m) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, String(v)])));

/** Key type identifiers and short names `allowed_user_key_lengths` accepts as keys. */
const KEY_LENGTH_NAMES = [
  'rsa', 'ssh-rsa', 'ecdsa', 'ec', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'ed25519', 'ssh-ed25519', 'dsa', 'ssh-dss',
];
const keyLengths = z
  .record(z.string(), z.union([flexibleInt, z.array(flexibleInt), z.string().regex(/^\s*\d+(\s*,\s*\d+)*\s*$/, 'must be a bit length or a comma-separated list of them')]))
  .transform((m, ctx) => {
    const out: Record<string, number[]> = {};
    for (const [k, v] of Object.entries(m)) {
      if (!KEY_LENGTH_NAMES.includes(k)) {
        ctx.addIssue({ code: 'custom', path: [k], message: `"${k}" is not a key type: use one of ${KEY_LENGTH_NAMES.join(', ')}` });
        continue;
      }
      out[k] = typeof v === 'string' ? v.split(',').map((s) => Number(s.trim())) : Array.isArray(v) ? v : [v];
    }
    return out;
  });

const RoleBody = z.object({
  key_type: z.enum(['otp', 'ca'], { message: 'must be otp or ca (dynamic keys were removed)' }),
  default_user: z.string().max(256).optional(),
  default_user_template: weakBoolean.optional(),
  cidr_list: commaString.optional(),
  exclude_cidr_list: commaString.optional(),
  port: flexibleInt.pipe(z.number().int().min(0).max(65535, 'must be a port number')).optional(),
  allowed_users: commaString.optional(),
  allowed_users_template: weakBoolean.optional(),
  allowed_domains: commaString.optional(),
  allowed_domains_template: weakBoolean.optional(),
  allow_bare_domains: weakBoolean.optional(),
  allow_subdomains: weakBoolean.optional(),
  ttl: duration().optional(),
  max_ttl: duration().optional(),
  allowed_critical_options: commaString.optional(),
  allowed_extensions: commaString.optional(),
  default_critical_options: stringMap.nullish(),
  default_extensions: stringMap.nullish(),
  default_extensions_template: weakBoolean.optional(),
  allow_user_certificates: weakBoolean.optional(),
  allow_host_certificates: weakBoolean.optional(),
  allow_user_key_ids: weakBoolean.optional(),
  allow_empty_principals: weakBoolean.optional(),
  key_id_format: z.string().max(1024).optional(),
  allowed_user_key_lengths: keyLengths.nullish(),
  algorithm_signer: z.enum(['', 'default', 'ssh-rsa', 'rsa-sha2-256', 'rsa-sha2-512'], { message: 'must be ssh-rsa, rsa-sha2-256, rsa-sha2-512, default or blank' }).optional(),
  not_before_duration: duration().optional(),
});
type RoleBody = z.infer<typeof RoleBody>;

export interface SshRole {
  readonly key_type: 'otp' | 'ca';
  readonly default_user: string;
  readonly default_user_template: boolean;
  readonly cidr_list: string;
  readonly exclude_cidr_list: string;
  readonly port: number;
  readonly allowed_users: string;
  readonly allowed_users_template: boolean;
  readonly allowed_domains: string;
  readonly allowed_domains_template: boolean;
  readonly allow_bare_domains: boolean;
  readonly allow_subdomains: boolean;
  readonly ttl: number;
  readonly max_ttl: number;
  readonly allowed_critical_options: string;
  readonly allowed_extensions: string;
  readonly default_critical_options: Record<string, string>;
  readonly default_extensions: Record<string, string>;
  readonly default_extensions_template: boolean;
  readonly allow_user_certificates: boolean;
  readonly allow_host_certificates: boolean;
  readonly allow_user_key_ids: boolean;
  readonly allow_empty_principals: boolean;
  readonly key_id_format: string;
  readonly allowed_user_key_lengths: Record<string, number[]>;
  readonly algorithm_signer: string;
  readonly not_before_duration: number;
}

const DEFAULTS: Omit<SshRole, 'key_type'> = {
  default_user: '',
  default_user_template: false,
  cidr_list: '',
  exclude_cidr_list: '',
  port: 22,
  allowed_users: '',
  allowed_users_template: false,
  allowed_domains: '',
  allowed_domains_template: false,
  allow_bare_domains: false,
  allow_subdomains: false,
  ttl: 0,
  max_ttl: 0,
  allowed_critical_options: '',
  allowed_extensions: '',
  default_critical_options: {},
  default_extensions: {},
  default_extensions_template: false,
  allow_user_certificates: false,
  allow_host_certificates: false,
  allow_user_key_ids: false,
  allow_empty_principals: false,
  key_id_format: '',
  allowed_user_key_lengths: {},
  algorithm_signer: 'default',
  not_before_duration: 30,
};

/** Splits a comma-separated field into its trimmed, non-empty items. */
export const items = (s: string): string[] => s.split(',').map((x) => x.trim()).filter((x) => x !== '');

export function roleName(req: SecretsRequest, param = 'name'): string {
  const name = req.params[param];
  if (!NAME.test(name)) throw badInput(`role name "${name}" is invalid: use letters, digits, "_", "-", ".", "@"`);
  return name;
}

export async function readRole(req: Pick<SecretsRequest, 'store'>, name: string): Promise<SshRole | undefined> {
  const role = await req.store.get<SshRole>(`roles/${name}`);
  return role && { ...DEFAULTS, ...role };
}

const ZERO_ADDRESS = 'config/zeroaddress';

/** The roles for which any IP is allowed (their CIDR blocks ignored). */
export async function readZeroAddress(store: MountStore): Promise<string[]> {
  return (await store.get<{ roles: string[] }>(ZERO_ADDRESS))?.roles ?? [];
}

export async function writeZeroAddress(store: MountStore, roles: readonly string[]): Promise<void> {
  if (roles.length) await store.put(ZERO_ADDRESS, { roles });
  else await store.delete(ZERO_ADDRESS);
}

function checkCidrs(field: string, list: string): void {
  for (const cidr of items(list)) {
    const problem = checkCidr(cidr);
    if (problem) throw badInput(`${field}: ${problem}`);
  }
}

/** A role from a write: as the public service, a write replaces the whole role (fields left out take defaults). */
function build(b: RoleBody): SshRole {
  const given = Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined && v !== null));
  const role = { ...DEFAULTS, ...given, algorithm_signer: b.algorithm_signer || 'default' } as SshRole;
  if (role.key_type === 'otp') {
    if (!role.default_user) throw badInput('default_user is required for otp roles: the user an OTP is for when creds gives none');
    checkCidrs('cidr_list', role.cidr_list);
    checkCidrs('exclude_cidr_list', role.exclude_cidr_list);
    return role;
  }
  if (!role.allow_user_certificates && !role.allow_host_certificates) {
    throw badInput("Either 'allow_user_certificates' or 'allow_host_certificates' must be set to 'true'");
  }
  if (role.ttl && role.max_ttl && role.ttl > role.max_ttl) throw badInput('ttl: must not be greater than max_ttl');
  return role;
}

/** The role as read: the fields of its key type (CA roles show their TTLs in seconds). */
export function shown(role: SshRole): Record<string, unknown> {
  if (role.key_type === 'otp') {
    const { default_user, cidr_list, exclude_cidr_list, key_type, port, allowed_users } = role;
    return { default_user, cidr_list, exclude_cidr_list, key_type, port, allowed_users };
  }
  const { cidr_list: _c, exclude_cidr_list: _e, port: _p, ...ca } = role;
  return ca;
}

/** `roles` and `roles/:name`. */
export const roleRoutes: EngineRoute[] = [
  {
    pattern: 'roles',
    readOnly: true,
    list: async (req) => {
      const keys = (await req.store.list('roles/')).filter((k) => !k.endsWith('/'));
      // Vault answers an empty list with a 404 (clients read it as "no roles").
      if (keys.length === 0) throw missing();
      const keyInfo: Record<string, { key_type: string }> = {};
      for (const k of keys) {
        const role = await readRole(req, k);
        if (role) keyInfo[k] = { key_type: role.key_type };
      }
      return { data: { keys, key_info: keyInfo } };
    },
  },
  {
    pattern: 'roles/:name',
    body: RoleBody,
    exists: async (req) => NAME.test(req.params.name) && req.store.exists(`roles/${req.params.name}`),
    read: async (req) => {
      const role = await readRole(req, roleName(req));
      if (!role) throw missing();
      return { data: shown(role) };
    },
    write: async (req) => {
      const name = roleName(req);
      await req.store.put(`roles/${name}`, build(req.body as RoleBody));
      return undefined;
    },
    delete: async (req) => {
      const name = roleName(req);
      // A deleted role leaves the zero-address list too, so a new role of that name starts without it.
      const zero = await readZeroAddress(req.store);
      if (zero.includes(name)) await writeZeroAddress(req.store, zero.filter((r) => r !== name));
      await req.store.delete(`roles/${name}`);
      return undefined;
    },
  },
];
