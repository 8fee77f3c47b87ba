import { z } from 'zod';
import { readRole } from './store';
import { KEY_USAGES, EXT_KEY_USAGES, checkOid, usageName } from './usages';
import { keyBits, KeyType } from './x509';
import { commaList, duration, flexibleBoolean, flexibleInt } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { EngineRoute, SecretsRequest } from '../../core/types';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/;

/** Every role field of the spec, with its default (the public service's). */
export const RoleBody = z.object({
  ttl: duration().optional(),
  max_ttl: duration().optional(),
  allow_localhost: flexibleBoolean.default(true),
  allowed_domains: commaList.default([]),
  allow_bare_domains: flexibleBoolean.default(false),
  allow_subdomains: flexibleBoolean.default(false),
  allow_glob_domains: flexibleBoolean.default(false),
  allow_wildcard_certificates: flexibleBoolean.default(true),
  allow_any_name: flexibleBoolean.default(false),
  enforce_hostnames: flexibleBoolean.default(true),
  allow_ip_sans: flexibleBoolean.default(true),
  allowed_uri_sans: commaList.default([]),
  allowed_other_sans: commaList.default([]),
  server_flag: flexibleBoolean.default(true),
  client_flag: flexibleBoolean.default(true),
  code_signing_flag: flexibleBoolean.default(false),
  email_protection_flag: flexibleBoolean.default(false),
  key_type: z.enum(['rsa', 'ec', 'ed25519', 'any'], { message: 'must be rsa, ec, ed25519 or any' }).default('rsa'),
  key_bits: flexibleInt.default(0),
  key_usage: commaList.default(['DigitalSignature', 'KeyAgreement', 'KeyEncipherment']),
  ext_key_usage: commaList.default([]),
  ext_key_usage_oids: commaList.default([]),
  use_csr_common_name: flexibleBoolean.default(true),
  use_csr_sans: flexibleBoolean.default(true),
  ou: commaList.default([]),
  organization: commaList.default([]),
  country: commaList.default([]),
  locality: commaList.default([]),
  province: commaList.default([]),
  street_address: commaList.default([]),
  postal_code: commaList.default([]),
  serial_number: z.string().default(''),
  generate_lease: flexibleBoolean.default(false),
  no_store: flexibleBoolean.default(false),
  require_cn: flexibleBoolean.default(true),
  policy_identifiers: commaList.default([]),
  basic_constraints_valid_for_non_ca: flexibleBoolean.default(false),
  not_before_duration: duration().default(30),
});

export type PkiRole = Omit<z.infer<typeof RoleBody>, 'ttl' | 'max_ttl' | 'key_type'> & {
  readonly ttl: number;
  readonly max_ttl: number;
  readonly key_type: KeyType | 'any';
};

export function roleName(req: SecretsRequest): string {
  const name = req.params.name;
  if (!NAME.test(name)) throw badInput(`role name "${name}" is invalid: use letters, digits, ".", "_", "-", "@"`);
  return name;
}

/** Checks a written role and fills in its derived defaults. */
export function checkRole(b: z.infer<typeof RoleBody>): PkiRole {
  const ttl = b.ttl ?? 0;
  const maxTtl = b.max_ttl ?? 0;
  if (maxTtl > 0 && ttl > maxTtl) throw badInput(`ttl (${ttl}s) cannot be larger than max_ttl (${maxTtl}s)`);
  const bits = b.key_type === 'any' ? 0 : keyBits('key_bits', b.key_type, b.key_bits);
  const keyUsage = b.key_usage.map((u) => usageName('key_usage', u, KEY_USAGES));
  const extKeyUsage = b.ext_key_usage.map((u) => usageName('ext_key_usage', u, EXT_KEY_USAGES));
  b.ext_key_usage_oids.forEach((oid) => checkOid('ext_key_usage_oids', oid));
  b.policy_identifiers.forEach((oid) => checkOid('policy_identifiers', oid));
  for (const entry of b.allowed_other_sans) {
    if (entry !== '*' && !/^[0-9.]+;UTF-?8:.*$/i.test(entry)) {
      throw badInput(`allowed_other_sans: "${entry}" must be <oid>;UTF8:<value> (value "*" allows any) or "*"`);
    }
  }
  for (const c of b.country) if (!/^[A-Za-z]{2}$/.test(c)) throw badInput(`country: "${c}" is not a two-letter country code`);
  return { ...b, ttl, max_ttl: maxTtl, key_bits: bits, key_usage: keyUsage, ext_key_usage: extKeyUsage };
}

/** The role as read (durations in seconds, as the public service shows them). */
function shown(role: PkiRole): Record<string, unknown> {
  return { ...role };
}

/** `roles/:name` and the role list. Deleting a role leaves its certificates valid. */
export const roleRoutes: EngineRoute[] = [
  {
    pattern: 'roles',
    readOnly: true,
    list: async (req) => ({ data: { keys: (await req.store.list('roles/')).filter((k) => !k.endsWith('/')) } }),
  },
  {
    pattern: 'roles/:name',
    body: RoleBody,
    exists: async (req) => NAME.test(req.params.name) && req.store.exists(`roles/${req.params.name}`),
    read: async (req) => {
      const role = await readRole(req.store, roleName(req));
      if (!role) throw missing();
      return { data: shown(role) };
    },
    write: async (req) => {
      const name = roleName(req);
      const role = checkRole(req.body as z.infer<typeof RoleBody>);
      await req.store.put(`roles/${name}`, role);
      return { data: shown(role) };
    },
    delete: async (req) => {
      await req.store.delete(`roles/${roleName(req)}`);
      return undefined;
    },
  },
];
