import { KeyObject } from 'node:crypto';
import { z } from 'zod';
import {
  authorityInfoAccess, basicConstraints, certificatePolicies, crlDistributionPoints, extendedKeyUsage, keyUsage, RawExtension, subjectAltName,
} from './extensions';
import { Ca, Issuers, LeafBehavior, readIssuers, resolveIssuer, signingCa } from './issuers';
import { generateIssuedKey } from './keys';
import { checkNames, glob, isHostname, parseOtherSan, RequestedNames, sanEntries } from './names';
import { DEFAULT_REF } from './refs';
import { PkiRole, RoleBody, checkRole, notAfterTime, readRole } from './roles';
import { putCert, readUrls } from './store';
import { EXT_KEY_USAGES, keyUsageFlags } from './usages';
import { CertParams, colonSerial, keyBits, keyInfo, newSerial, parseCsr, pemBlocks, privateKeyText, signCertificate, SignedCert, x509 } from './x509';
import { commaList, duration, flexibleBoolean } from '../../core/durations';
import { badInput } from '../../core/request';
import { MountStore } from '../../core/store';
import { SYSTEM_MAX_TTL } from '../../core/tokens';
import { EngineRoute, SecretsRequest, SecretsResponse } from '../../core/types';

/** Subject fields a role or a CA request sets (comma strings or lists). */
export const SubjectFields = {
  ou: commaList.optional(),
  organization: commaList.optional(),
  country: commaList.optional(),
  locality: commaList.optional(),
  province: commaList.optional(),
  street_address: commaList.optional(),
  postal_code: commaList.optional(),
  serial_number: z.string().optional(),
};

/** The names a certificate request asks for. */
export const NameFields = {
  common_name: z.string().max(1024).optional(),
  alt_names: commaList.optional(),
  ip_sans: commaList.optional(),
  uri_sans: commaList.optional(),
  other_sans: commaList.optional(),
  exclude_cn_from_sans: flexibleBoolean.default(false),
  ttl: duration().optional(),
  not_after: z.string().max(64).optional(),
};

export const OutputFields = {
  format: z.enum(['pem', 'der', 'pem_bundle'], { message: 'must be pem, der or pem_bundle' }).default('pem'),
  private_key_format: z.enum(['der', 'pkcs8', ''], { message: 'must be der or pkcs8' }).default('der'),
};

const IssueBody = z.object({ ...NameFields, ...OutputFields, serial_number: z.string().optional() });
const SignBody = IssueBody.extend({ csr: z.string({ message: 'csr is required' }).max(64 * 1024) });
const VerbatimBody = SignBody.extend({
  key_usage: commaList.optional(),
  ext_key_usage: commaList.optional(),
  ext_key_usage_oids: commaList.optional(),
});
type IssueBody = z.infer<typeof IssueBody>;
type SignBody = z.infer<typeof SignBody>;
type Subject = { readonly [K in keyof typeof SubjectFields]?: K extends 'serial_number' ? string : readonly string[] };

/** A subject in the order Go writes it (C, ST, L, street, postalCode, O, OU, CN, serialNumber). */
export function subjectOf(s: Subject, commonName: string): x509.JsonName {
  const rdns: Array<[string, readonly string[] | undefined]> = [
    ['C', s.country],
    ['ST', s.province],
    ['L', s.locality],
    ['2.5.4.9', s.street_address],
    ['2.5.4.17', s.postal_code],
    ['O', s.organization],
    ['OU', s.ou],
    ['CN', commonName ? [commonName] : undefined],
    ['2.5.4.5', s.serial_number ? [s.serial_number] : undefined],
  ];
  return rdns.filter(([, v]) => v?.length).map(([k, v]) => ({ [k]: [...v!] }));
}

/** The names of a request body: alt names split into DNS names and emails; other SANs parsed. */
export function requestedNames(b: Pick<IssueBody, 'common_name' | 'alt_names' | 'ip_sans' | 'uri_sans' | 'other_sans'>): Omit<RequestedNames, 'commonName'> {
  const alt = b.alt_names ?? [];
  return {
    dns: alt.filter((n) => !n.includes('@')),
    emails: alt.filter((n) => n.includes('@')),
    ips: b.ip_sans ?? [],
    uris: b.uri_sans ?? [],
    others: (b.other_sans ?? []).map((o) => parseOtherSan('other_sans', o)),
  };
}

/** The common name is also a SAN unless excluded: an email one if it has `@`, else a DNS one if it is a hostname. */
export function withCommonName(n: Omit<RequestedNames, 'commonName'>, cn: string, exclude: boolean): RequestedNames {
  if (!cn || exclude) return { ...n, commonName: cn };
  if (cn.includes('@')) return { ...n, commonName: cn, emails: n.emails.includes(cn) ? n.emails : [cn, ...n.emails] };
  if (isHostname(cn) && !n.dns.includes(cn)) return { ...n, commonName: cn, dns: [cn, ...n.dns] };
  return { ...n, commonName: cn };
}

/** The `not_after` in effect (the role's, else the request's) and what to do past the CA's expiry. */
export interface NotAfterRule {
  readonly notAfter?: { readonly field: string; readonly text: string };
  readonly behavior: LeafBehavior;
}

/** The role's `not_after`, else the request's, as the public service picks them. */
export function notAfterOf(roleValue: string, requestValue: string | undefined): NotAfterRule['notAfter'] {
  if (roleValue) return { field: 'not_after (role)', text: roleValue };
  return requestValue ? { field: 'not_after', text: requestValue } : undefined;
}

/**
 * notAfter of a new certificate: `not_after` when given (the role's, else the request's; not with a
 * ttl), else the requested TTL, else the role's, else the mount's default; capped (with a warning)
 * at the role's max_ttl or the mount's maximum. Past the CA's own expiry the issuer's
 * `leaf_not_after_behavior` decides: refused (err), cut to the CA's (truncate) or kept (permit).
 */
export function validity(
  req: SecretsRequest,
  ca: Ca | undefined,
  requested: number | undefined,
  roleTtl: number,
  roleMax: number,
  rule: NotAfterRule = { behavior: 'err' },
): { notAfter: Date; warnings: string[]; truncated: boolean } {
  const warnings: string[] = [];
  let notAfter: Date;
  if (rule.notAfter) {
    if (requested && requested > 0) throw badInput('Either ttl or not_after should be provided. Both should not be provided in the same request.');
    notAfter = new Date(Math.floor(notAfterTime(rule.notAfter.field, rule.notAfter.text).getTime() / 1000) * 1000);
  } else {
    const mountMax = req.mount.maxLeaseTtl || SYSTEM_MAX_TTL;
    const max = roleMax > 0 ? roleMax : mountMax;
    let ttl = requested && requested > 0 ? requested : roleTtl > 0 ? roleTtl : req.mount.defaultLeaseTtl || SYSTEM_MAX_TTL;
    if (ttl > max) {
      warnings.push(`TTL "${ttl}s" is longer than permitted maxTTL "${max}s", so maxTTL is being used`);
      ttl = max;
    }
    // Whole seconds: certificates carry no fractions, and the CA check compares like with like.
    notAfter = new Date(Math.floor(req.now / 1000) * 1000 + ttl * 1000);
  }
  let truncated = false;
  if (ca && notAfter > ca.cert.notAfter) {
    if (rule.behavior === 'truncate') {
      notAfter = ca.cert.notAfter;
      truncated = true;
    } else if (rule.behavior === 'err') {
      throw badInput(`cannot satisfy request, as TTL would result in notAfter ${notAfter.toISOString()} that is beyond the expiration of the CA certificate at ${ca.cert.notAfter.toISOString()}`);
    }
  }
  return { notAfter, warnings, truncated };
}

/** The issuer's `leaf_not_after_behavior`. */
export const leafBehaviorOf = (ca: Ca): LeafBehavior => ca.issuer.leafNotAfterBehavior;

const urlExtensionsOf = new WeakMap<object, RawExtension[]>();

/** The URL extensions of a set of URLs (made once per stored value unless templated). */
function urlExtensionsOfUrls(urls: { readonly [K in 'crl_distribution_points' | 'issuing_certificates' | 'ocsp_servers']: readonly string[] }): RawExtension[] {
  const out: RawExtension[] = [];
  if (urls.crl_distribution_points.length) out.push(crlDistributionPoints(urls.crl_distribution_points));
  if (urls.issuing_certificates.length || urls.ocsp_servers.length) out.push(authorityInfoAccess(urls.ocsp_servers, urls.issuing_certificates));
  return out;
}

/**
 * CRL distribution points and issuing-certificate URLs of an issuer: its own when set, else
 * config/urls. Templated URLs (an issuer's `enable_aia_url_templating`, config/urls'
 * `enable_templating`) have `{{issuer_id}}`, `{{cluster_path}}` and `{{cluster_aia_path}}` replaced
 * (config/cluster), as the public service.
 */
export async function urlExtensionsFor(store: MountStore, ca: Ca | undefined): Promise<RawExtension[]> {
  const aia = ca?.issuer.aia ?? (await readUrls(store));
  if (aia.enable_templating) {
    const cluster = { path: '', aia_path: '', ...(await store.get<{ path: string; aia_path: string }>('config/cluster')) };
    const fill = (url: string) => url.replace(/{{(issuer_id|cluster_path|cluster_aia_path)}}/g, (_, name: string) => {
      const value = name === 'issuer_id' ? ca?.issuer.id : name === 'cluster_path' ? cluster.path : cluster.aia_path || cluster.path;
      if (!value) throw badInput(`unable to template AIA URLs: {{${name}}} has no value here (set config/cluster's path and aia_path)`);
      return value;
    });
    return urlExtensionsOfUrls({
      crl_distribution_points: aia.crl_distribution_points.map(fill),
      issuing_certificates: aia.issuing_certificates.map(fill),
      ocsp_servers: aia.ocsp_servers.map(fill),
    });
  }
  let out = urlExtensionsOf.get(aia);
  if (!out) urlExtensionsOf.set(aia, (out = urlExtensionsOfUrls(aia)));
  return out;
}

const noCa = () => badInput('backend must be configured with a CA certificate/key (root/generate, intermediate/set-signed or config/ca)');

/** The issuer a request names (`issuer/:ref/...`), else `fallback`, ready to sign; a 400 when there is none. */
export function signingIssuer(issuers: Issuers, ref: string | undefined, fallback = DEFAULT_REF): Ca & { key: KeyObject } {
  if (!issuers.byId.size) throw noCa();
  return signingCa(resolveIssuer(issuers, ref ?? fallback));
}

/** The signing issuer of a CA request (`root/sign-intermediate`, `issuer/:ref/sign-intermediate`, ...) read from the request's store. */
export async function requireCa(req: SecretsRequest): Promise<Ca & { key: KeyObject }> {
  return signingIssuer(await readIssuers(req.store), req.params.ref);
}

/** The certificate fields of the response in the requested format. */
export function certificateData(format: 'pem' | 'der' | 'pem_bundle', cert: SignedCert, chain: readonly string[], privateKey?: string): Record<string, unknown> {
  const der = (p: string) => pemBlocks(p)[0].der.toString('base64');
  const text = cert.pem;
  const data: Record<string, unknown> = {
    certificate: format === 'der' ? cert.der.toString('base64') : text,
    issuing_ca: format === 'der' ? der(chain[0]) : chain[0],
    ca_chain: format === 'der' ? chain.map(der) : chain,
    serial_number: colonSerial(cert.serialNumber),
    expiration: Math.floor(cert.notAfter.getTime() / 1000),
  };
  if (format === 'pem_bundle') data.certificate = [privateKey, text, ...chain].filter((p) => p).join('\n');
  return data;
}

/** What issuing and signing read: the role (when named), the signing issuer and its URL extensions. */
interface IssuingState {
  readonly role?: PkiRole;
  readonly ca: Ca & { key: KeyObject };
  readonly urls: readonly RawExtension[];
}

/**
 * Reads the issuing state in a read-only transaction of its own. These routes run outside the
 * request's transactions (`ownTransactions`): key generation and signing never hold the database,
 * and a `no_store` certificate without a lease needs no write transaction at all. The issuer is the
 * path's (`issuer/:ref/issue/:role`), else the role's `issuer_ref`, else the default.
 */
function issuingState(req: SecretsRequest, roleName: string | undefined): Promise<IssuingState & { missingRole?: boolean }> {
  return req.engine.storage.tx(async (db) => {
    const store = req.core.store(db, req.mount);
    const role = roleName === undefined ? undefined : await readRole(store, roleName);
    if (roleName !== undefined && !role) return { missingRole: true } as IssuingState & { missingRole: boolean };
    const ca = signingIssuer(await readIssuers(store), req.params.ref, role?.issuer_ref);
    return { role, ca, urls: await urlExtensionsFor(store, ca) };
  }, { readOnly: true });
}

/** The issuing state of a route naming a role (`:role`): unknown roles are refused. */
async function withRole(req: SecretsRequest): Promise<IssuingState & { role: PkiRole }> {
  const state = await issuingState(req, req.params.role);
  if (state.missingRole) throw badInput(`unknown role: ${req.params.role}`);
  return state as IssuingState & { role: PkiRole };
}

const caOf = (state: IssuingState) => state.ca;

const roleExtensionsOf = new WeakMap<PkiRole, { beforeNames: RawExtension[]; afterNames: RawExtension[] }>();

/** The extensions a role fixes (basic constraints, usages, policies), made once per stored role. */
function roleExtensions(role: PkiRole) {
  let found = roleExtensionsOf.get(role);
  if (!found) {
    const eku = [
      ...(role.server_flag ? [EXT_KEY_USAGES.ServerAuth] : []),
      ...(role.client_flag ? [EXT_KEY_USAGES.ClientAuth] : []),
      ...(role.code_signing_flag ? [EXT_KEY_USAGES.CodeSigning] : []),
      ...(role.email_protection_flag ? [EXT_KEY_USAGES.EmailProtection] : []),
      ...role.ext_key_usage.map((n) => EXT_KEY_USAGES[n]),
      ...role.ext_key_usage_oids,
    ];
    found = {
      beforeNames: [
        ...(role.basic_constraints_valid_for_non_ca ? [basicConstraints(false, undefined, true)] : []),
        ...(role.key_usage.length ? [keyUsage(keyUsageFlags(role.key_usage), true)] : []),
        ...(eku.length ? [extendedKeyUsage([...new Set(eku)])] : []),
      ],
      afterNames: role.policy_identifiers.length ? [certificatePolicies(role.policy_identifiers)] : [],
    };
    // Roles read from storage are shared while unchanged; verbatim roles are made per request.
    roleExtensionsOf.set(role, found);
  }
  return found;
}

interface LeafInput {
  readonly role: PkiRole;
  readonly names: RequestedNames;
  readonly subject: x509.JsonName | x509.Name;
  readonly spki: CertParams['spki'];
  readonly ttl?: number;
  /** The request's `not_after` (the role's wins). */
  readonly notAfter?: string;
}

/**
 * Builds and signs a leaf certificate: the role's key usages, extended key usages (flags, names and
 * OIDs), policies, basic constraints, validity.
 */
async function issueLeaf(req: SecretsRequest, state: IssuingState, input: LeafInput): Promise<{ cert: SignedCert; warnings: string[] }> {
  const { role } = input;
  const ca = caOf(state);
  const { notAfter, warnings } = validity(req, ca, input.ttl, role.ttl, role.max_ttl, {
    notAfter: notAfterOf(role.not_after, input.notAfter),
    behavior: leafBehaviorOf(ca),
  });
  const fixed = roleExtensions(role);
  const sans = sanEntries(input.names);
  const cert = await signCertificate({
    serial: newSerial(),
    subject: input.subject,
    issuer: ca.cert,
    notBefore: new Date(req.now - role.not_before_duration * 1000),
    notAfter,
    spki: input.spki,
    extensions: [...fixed.beforeNames, ...(sans.length ? [subjectAltName(sans)] : []), ...fixed.afterNames, ...state.urls],
    signer: ca.key,
    signature: { bits: role.signature_bits, pss: role.use_pss },
  });
  return { cert, warnings };
}

/**
 * The response of issue and sign: data, warnings, a lease when the role asks for one, and the
 * certificate stored with it unless the role says `no_store`.
 */
function issued(role: PkiRole, cert: SignedCert, data: Record<string, unknown>, warnings: string[], now: number): SecretsResponse {
  if (role.no_store) return { data, warnings };
  const lease = role.generate_lease
    ? { ttl: Math.max(1, Math.ceil((cert.notAfter.getTime() - now) / 1000)), renewable: false, internal: { serial: colonSerial(cert.serialNumber) } }
    : undefined;
  return { data, warnings, lease, writes: (store) => putCert(store, cert) };
}

function commonNameOf(role: PkiRole, given: string | undefined, fromCsr?: string): string {
  const cn = (role.use_csr_common_name && fromCsr) || given || '';
  if (!cn && role.require_cn) {
    throw badInput('the common_name field is required, or must be provided in a CSR with "use_csr_common_name" set to true, unless "require_cn" is set to false');
  }
  return cn;
}

/** The subject of a role's certificate; a requested serial_number must match `allowed_serial_numbers` when the role has any. */
function subjectFromRole(role: PkiRole, cn: string, serial?: string): x509.JsonName {
  if (serial && role.allowed_serial_numbers.length && !role.allowed_serial_numbers.some((p) => glob(p, serial))) {
    throw badInput(`serial_number ${serial} not allowed by this role`);
  }
  return subjectOf({ ...role, serial_number: serial || role.serial_number }, cn);
}

async function issue(req: SecretsRequest<IssueBody>): Promise<SecretsResponse> {
  const state = await withRole(req);
  const { role } = state;
  if (role.key_type === 'any') throw badInput('role key type "any" not allowed for issuing certificates, only signing');
  const ca = caOf(state);
  const b = req.body;
  const cn = commonNameOf(role, b.common_name);
  const names = withCommonName(requestedNames(b), cn, b.exclude_cn_from_sans);
  checkNames(role, names, false);
  const key = await generateIssuedKey(role.key_type, keyBits('key_bits', role.key_type, role.key_bits), b.private_key_format === 'pkcs8');
  const subject = subjectFromRole(role, cn, b.serial_number);
  const { cert, warnings } = await issueLeaf(req, state, { role, names, subject, spki: key.spki, ttl: b.ttl, notAfter: b.not_after });
  const privateKey = privateKeyText(key.privateKey, key.label, b.format === 'der' ? 'der' : 'pem');
  return issued(role, cert, {
    ...certificateData(b.format, cert, ca.chain, privateKey),
    private_key: privateKey,
    private_key_type: role.key_type,
  }, warnings, req.now);
}

/** The names a CSR carries (its SAN extension). */
function csrNames(csr: x509.Pkcs10CertificateRequest): Omit<RequestedNames, 'commonName'> {
  const san = (csr.getExtension('2.5.29.17') as x509.SubjectAlternativeNameExtension | null);
  const items = san?.names.items ?? [];
  const of = (t: string) => items.filter((i) => i.type === t).map((i) => i.value);
  return { dns: of('dns'), emails: of('email'), ips: of('ip'), uris: of('url'), others: [] };
}

/** A CSR's key must be of the role's type (unless `any`) and at least its size. */
function checkCsrKey(role: PkiRole, key: KeyObject): void {
  if (role.key_type === 'any') return;
  const { type, bits } = keyInfo(key);
  if (type !== role.key_type) throw badInput(`role requires keys of type ${role.key_type}, but the CSR has a ${type} key`);
  if (type === 'rsa' && bits < role.key_bits) throw badInput(`RSA keys < ${role.key_bits} bits are unsafe and not supported: got ${bits}`);
  if (type === 'ec' && bits !== role.key_bits) throw badInput(`role requires EC key size ${role.key_bits}, but the CSR has ${bits}`);
}

async function sign(req: SecretsRequest<SignBody>, state: IssuingState, role: PkiRole, verbatim: boolean): Promise<SecretsResponse> {
  const ca = caOf(state);
  const b = req.body;
  const { csr, publicKey, spki } = parseCsr('csr', b.csr);
  checkCsrKey(role, publicKey);
  const csrCn = csr.subjectName.getField('CN')[0];
  const cn = verbatim ? csrCn ?? '' : commonNameOf(role, b.common_name, csrCn);
  const base = role.use_csr_sans ? csrNames(csr) : requestedNames(b);
  const names = withCommonName(verbatim ? base : { ...base, others: requestedNames(b).others }, cn, b.exclude_cn_from_sans || verbatim);
  checkNames(role, names, verbatim);
  const subject = verbatim ? csr.subjectName : subjectFromRole(role, cn, b.serial_number);
  const { cert, warnings } = await issueLeaf(req, state, { role, names, subject, spki, ttl: b.ttl, notAfter: b.not_after });
  return issued(role, cert, certificateData(b.format, cert, ca.chain), warnings, req.now);
}

/**
 * The role of sign-verbatim: any name, the CSR's subject and SANs, usages from the request; TTLs,
 * lease and storage from the named role when there is one (the public service's rules).
 */
function verbatimRole(req: SecretsRequest<z.infer<typeof VerbatimBody>>, named: PkiRole | undefined): PkiRole {
  const b = req.body;
  const base = checkRole(RoleBody.parse({
    allow_any_name: true,
    enforce_hostnames: false,
    key_type: 'any',
    allowed_uri_sans: ['*'],
    allowed_other_sans: ['*'],
    server_flag: false,
    client_flag: false,
    key_usage: b.key_usage ?? ['DigitalSignature', 'KeyAgreement', 'KeyEncipherment'],
    ext_key_usage: b.ext_key_usage ?? [],
    ext_key_usage_oids: b.ext_key_usage_oids ?? [],
  }));
  if (!named) return base;
  const { ttl, max_ttl, generate_lease, no_store, not_before_duration } = named;
  return { ...base, ttl, max_ttl, generate_lease, no_store, not_before_duration };
}

async function signVerbatim(req: SecretsRequest<z.infer<typeof VerbatimBody>>): Promise<SecretsResponse> {
  const state = req.params.role ? await withRole(req) : await issuingState(req, undefined);
  return sign(req, state, verbatimRole(req, state.role), true);
}

/** `issue/:role`, `sign/:role`, `sign-verbatim(/:role)`: outside transactions (see issuingState). */
export const issueRoutes: EngineRoute[] = [
  { pattern: 'issue/:role', body: IssueBody, ownTransactions: ['update'], write: issue },
  {
    pattern: 'sign/:role',
    body: SignBody,
    ownTransactions: ['update'],
    write: async (req) => {
      const state = await withRole(req);
      return sign(req, state, state.role, false);
    },
  },
  { pattern: 'sign-verbatim', body: VerbatimBody, ownTransactions: ['update'], write: signVerbatim },
  { pattern: 'sign-verbatim/:role', body: VerbatimBody, ownTransactions: ['update'], write: signVerbatim },
];

/** The same paths under `issuer/:ref/`: the named issuer signs whatever the role's `issuer_ref` says. */
export const issuerIssueRoutes: EngineRoute[] = issueRoutes.map((r) => ({ ...r, pattern: `issuer/:ref/${r.pattern}` }));
