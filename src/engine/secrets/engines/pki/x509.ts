import './reflect';
import { createHash, createPrivateKey, createPublicKey, generateKeyPair, KeyObject, randomBytes, sign as nodeSign, verify as nodeVerify } from 'node:crypto';
import { promisify } from 'node:util';
import { AsnConvert, AsnUtf8StringConverter, OctetString } from '@peculiar/asn1-schema';
import * as asn1 from '@peculiar/asn1-x509';
import * as x509 from '@peculiar/x509';
import { badInput } from '../../core/request';

export { x509 };

/**
 * Certificates, CSRs and CRLs are built by @peculiar/x509 and signed with node:crypto keys: the
 * library hands the to-be-signed bytes to a crypto provider, and this one signs with a KeyObject.
 * That keeps every key type node:crypto knows (P-224 included, which WebCrypto lacks) and saves a
 * key import per request.
 */

export type KeyType = 'rsa' | 'ec' | 'ed25519';

const CURVES: Record<number, { node: string; web: string; hash: string }> = {
  224: { node: 'secp224r1', web: 'P-224', hash: 'SHA-256' },
  256: { node: 'prime256v1', web: 'P-256', hash: 'SHA-256' },
  384: { node: 'secp384r1', web: 'P-384', hash: 'SHA-384' },
  521: { node: 'secp521r1', web: 'P-521', hash: 'SHA-512' },
};
x509.AsnEcSignatureFormatter.namedCurveSize.set('P-224', 28);

const RSA_BITS = [2048, 3072, 4096, 8192];

/** The key bits in effect: 0 picks the type's default; anything the type does not have is refused. */
export function keyBits(field: string, type: KeyType, bits: number): number {
  if (type === 'ed25519') return 0;
  if (type === 'rsa') {
    const b = bits || 2048;
    if (!RSA_BITS.includes(b)) throw badInput(`${field}: ${bits} is not a valid RSA key size; use 2048, 3072, 4096 or 8192`);
    return b;
  }
  const b = bits || 256;
  if (!CURVES[b]) throw badInput(`${field}: ${bits} is not a valid EC key size; use 224, 256, 384 or 521`);
  return b;
}

export interface KeyPair {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

const generate = promisify(generateKeyPair) as (type: string, options: object) => Promise<KeyPair>;

export function generateKey(type: KeyType, bits: number): Promise<KeyPair> {
  if (type === 'rsa') return generate('rsa', { modulusLength: bits });
  if (type === 'ec') return generate('ec', { namedCurve: CURVES[bits].node });
  return generate('ed25519', {});
}

/** A key's type and size as the role rules see them. */
export function keyInfo(key: KeyObject): { type: KeyType; bits: number } {
  const details = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { type: 'rsa', bits: details.modulusLength ?? 0 };
    case 'ec': {
      const bits = Number(Object.entries(CURVES).find(([, c]) => c.node === details.namedCurve)?.[0] ?? 0);
      return { type: 'ec', bits };
    }
    case 'ed25519':
      return { type: 'ed25519', bits: 0 };
    default:
      throw badInput(`unsupported key type ${key.asymmetricKeyType}: use rsa, ec or ed25519`);
  }
}

/** What the library's generators take as a signing key: the WebCrypto algorithm plus our KeyObject. */
interface NodeSigningKey {
  readonly algorithm: { name: string; hash?: string; namedCurve?: string };
  readonly key: KeyObject;
  readonly spki: Buffer;
  /** Its authority key identifier extension, made once. */
  readonly akid: x509.Extension;
}

const signingKeys = new WeakMap<KeyObject, NodeSigningKey>();

/** A CA key in the form the generators take (cached per key: CA keys are parsed once and reused). */
function signingKey(privateKey: KeyObject): NodeSigningKey {
  const cached = signingKeys.get(privateKey);
  if (cached) return cached;
  const { type, bits } = keyInfo(privateKey);
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  const algorithm = type === 'rsa'
    ? { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }
    : type === 'ec' ? { name: 'ECDSA', namedCurve: CURVES[bits].web, hash: CURVES[bits].hash } : { name: 'Ed25519' };
  const key = { algorithm, key: privateKey, spki, akid: new x509.AuthorityKeyIdentifierExtension(keyIdentifier(spki)) };
  signingKeys.set(privateKey, key);
  return key;
}

type Bytes = ArrayBuffer | ArrayBufferView;
const arrayBuffer = (b: Buffer) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
const toBuffer = (data: Bytes) => (ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data));

/** The crypto provider handed to the library's generators: signs and exports with node:crypto. */
const provider = {
  getRandomValues: <T extends ArrayBufferView>(array: T) => globalThis.crypto.getRandomValues(array as unknown as Uint8Array) as unknown as T,
  subtle: {
    async sign(algorithm: { hash?: string | { name: string } }, key: NodeSigningKey, data: Bytes): Promise<ArrayBuffer> {
      const hash = typeof algorithm.hash === 'string' ? algorithm.hash : algorithm.hash?.name;
      const digest = key.algorithm.name === 'Ed25519' ? null : hash!.replace('-', '').toLowerCase();
      // ECDSA in WebCrypto's form (r || s); the library re-encodes it as DER.
      const sig = nodeSign(digest, toBuffer(data), { key: key.key, dsaEncoding: 'ieee-p1363' });
      return arrayBuffer(sig);
    },
    async exportKey(format: string, key: NodeSigningKey): Promise<ArrayBuffer> {
      if (format !== 'spki') throw new Error(`export ${format} is not supported`);
      return arrayBuffer(key.spki);
    },
  },
} as never;

/** A positive 159-bit serial as lowercase hex (as the public service: 20 random bytes, top bit clear). */
export function newSerial(): string {
  const bytes = randomBytes(20);
  bytes[0] = (bytes[0] % 0x80) || 1;
  return bytes.toString('hex');
}

/** `1a:2b:...`, the public service's form of a serial. */
export function colonSerial(hex: string): string {
  const even = hex.length % 2 ? `0${hex}` : hex;
  return even.toLowerCase().match(/../g)!.join(':');
}

/** A serial as given (colons or hyphens, any case) in storage form (`1a-2b-...`), or undefined. */
export function storageSerial(input: string): string | undefined {
  const s = input.trim().toLowerCase().replace(/:/g, '-');
  return /^[0-9a-f]{2}(-[0-9a-f]{2})*$/.test(s) ? s : undefined;
}

export const serialKey = (hex: string) => colonSerial(hex).replace(/:/g, '-');

export function pem(type: string, der: Buffer | ArrayBuffer): string {
  const b64 = Buffer.from(der as ArrayBuffer).toString('base64');
  return `-----BEGIN ${type}-----\n${b64.match(/.{1,64}/g)!.join('\n')}\n-----END ${type}-----`;
}

/** The PEM blocks of a text, in order. */
export function pemBlocks(text: string): { type: string; der: Buffer; pem: string }[] {
  const out: { type: string; der: Buffer; pem: string }[] = [];
  for (const m of text.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g)) {
    out.push({ type: m[1], der: Buffer.from(m[2].replace(/\s+/g, ''), 'base64'), pem: m[0] });
  }
  return out;
}

/** A certificate from PEM; a 400 naming the field when it is not one. */
export function parseCertificate(field: string, text: string): x509.X509Certificate {
  try {
    return new x509.X509Certificate(text.trim());
  } catch {
    throw badInput(`${field}: not a PEM certificate`);
  }
}

export const certPem = (cert: x509.X509Certificate) => cert.toString('pem').replace(/\r\n/g, '\n').trim();

/** A private key from PEM (PKCS#1, SEC1 or PKCS#8); a 400 naming the field when it is not one. */
export function parsePrivateKey(field: string, text: string): KeyObject {
  try {
    const key = createPrivateKey(text);
    keyInfo(key);
    return key;
  } catch (err) {
    throw badInput(`${field}: not a supported PEM private key (${(err as Error).message})`);
  }
}

/** The private key in the public service's formats: `der` is PKCS#1/SEC1 (PKCS#8 for ed25519). */
export function exportPrivateKey(key: KeyObject, keyFormat: 'der' | 'pkcs8' | '', encoding: 'pem' | 'der'): string {
  const { type } = keyInfo(key);
  const der = keyFormat !== 'pkcs8' && type !== 'ed25519'
    ? key.export({ type: type === 'rsa' ? 'pkcs1' : 'sec1', format: 'der' })
    : key.export({ type: 'pkcs8', format: 'der' });
  if (encoding === 'der') return der.toString('base64');
  const label = keyFormat !== 'pkcs8' && type !== 'ed25519' ? (type === 'rsa' ? 'RSA PRIVATE KEY' : 'EC PRIVATE KEY') : 'PRIVATE KEY';
  return pem(label, der);
}

/** The private key sealed in storage: PKCS#8 PEM. */
export const storedKey = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'pem' }).toString();

/** The key identifier of RFC 5280 4.2.1.2 method 1 (SHA-1 of the public key bits), as the public service. */
export function keyIdentifier(spki: Buffer | ArrayBuffer | asn1.SubjectPublicKeyInfo): string {
  const info = spki instanceof asn1.SubjectPublicKeyInfo ? spki : AsnConvert.parse(spki, asn1.SubjectPublicKeyInfo);
  return createHash('sha1').update(Buffer.from(info.subjectPublicKey)).digest('hex');
}

export type SanEntry =
  | { readonly type: 'dns' | 'email' | 'ip' | 'url'; readonly value: string }
  | { readonly type: 'other'; readonly oid: string; readonly value: string };

/** The subjectAltName extension (otherName values as UTF8String, as the public service). */
export function sanExtension(sans: readonly SanEntry[]): x509.Extension {
  const names = sans.map((s) => {
    if (s.type === 'other') {
      const value = AsnConvert.serialize(AsnUtf8StringConverter.toASN(s.value));
      return new asn1.GeneralName({ otherName: new asn1.OtherName({ typeId: s.oid, value }) });
    }
    return AsnConvert.parse(new x509.GeneralName(s.type, s.value).rawData, asn1.GeneralName);
  });
  return new x509.Extension(asn1.id_ce_subjectAltName, false, AsnConvert.serialize(new asn1.GeneralNames(names)));
}

/** nameConstraints with permitted DNS subtrees (`permitted_dns_domains`), critical as RFC 5280 asks. */
export function nameConstraintsExtension(domains: readonly string[]): x509.Extension {
  const permitted = new asn1.GeneralSubtrees(domains.map((d) => new asn1.GeneralSubtree({ base: new asn1.GeneralName({ dNSName: d }) })));
  return new x509.Extension(asn1.id_ce_nameConstraints, true, AsnConvert.serialize(new asn1.NameConstraints({ permittedSubtrees: permitted })));
}

export interface CertParams {
  readonly serial: string;
  readonly subject: x509.JsonName | x509.Name;
  /** The issuer's subject (the subject itself when self-signed). */
  readonly issuer?: x509.Name;
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly spki: Buffer;
  readonly extensions: readonly x509.Extension[];
  readonly signer: KeyObject;
}

/** Builds and signs a certificate; adds the subject and authority key identifiers. */
/** A signed certificate: its DER and PEM, and the fields the engine stores and shows. */
export interface SignedCert {
  readonly der: Buffer;
  readonly pem: string;
  /** Lowercase hex. */
  readonly serialNumber: string;
  readonly notAfter: Date;
}

export const signedOf = (cert: x509.X509Certificate): SignedCert => ({
  der: Buffer.from(cert.rawData),
  pem: certPem(cert),
  serialNumber: cert.serialNumber.toLowerCase(),
  notAfter: cert.notAfter,
});

const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;
const NAME_OIDS: Record<string, string> = { C: '2.5.4.6', ST: '2.5.4.8', L: '2.5.4.7', O: '2.5.4.10', OU: '2.5.4.11', CN: '2.5.4.3' };
const asnNames = new WeakMap<x509.Name, asn1.Name>();

/**
 * A name as the certificate's ASN.1 type: PrintableString where the text allows it, else
 * UTF8String (as Go writes names). Parsed names are cached per object (a CA's issuer name).
 */
function asnName(name: x509.JsonName | x509.Name): asn1.Name {
  if (name instanceof x509.Name) {
    let found = asnNames.get(name);
    if (!found) asnNames.set(name, (found = AsnConvert.parse(name.toArrayBuffer(), asn1.Name)));
    return found;
  }
  return new asn1.Name(
    name.map((rdn) => new asn1.RelativeDistinguishedName(
      Object.entries(rdn).flatMap(([type, values]) => values.map((v) => new asn1.AttributeTypeAndValue({
        type: NAME_OIDS[type] ?? type,
        value: new asn1.AttributeValue(PRINTABLE.test(v) ? { printableString: v } : { utf8String: v }),
      }))),
    )),
  );
}

const algorithms = new x509.AlgorithmProvider();

/**
 * Builds and signs a certificate with the ASN.1 types of @peculiar/asn1-x509 (the library's own
 * generator parses every part back, five times the cost per certificate); adds the subject and
 * authority key identifiers.
 */
export async function signCertificate(p: CertParams): Promise<SignedCert> {
  const key = signingKey(p.signer);
  const subject = asnName(p.subject);
  const spki = AsnConvert.parse(p.spki, asn1.SubjectPublicKeyInfo);
  const extensions = [...p.extensions, new x509.SubjectKeyIdentifierExtension(keyIdentifier(spki)), key.akid];
  const algorithm = algorithms.toAsnAlgorithm(key.algorithm as never);
  const tbs = new asn1.TBSCertificate({
    version: asn1.Version.v3,
    serialNumber: arrayBuffer(Buffer.from(p.serial.length % 2 ? `0${p.serial}` : p.serial, 'hex')),
    signature: algorithm,
    issuer: p.issuer ? asnName(p.issuer) : subject,
    validity: new asn1.Validity({ notBefore: p.notBefore, notAfter: p.notAfter }),
    subject,
    subjectPublicKeyInfo: spki,
    // The extensions' encoded values as they are: parsing each back would cost more than building it.
    extensions: new asn1.Extensions(extensions.map((e) => new asn1.Extension({
      extnID: e.type,
      critical: e.critical,
      extnValue: new OctetString(e.value),
    }))),
  });
  const digest = key.algorithm.name === 'Ed25519' ? null : key.algorithm.hash!.replace('-', '').toLowerCase();
  const signatureValue = nodeSign(digest, Buffer.from(AsnConvert.serialize(tbs)), { key: key.key, dsaEncoding: 'der' });
  const cert = new asn1.Certificate({ tbsCertificate: tbs, signatureAlgorithm: algorithm, signatureValue: arrayBuffer(signatureValue) });
  const der = Buffer.from(AsnConvert.serialize(cert));
  const notAfter = new Date(Math.floor(p.notAfter.getTime() / 1000) * 1000);
  return { der, pem: pem('CERTIFICATE', der), serialNumber: Buffer.from(tbs.serialNumber).toString('hex'), notAfter };
}

/** A PKCS#10 request signed by the key (intermediate/generate). */
export async function createCsr(subject: x509.JsonName, privateKey: KeyObject, extensions: readonly x509.Extension[]) {
  const key = signingKey(privateKey);
  return x509.Pkcs10CertificateRequestGenerator.create(
    {
      name: new x509.Name(subject),
      keys: { privateKey: key, publicKey: key } as never,
      signingAlgorithm: key.algorithm,
      extensions: [...extensions],
    },
    provider,
  );
}

/**
 * A CSR from PEM whose signature verifies (node:crypto, so P-224 keys work too); a 400 naming the
 * problem otherwise.
 */
export function parseCsr(field: string, text: string): { csr: x509.Pkcs10CertificateRequest; publicKey: KeyObject; spki: Buffer } {
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(text.trim());
  } catch {
    throw badInput(`${field}: not a PEM certificate request`);
  }
  let publicKey: KeyObject;
  const spki = Buffer.from(csr.publicKey.rawData);
  try {
    publicKey = createPublicKey({ key: spki, format: 'der', type: 'spki' });
  } catch {
    throw badInput(`${field}: the request's public key is not supported`);
  }
  keyInfo(publicKey);
  const alg = csr.signatureAlgorithm as { name: string; hash?: { name: string } };
  const digest = alg.name === 'Ed25519' ? null : alg.hash?.name.replace('-', '').toLowerCase();
  if (digest === undefined || !['RSASSA-PKCS1-v1_5', 'ECDSA', 'Ed25519'].includes(alg.name)) {
    throw badInput(`${field}: unsupported signature algorithm ${alg.name}`);
  }
  // The signed bytes: the library keeps them behind a TypeScript-private getter.
  const tbs = Buffer.from(Reflect.get(csr, 'tbs') as ArrayBuffer);
  const ok = nodeVerify(digest, tbs, { key: publicKey, dsaEncoding: 'der' }, Buffer.from(csr.signature));
  if (!ok) throw badInput(`${field}: the request's signature does not verify`);
  return { csr, publicKey, spki };
}

export interface CrlEntry {
  readonly serial: string;
  readonly revokedAt: number;
}

/** A signed CRL (v2, with the authority key identifier and a CRL number). */
export interface CrlParams {
  readonly issuer: x509.X509Certificate;
  readonly signer: KeyObject;
  readonly number: number;
  readonly thisUpdate: Date;
  readonly nextUpdate: Date;
  readonly entries: readonly CrlEntry[];
}

export async function signCrl(p: CrlParams): Promise<x509.X509Crl> {
  const key = signingKey(p.signer);
  return x509.X509CrlGenerator.create(
    {
      issuer: p.issuer.subjectName,
      thisUpdate: p.thisUpdate,
      nextUpdate: p.nextUpdate,
      entries: p.entries.map((e) => ({ serialNumber: e.serial, revocationDate: new Date(e.revokedAt) })),
      signingKey: key as never,
      signingAlgorithm: key.algorithm,
      extensions: [
        key.akid,
        new x509.Extension(asn1.id_ce_cRLNumber, false, AsnConvert.serialize(new asn1.CRLNumber(p.number))),
      ],
    },
    provider,
  );
}

/** Whether a private key belongs to a certificate's public key. */
export function keyMatches(cert: x509.X509Certificate, key: KeyObject): boolean {
  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  return Buffer.from(cert.publicKey.rawData).equals(spki);
}
