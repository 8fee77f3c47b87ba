import { isIP } from 'node:net';
import type { SanEntry } from './extensions';
import type { PkiRole } from './roles';
import { badInput } from '../../core/request';

/** A DNS name as the public service's `enforce_hostnames` accepts it (labels of letters, digits, hyphens). */
const HOSTNAME = /^(([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])\.)*([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])\.?$/;
/** A wildcard label: one `*`, optionally with letters around it (`*`, `foo*`, `*-bar`). */
const WILDCARD_LABEL = /^[a-zA-Z0-9-]*\*[a-zA-Z0-9-]*$/;

export const isHostname = (name: string) => name.length <= 253 && HOSTNAME.test(name);

/** `*` matches any run of characters, the rest literally (the public service's go-glob). */
export function glob(pattern: string, value: string): boolean {
  if (pattern === '*') return true;
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === value;
  if (!value.startsWith(parts[0])) return false;
  let at = parts[0].length;
  for (let i = 1; i < parts.length - 1; i++) {
    const found = value.indexOf(parts[i], at);
    if (found < 0) return false;
    at = found + parts[i].length;
  }
  const last = parts[parts.length - 1];
  return value.length - last.length >= at && value.endsWith(last);
}

/**
 * Whether a role allows a name (a DNS name or an email address), the public service's rules: the
 * switches are additive; for an email the part after `@` is checked; a wildcard's first label is
 * set aside and the rest must be the allowed domain itself or below it (with `allow_subdomains`).
 */
export function nameAllowed(role: PkiRole, name: string): boolean {
  let reduced = name;
  let emailDomain = name;
  let isEmail = false;
  let isWildcard = false;
  let wildcardLabel = '';
  if (reduced.includes('@')) {
    const parts = reduced.split('@');
    if (parts.length !== 2) return false;
    reduced = emailDomain = parts[1];
    isEmail = true;
  }
  if (reduced.includes('*')) {
    isWildcard = true;
    if (!role.allow_wildcard_certificates) return false;
    const dot = reduced.indexOf('.');
    wildcardLabel = dot < 0 ? reduced : reduced.slice(0, dot);
    const rest = dot < 0 ? '' : reduced.slice(dot + 1);
    // Only the first label may hold the (single) wildcard.
    if (!wildcardLabel.includes('*') || rest.includes('*') || wildcardLabel.indexOf('*') !== wildcardLabel.lastIndexOf('*')) return false;
    reduced = rest;
  }
  if (isEmail && isWildcard) return false;
  if (role.enforce_hostnames) {
    if (reduced !== '' && !isHostname(reduced)) return false;
    if (isWildcard && !WILDCARD_LABEL.test(wildcardLabel)) return false;
  }
  if (role.allow_any_name) return true;
  if (role.allow_localhost) {
    if (['localhost', 'localdomain'].includes(reduced) || (isEmail && ['localhost', 'localdomain'].includes(emailDomain))) return true;
    if (role.allow_subdomains && ['localhost', 'localdomain'].some((d) => reduced.endsWith(`.${d}`) || (isWildcard && reduced === d))) return true;
  }
  for (const domain of role.allowed_domains) {
    if (domain === '') continue;
    const lower = domain.toLowerCase();
    if (role.allow_bare_domains && (name.toLowerCase() === lower || (isEmail && emailDomain.toLowerCase() === lower))) return true;
    if (role.allow_subdomains && (reduced.toLowerCase().endsWith(`.${lower}`) || (isWildcard && reduced.toLowerCase() === lower))) return true;
    if (role.allow_glob_domains && domain.includes('*') && glob(domain, name)) return true;
  }
  return false;
}

/** An `other_sans` entry `<oid>;UTF8:<value>` (also `UTF-8`). */
export function parseOtherSan(field: string, entry: string): { oid: string; value: string } {
  const m = /^([0-9]+(?:\.[0-9]+)+);(UTF-?8):(.*)$/i.exec(entry);
  if (!m) throw badInput(`${field}: "${entry}" must be <oid>;UTF8:<value>`);
  return { oid: m[1], value: m[3] };
}

/** Whether the role's `allowed_other_sans` permits an entry (`*` alone allows any; value `*` any value of the OID). */
function otherSanAllowed(role: PkiRole, oid: string, value: string): boolean {
  return role.allowed_other_sans.some((allowed) => {
    if (allowed === '*') return true;
    const a = parseOtherSan('allowed_other_sans', allowed);
    return a.oid === oid && glob(a.value, value);
  });
}

export interface RequestedNames {
  readonly commonName: string;
  readonly dns: readonly string[];
  readonly emails: readonly string[];
  readonly ips: readonly string[];
  readonly uris: readonly string[];
  readonly others: ReadonlyArray<{ oid: string; value: string }>;
}

/**
 * Checks every requested name against the role (common name, DNS and email SANs, IP, URI and other
 * SANs) with the public service's messages; `verbatim` skips the domain rules (sign-verbatim).
 */
export function checkNames(role: PkiRole, n: RequestedNames, verbatim: boolean): void {
  if (!verbatim) {
    if (n.commonName && !nameAllowed(role, n.commonName)) throw badInput(`common name ${n.commonName} not allowed by this role`);
    for (const name of [...n.dns, ...n.emails]) {
      if (!nameAllowed(role, name)) throw badInput(`subject alternate name ${name} not allowed by this role`);
    }
  }
  for (const ip of n.ips) {
    if (!isIP(ip)) throw badInput(`ip_sans: "${ip}" is not an IP address`);
    if (!role.allow_ip_sans) throw badInput(`IP Subject Alternative Names are not allowed in this role, but was provided ${ip}`);
  }
  for (const uri of n.uris) {
    if (!URL.canParse(uri)) throw badInput(`uri_sans: "${uri}" is not a URI`);
    if (!role.allowed_uri_sans.length) throw badInput('URI Subject Alternative Names are not allowed in this role, but were provided via the API');
    if (!role.allowed_uri_sans.some((p) => glob(p, uri))) throw badInput(`URI Subject Alternative Name ${uri} not allowed by this role`);
  }
  for (const o of n.others) {
    if (!otherSanAllowed(role, o.oid, o.value)) throw badInput(`other SAN ${o.oid};UTF8:${o.value} not allowed by this role (allowed_other_sans)`);
  }
}

/** The subjectAltName entries of checked names. */
export function sanEntries(n: RequestedNames): SanEntry[] {
  return [
    ...n.dns.map((value) => ({ type: 'dns' as const, value })),
    ...n.emails.map((value) => ({ type: 'email' as const, value })),
    ...n.ips.map((value) => ({ type: 'ip' as const, value })),
    ...n.uris.map((value) => ({ type: 'url' as const, value })),
    ...n.others.map((o) => ({ type: 'other' as const, ...o })),
  ];
}
