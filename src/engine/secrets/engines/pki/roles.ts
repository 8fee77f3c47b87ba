import { z } from 'zod';
import { findIssuer, readIssuers } from './issuers';
import { DEFAULT_REF } from './refs';
import { KEY_USAGES, EXT_KEY_USAGES, checkOid, usageName } from './usages';
import { keyBits, KeyType } from './x509';
import { commaList, duration, flexibleBoolean, flexibleInt } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { MountStore, SealedMemo } from '../../core/store';
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
  allowed_domains_template: flexibleBoolean.default(false),
  allowed_uri_sans_template: flexibleBoolean.default(false),
  allowed_serial_numbers: commaList.default([]),
  allowed_user_ids: commaList.default([]),
  cn_validations: commaList.default([]),
  signature_bits: flexibleInt.default(0),
  use_pss: flexibleBoolean.default(false),
  not_after: z.string().max(64).default(''),
  issuer_ref: z.string().max(256).default(DEFAULT_REF),
  serial_number_source: z.enum(['json-csr', 'json'], { message: 'must be json-csr or json' }).default('json-csr'),
});

export type PkiRole = Omit<z.infer<typeof RoleBody>, 'ttl' | 'max_ttl' | 'key_type'> & {
  readonly ttl: number;
  readonly max_ttl: number;
  readonly key_type: KeyType | 'any';
  /** Shown, never set: the public service removed the setting and shows false. */
  readonly allow_token_displayname: false;
};

/** The RFC 3339 time of a `not_after` field (role or request), or a 400 naming it. */
export function notAfterTime(field: string, text: string): Date {
  const at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text) ? new Date(text) : undefined;
  if (!at || Number.isNaN(at.getTime())) throw badInput(`${field}: "${text}" is not an RFC 3339 time (such as 2030-12-31T23:59:59Z)`);
  return at;
}

/** The hash size a role signs with: RSA defaults to 256 and takes 256, 384 or 512; other types keep what is given (EC signs with its curve's hash). */
function signatureBits(keyType: string, bits: number): number {
  if (keyType !== 'rsa') return keyType === 'ec' ? bits : 0;
  const b = bits || 256;
  if (![256, 384, 512].includes(b)) throw badInput(`signature_bits: unsupported hash signature algorithm: ${bits} (use 256, 384 or 512)`);
  return b;
}

/** `cn_validations`: `email`, `hostname` (each once) or `disabled` alone; empty is both checks. */
function cnValidations(given: readonly string[]): string[] {
  if (!given.length) return ['email', 'hostname'];
  const seen = new Set<string>();
  for (const v of given.map((g) => g.toLowerCase())) {
    if (!['disabled', 'email', 'hostname'].includes(v)) throw badInput(`cn_validations: unknown value "${v}"; use email, hostname or disabled`);
    if (seen.has(v)) throw badInput(`cn_validations value incorrect: \`${v}\` specified multiple times`);
    seen.add(v);
  }
  if (seen.has('disabled') && seen.size > 1) throw badInput('cn_validations value incorrect: cannot specify `disabled` along with `email` or `hostname`');
  return [...seen];
}

/**
 * A role as stored by an earlier version (fields added since are missing) with the defaults of
 * those fields, as the public service upgrades its stored roles when it reads them.
 */
export function upgradedRole(stored: PkiRole): PkiRole {
  if (stored.issuer_ref !== undefined) return stored;
  return { ...ROLE_ADDITIONS, ...stored, signature_bits: signatureBits(stored.key_type, 0) };
}

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
  if (b.not_after) notAfterTime('not_after', b.not_after);
  return {
    ...b,
    ttl,
    max_ttl: maxTtl,
    key_bits: bits,
    key_usage: keyUsage,
    ext_key_usage: extKeyUsage,
    signature_bits: signatureBits(b.key_type, b.signature_bits),
    cn_validations: cnValidations(b.cn_validations),
    issuer_ref: b.issuer_ref || DEFAULT_REF,
    allow_token_displayname: false,
  };
}

/** The fields added to roles since the first stored layout, with their defaults. */
const ROLE_ADDITIONS = (() => {
  const all = checkRole(RoleBody.parse({}));
  const keys = ['allowed_domains_template', 'allowed_uri_sans_template', 'allowed_serial_numbers', 'allowed_user_ids', 'cn_validations', 'use_pss', 'not_after',
    'issuer_ref', 'serial_number_source', 'allow_token_displayname'] as const;
  return Object.fromEntries(keys.map((k) => [k, all[k]])) as Partial<PkiRole>;
})();

const roles = new SealedMemo<PkiRole>(1024);

/** A stored role (upgraded to the current fields), opened once per process while unchanged. */
export const readRole = (store: MountStore, name: string) => store.getMemo(`roles/${name}`, roles, upgradedRole);

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
      // The reference is resolved when issuing (a name may come later); an unknown one is a warning now.
      const issuers = await readIssuers(req.store);
      if (findIssuer(issuers, role.issuer_ref)) return { data: shown(role) };
      const warning = role.issuer_ref === DEFAULT_REF
        ? 'Issuing Certificate was set to default, but no default issuing certificate (configurable at /config/issuers) is currently set'
        : `Issuing Certificate was set to ${role.issuer_ref} but no issuing certificate currently has that name`;
      return { data: shown(role), warnings: [warning] };
    },
    delete: async (req) => {
      await req.store.delete(`roles/${roleName(req)}`);
      return undefined;
    },
  },
];
