import './reflect';
import { constants, createPrivateKey, createPublicKey, generateKeyPair, KeyObject, randomFillSync, sign as nodeSign, verify as nodeVerify } from 'node:crypto';
import { promisify } from 'node:util';
import { id_mgf1, id_RSASSA_PSS, RsaSaPssParams } from '@peculiar/asn1-rsa';
import { AsnConvert, AsnIntegerBigIntConverter } from '@peculiar/asn1-schema';
import * as asn1 from '@peculiar/asn1-x509';
import * as x509 from '@peculiar/x509';
import { RawData } from 'asn1js';
import { asnExtension, authorityKeyIdentifier, keyIdentifier, RawExtension, subjectKeyIdentifier } from './extensions';
import { badInput } from '../../core/request';

export { x509 };

/**
 * Certificates are built from @peculiar/asn1-x509's structures (TBSCertificate, Name, Extension...),
 * serialized by @peculiar/asn1-schema and signed with node:crypto keys; CSRs and CRLs (rare) are
 * built by @peculiar/x509 through a crypto provider that signs with a KeyObject. Parsing is the
 * library's everywhere. node:crypto keeps every key type it knows (P-224 included, which WebCrypto
 * lacks) and a CA key is imported once, not per request.
 */

export type KeyType = 'rsa' | 'ec' | 'ed25519';

export const CURVES: Record<number, { node: string; web: string; hash: string; oid: string }> = {
  224: { node: 'secp224r1', web: 'P-224', hash: 'SHA-256', oid: '1.3.132.0.33' },
  256: { node: 'prime256v1', web: 'P-256', hash: 'SHA-256', oid: '1.2.840.10045.3.1.7' },
  384: { node: 'secp384r1', web: 'P-384', hash: 'SHA-384', oid: '1.3.132.0.34' },
  521: { node: 'secp521r1', web: 'P-521', hash: 'SHA-512', oid: '1.3.132.0.35' },
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
type SignWith = KeyObject | { key: KeyObject; padding: number; saltLength: number };
const signInPool = promisify(nodeSign) as (digest: string | null, data: Buffer, key: SignWith) => Promise<Buffer>;

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

/** A CA key with what signing needs of it, made once per key. */
interface NodeSigningKey {
  /** The WebCrypto algorithm (the library's CSR and CRL generators take it). */
  readonly algorithm: { name: string; hash?: string; namedCurve?: string };
  readonly key: KeyObject;
  readonly spki: Buffer;
  /** node:crypto's digest name; null for Ed25519. */
  readonly digest: string | null;
  /** The signature's AlgorithmIdentifier. */
  readonly signatureAlgorithm: asn1.AlgorithmIdentifier;
  /** Its authority key identifier extension. */
  readonly akid: x509.Extension;
  /** The signature variants asked of this key (RSA hash sizes, PSS), made once each. */
  readonly variants: Map<string, SignatureVariant>;
}

/**
 * How a certificate is signed, as the public service chooses: an RSA key signs with SHA-`bits`
 * (256, 384 or 512; 0 is 256), RSASSA-PSS when `pss`; an EC key with its curve's hash whatever
 * `bits` says (P-256 SHA-256, P-384 SHA-384, P-521 SHA-512); Ed25519 as itself.
 */
export interface SignatureChoice {
  readonly bits?: number;
  readonly pss?: boolean;
}

interface SignatureVariant {
  readonly digest: string | null;
  readonly algorithm: asn1.AlgorithmIdentifier;
  readonly with: SignWith;
}

const RSA_SIGNATURE_OIDS: Record<number, string> = { 256: '1.2.840.113549.1.1.11', 384: '1.2.840.113549.1.1.12', 512: '1.2.840.113549.1.1.13' };
const HASH_OIDS: Record<number, string> = { 256: '2.16.840.1.101.3.4.2.1', 384: '2.16.840.1.101.3.4.2.2', 512: '2.16.840.1.101.3.4.2.3' };

/** The signature variant of a key for a choice (cached per key and choice). */
function variantOf(key: NodeSigningKey, choice: SignatureChoice | undefined): SignatureVariant {
  const rsa = key.algorithm.name === 'RSASSA-PKCS1-v1_5';
  const bits = rsa && choice?.bits ? choice.bits : 256;
  const pss = rsa && choice?.pss === true;
  const id = rsa ? `${bits}${pss ? 'p' : ''}` : '';
  let found = key.variants.get(id);
  if (found) return found;
  if (!rsa) {
    found = { digest: key.digest, algorithm: key.signatureAlgorithm, with: key.key };
  } else if (!pss) {
    found = { digest: `sha${bits}`, algorithm: new asn1.AlgorithmIdentifier({ algorithm: RSA_SIGNATURE_OIDS[bits], parameters: null }), with: key.key };
  } else {
    // RFC 4055: the hash, MGF1 over the same hash, a salt as long as the hash (Go's choice).
    const hash = new asn1.AlgorithmIdentifier({ algorithm: HASH_OIDS[bits], parameters: null });
    const params = new RsaSaPssParams({
      hashAlgorithm: hash,
      maskGenAlgorithm: new asn1.AlgorithmIdentifier({ algorithm: id_mgf1, parameters: AsnConvert.serialize(hash) }),
      saltLength: bits / 8,
    });
    found = {
      digest: `sha${bits}`,
      algorithm: new asn1.AlgorithmIdentifier({ algorithm: id_RSASSA_PSS, parameters: AsnConvert.serialize(params) }),
      with: { key: key.key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: bits / 8 },
    };
  }
  key.variants.set(id, found);
  return found;
}

const signingKeys = new WeakMap<KeyObject, NodeSigningKey>();

/** ecdsa-with-SHA256/384/512 (no parameters); sha256WithRSAEncryption (NULL parameters); Ed25519. */
const SIGNATURE_OIDS: Record<string, string> = { 'SHA-256': '1.2.840.10045.4.3.2', 'SHA-384': '1.2.840.10045.4.3.3', 'SHA-512': '1.2.840.10045.4.3.4' };

/** A CA key in the form signing takes (cached per key: CA keys are parsed once and reused). */
function signingKey(privateKey: KeyObject): NodeSigningKey {
  const cached = signingKeys.get(privateKey);
  if (cached) return cached;
  const { type, bits } = keyInfo(privateKey);
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  const algorithm = type === 'rsa'
    ? { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }
    : type === 'ec' ? { name: 'ECDSA', namedCurve: CURVES[bits].web, hash: CURVES[bits].hash } : { name: 'Ed25519' };
  const signatureAlgorithm = type === 'rsa'
    ? new asn1.AlgorithmIdentifier({ algorithm: '1.2.840.113549.1.1.11', parameters: null })
    : new asn1.AlgorithmIdentifier({ algorithm: type === 'ec' ? SIGNATURE_OIDS[CURVES[bits].hash] : '1.3.101.112' });
  const akid = authorityKeyIdentifier(keyIdentifier(spki));
  const key = {
    algorithm,
    key: privateKey,
    spki,
    digest: algorithm.hash ? algorithm.hash.replace('-', '').toLowerCase() : null,
    signatureAlgorithm,
    akid: new x509.Extension(akid.type, akid.critical, akid.value as ArrayBufferView<ArrayBuffer>),
    variants: new Map<string, SignatureVariant>(),
  };
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
  // Drawn from a pooled buffer: one call into the CSPRNG per 256 serials instead of one each.
  if (serialPoolAt === serialPool.length) {
    randomFillSync(serialPool);
    serialPoolAt = 0;
  }
  const bytes = Buffer.from(serialPool.subarray(serialPoolAt, (serialPoolAt += 20)));
  bytes[0] = (bytes[0] % 0x80) || 1;
  return bytes.toString('hex');
}

const serialPool = Buffer.alloc(20 * 256);
let serialPoolAt = serialPool.length;

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
  let body = '';
  for (let i = 0; i < b64.length; i += 64) body += `${b64.slice(i, i + 64)}\n`;
  return `-----BEGIN ${type}-----\n${body}-----END ${type}-----`;
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

/** A private key as a response shows it: PEM, or base64 DER for `format=der`. */
export const privateKeyText = (der: Buffer, label: string, encoding: 'pem' | 'der') => (encoding === 'der' ? der.toString('base64') : pem(label, der));

/** The private key in the public service's formats: `der` is PKCS#1/SEC1 (PKCS#8 for ed25519). */
export function exportPrivateKey(key: KeyObject, keyFormat: 'der' | 'pkcs8' | '', encoding: 'pem' | 'der'): string {
  const { type } = keyInfo(key);
  const pkcs8 = keyFormat === 'pkcs8' || type === 'ed25519';
  const der = key.export(pkcs8 ? { type: 'pkcs8', format: 'der' } : { type: type === 'rsa' ? 'pkcs1' : 'sec1', format: 'der' });
  return privateKeyText(der, pkcs8 ? 'PRIVATE KEY' : type === 'rsa' ? 'RSA PRIVATE KEY' : 'EC PRIVATE KEY', encoding);
}

/** The private key sealed in storage: PKCS#8 PEM. */
export const storedKey = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'pem' }).toString();

export interface CertParams {
  readonly serial: string;
  readonly subject: x509.JsonName | x509.Name;
  /** The issuing CA's certificate (none when self-signed): its subject becomes the issuer, byte for byte. */
  readonly issuer?: x509.X509Certificate;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** The subject's SubjectPublicKeyInfo: DER, or the library's structure. */
  readonly spki: Buffer | asn1.SubjectPublicKeyInfo;
  readonly extensions: readonly RawExtension[];
  readonly signer: KeyObject;
  /** The signature's hash size and padding (RSA signers); the key's default when absent. */
  readonly signature?: SignatureChoice;
}

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

/**
 * A name: PrintableString where the text allows it, else UTF8String (as Go writes names); each
 * entry one RDN holding all its values in the order given.
 */
function asnName(name: x509.JsonName | x509.Name): asn1.Name {
  if (name instanceof x509.Name) return AsnConvert.parse(name.toArrayBuffer(), asn1.Name);
  return new asn1.Name(name.map((rdn) => new asn1.RelativeDistinguishedName(Object.entries(rdn).flatMap(([type, values]) =>
    values.map((v) => new asn1.AttributeTypeAndValue({
      type: NAME_OIDS[type] ?? type,
      value: new asn1.AttributeValue(PRINTABLE.test(v) ? { printableString: v } : { utf8String: v }),
    }))))));
}

/** Bytes already encoded, written into the enclosing structure as they are (asn1js's RawData only returns them). */
class EncodedBytes extends RawData {
  override toBER(sizeOnly?: boolean, writer?: { write(data: ArrayBuffer): void }): ArrayBuffer {
    const data = super.toBER(sizeOnly);
    writer?.write(data);
    return data;
  }
}

/**
 * A structure already serialized, which the serializer nests as its bytes: the Certificate takes the
 * signed TBSCertificate as signed (serializing it again would double the cost of a certificate).
 */
class Serialized {
  constructor(private readonly der: ArrayBuffer) {}
  toASN() {
    return new EncodedBytes({ data: this.der });
  }
  fromASN(): this {
    throw new Error('Serialized is for writing only');
  }
}

const serializedOf = new WeakMap<object, Serialized>();

/**
 * A structure serialized once for an object that does not change and nested as those bytes after:
 * what certificates repeat (the CA's subject as the issuer, its signature algorithm and key
 * identifier, a role's and the URLs' extensions) is converted by asn1js once, not per certificate.
 */
function serializedOnce(owner: object, structure: () => unknown): Serialized {
  let found = serializedOf.get(owner);
  if (!found) serializedOf.set(owner, (found = new Serialized(AsnConvert.serialize(structure()))));
  return found;
}

/** The issuer of a certificate a CA signs: the CA's subject as encoded in its certificate. */
const issuerOf = (ca: x509.X509Certificate) => serializedOnce(ca, () => AsnConvert.parse(ca.rawData, asn1.Certificate).tbsCertificate.subject);

/** A serial in hex as a positive INTEGER's content octets (a leading zero when the top bit is set). */
const serialOctets = (hex: string) => AsnIntegerBigIntConverter.toASN(BigInt(`0x${hex || '0'}`)).valueBlock.valueHexView;

/** Builds and signs a certificate (RFC 5280 4.1); adds the subject and authority key identifiers. */
export async function signCertificate(p: CertParams): Promise<SignedCert> {
  const key = signingKey(p.signer);
  const variant = variantOf(key, p.signature);
  const algorithm = serializedOnce(variant.algorithm, () => variant.algorithm);
  const subject = new Serialized(AsnConvert.serialize(asnName(p.subject)));
  const spki = Buffer.isBuffer(p.spki) ? AsnConvert.parse(p.spki, asn1.SubjectPublicKeyInfo) : p.spki;
  const serial = serialOctets(p.serial);
  const extensions = [...p.extensions, subjectKeyIdentifier(keyIdentifier(spki)), key.akid];
  const tbsCertificate = new asn1.TBSCertificate({
    version: asn1.Version.v3,
    serialNumber: arrayBuffer(Buffer.from(serial)),
    signature: algorithm as never,
    issuer: (p.issuer ? issuerOf(p.issuer) : subject) as never,
    validity: new asn1.Validity({ notBefore: p.notBefore, notAfter: p.notAfter }),
    subject: subject as never,
    subjectPublicKeyInfo: spki,
    extensions: new asn1.Extensions(extensions.map((e) => serializedOnce(e, () => asnExtension(e)) as never)),
  });
  const tbs = Buffer.from(AsnConvert.serialize(tbsCertificate));
  // In the thread pool, off the event loop. The KeyObject itself (DER signatures are the default): an
  // options object costs node:crypto a failed type probe per call.
  const signature = await signInPool(variant.digest, tbs, variant.with);
  const cert = new asn1.Certificate({
    tbsCertificate: new Serialized(arrayBuffer(tbs)) as never,
    signatureAlgorithm: algorithm as never,
    signatureValue: arrayBuffer(signature),
  });
  const der = Buffer.from(AsnConvert.serialize(cert));
  const notAfter = new Date(Math.floor(p.notAfter.getTime() / 1000) * 1000);
  return { der, pem: pem('CERTIFICATE', der), serialNumber: Buffer.from(serial).toString('hex'), notAfter };
}

/** A PKCS#10 request signed by the key (intermediate/generate). */
export async function createCsr(subject: x509.JsonName, privateKey: KeyObject, extensions: readonly RawExtension[]) {
  const key = signingKey(privateKey);
  return x509.Pkcs10CertificateRequestGenerator.create(
    {
      name: new x509.Name(subject),
      keys: { privateKey: key, publicKey: key } as never,
      signingAlgorithm: key.algorithm,
      extensions: extensions.map((e) => new x509.Extension(e.type, e.critical, e.value as ArrayBufferView<ArrayBuffer>)),
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
