import { hash } from 'node:crypto';
import { AsnConvert, AsnUtf8StringConverter, OctetString } from '@peculiar/asn1-schema';
import * as asn1 from '@peculiar/asn1-x509';
import { badInput } from '../../core/request';

/**
 * The certificate extensions the engine writes, built from @peculiar/asn1-x509's structures and
 * serialized by @peculiar/asn1-schema (no hand-written ASN.1). `RawExtension` is also what
 * @peculiar/x509's Extension objects are, so extensions read from a certificate or a CSR pass
 * through unchanged; a role's extensions are serialized once and reused.
 */
export interface RawExtension {
  readonly type: string;
  readonly critical: boolean;
  /** The extnValue's content: the DER of the extension's own structure. */
  readonly value: ArrayBuffer | Buffer;
}

const extension = (type: string, value: unknown, critical = false): RawExtension => ({ type, critical, value: AsnConvert.serialize(value) });

/** The library's Extension structure of a raw extension (critical left out when false, its default). */
export const asnExtension = (e: RawExtension) => new asn1.Extension({ extnID: e.type, critical: e.critical, extnValue: new OctetString(e.value) });

/** basicConstraints (cA is left out when false, its default). */
export const basicConstraints = (ca: boolean, pathLength: number | undefined, critical: boolean) =>
  extension(asn1.id_ce_basicConstraints, new asn1.BasicConstraints({ cA: ca, pathLenConstraint: pathLength }), critical);

/** keyUsage from flags (asn1-x509's KeyUsageFlags bits: bit i of `flags` is named bit i). */
export const keyUsage = (flags: number, critical: boolean) => extension(asn1.id_ce_keyUsage, new asn1.KeyUsage(flags), critical);

export const extendedKeyUsage = (oids: readonly string[]) => extension(asn1.id_ce_extKeyUsage, new asn1.ExtendedKeyUsage([...oids]));

export const certificatePolicies = (oids: readonly string[]) =>
  extension(asn1.id_ce_certificatePolicies, new asn1.CertificatePolicies(oids.map((o) => new asn1.PolicyInformation({ policyIdentifier: o }))));

export type SanEntry =
  | { readonly type: 'dns' | 'email' | 'ip' | 'url'; readonly value: string }
  | { readonly type: 'other'; readonly oid: string; readonly value: string };

/** Characters an IA5String holds (ASCII). */
const isIa5 = (text: string) => /^[\x00-\x7f]*$/.test(text);

/**
 * An IP address in the text the library's converter reads right: no zone, and an embedded IPv4
 * tail (`::ffff:192.0.2.1`, which it misreads) as two hexadecimal groups.
 */
function ipText(ip: string): string {
  const text = ip.replace(/%.*$/, '');
  const v4 = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (!v4) return text;
  const [a, b, c, d] = v4.slice(2).map(Number);
  return `${v4[1]}${(a * 256 + b).toString(16)}:${(c * 256 + d).toString(16)}`;
}

/** A GeneralName (otherName values as UTF8String, as the public service writes them). */
function generalName(s: SanEntry): asn1.GeneralName {
  if (s.type === 'other') {
    const value = AsnConvert.serialize(AsnUtf8StringConverter.toASN(s.value));
    return new asn1.GeneralName({ otherName: new asn1.OtherName({ typeId: s.oid, value }) });
  }
  if (s.type === 'ip') return new asn1.GeneralName({ iPAddress: ipText(s.value) });
  // Go refuses to encode these names too: IA5String is ASCII.
  if (!isIa5(s.value)) throw badInput(`subject alternate name "${s.value}" cannot be encoded as an IA5String: use ASCII (punycode for domain names)`);
  if (s.type === 'dns') return new asn1.GeneralName({ dNSName: s.value });
  if (s.type === 'email') return new asn1.GeneralName({ rfc822Name: s.value });
  return new asn1.GeneralName({ uniformResourceIdentifier: s.value });
}

export const subjectAltName = (sans: readonly SanEntry[]) =>
  extension(asn1.id_ce_subjectAltName, new asn1.SubjectAlternativeName(sans.map(generalName)));

const uri = (url: string) => generalName({ type: 'url', value: url });

/** One distribution point per URL, each a full name. */
export const crlDistributionPoints = (urls: readonly string[]) =>
  extension(asn1.id_ce_cRLDistributionPoints, new asn1.CRLDistributionPoints(urls.map((url) =>
    new asn1.DistributionPoint({ distributionPoint: new asn1.DistributionPointName({ fullName: [uri(url)] }) }))));

/** authorityInfoAccess: OCSP responders first, then CA issuers (the library's and Go's order). */
export function authorityInfoAccess(ocsp: readonly string[], caIssuers: readonly string[]): RawExtension {
  const access = (method: string) => (url: string) => new asn1.AccessDescription({ accessMethod: method, accessLocation: uri(url) });
  return extension(asn1.id_pe_authorityInfoAccess, new asn1.AuthorityInfoAccessSyntax([
    ...ocsp.map(access(asn1.id_ad_ocsp)),
    ...caIssuers.map(access(asn1.id_ad_caIssuers)),
  ]));
}

/** nameConstraints with permitted DNS subtrees (`permitted_dns_domains`), critical as RFC 5280 asks. */
export const nameConstraints = (domains: readonly string[]) =>
  extension(asn1.id_ce_nameConstraints, new asn1.NameConstraints({
    permittedSubtrees: new asn1.GeneralSubtrees(domains.map((d) => new asn1.GeneralSubtree({ base: generalName({ type: 'dns', value: d }) }))),
  }), true);

/** The key identifier of RFC 5280 4.2.1.2 method 1: SHA-1 of the SubjectPublicKeyInfo's key bits. */
export function keyIdentifier(spki: Buffer | asn1.SubjectPublicKeyInfo): Buffer {
  const info = Buffer.isBuffer(spki) ? AsnConvert.parse(spki, asn1.SubjectPublicKeyInfo) : spki;
  return hash('sha1', new Uint8Array(info.subjectPublicKey), 'buffer');
}

export const subjectKeyIdentifier = (id: Buffer) => extension(asn1.id_ce_subjectKeyIdentifier, new asn1.SubjectKeyIdentifier(id));
export const authorityKeyIdentifier = (id: Buffer) =>
  extension(asn1.id_ce_authorityKeyIdentifier, new asn1.AuthorityKeyIdentifier({ keyIdentifier: new asn1.KeyIdentifier(id) }));
