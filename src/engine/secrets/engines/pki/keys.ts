import { createECDH, generateKeyPair, JsonWebKey } from 'node:crypto';
import { promisify } from 'node:util';
import { ECParameters, ECPrivateKey, id_ecPublicKey } from '@peculiar/asn1-ecc';
import { PrivateKeyInfo } from '@peculiar/asn1-pkcs8';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, SubjectPublicKeyInfo } from '@peculiar/asn1-x509';
import { CURVES, KeyType } from './x509';

/** A key pair for a certificate the engine issues, encoded: what the certificate and the response need. */
export interface IssuedKey {
  /** SubjectPublicKeyInfo: DER, or the library's structure (what the certificate takes as is). */
  readonly spki: Buffer | SubjectPublicKeyInfo;
  /** The private key, DER, in the format asked. */
  readonly privateKey: Buffer;
  /** Its PEM label. */
  readonly label: 'RSA PRIVATE KEY' | 'EC PRIVATE KEY' | 'PRIVATE KEY';
}

const generate = promisify(generateKeyPair) as (type: string, options: object) => Promise<{ publicKey: unknown; privateKey: unknown }>;
const ED25519 = '1.3.101.112';
const bytes = (base64url: string | undefined) => Buffer.from(base64url ?? '', 'base64url');

/**
 * A new key pair, encoded. node:crypto's KeyObject export goes through OpenSSL 3's encoders, which
 * cost more than generating a P-256 key (about 100 µs for DER, 80 µs for JWK, on the main thread
 * whichever way it is asked for), so:
 *  - P-224 and P-256: ECDH generates the key pair (the same EC key generation, synchronous, a few
 *    tens of µs), whose raw point and scalar become
 *    @peculiar/asn1-ecc/-pkcs8/-x509 structures serialized by @peculiar/asn1-schema;
 *  - P-384, P-521 and Ed25519: the key generation job (thread pool), exported as JWK, its parts serialized the same way;
 *  - RSA: the key generation job, exported as DER (the generation itself dominates).
 * The private key is PKCS#1 (RSA) or SEC1 (EC) unless `pkcs8` (always for Ed25519), byte for byte as
 * OpenSSL writes them.
 */
export async function generateIssuedKey(type: KeyType, bits: number, pkcs8: boolean): Promise<IssuedKey> {
  if (type === 'rsa') {
    const { publicKey, privateKey } = await generate('rsa', {
      modulusLength: bits,
      publicKeyEncoding: { type: 'spki', format: 'der' },
      privateKeyEncoding: { type: pkcs8 ? 'pkcs8' : 'pkcs1', format: 'der' },
    });
    return { spki: publicKey as Buffer, privateKey: privateKey as Buffer, label: pkcs8 ? 'PRIVATE KEY' : 'RSA PRIVATE KEY' };
  }
  if (type === 'ec' && bits <= 256) {
    const ecdh = createECDH(CURVES[bits].node);
    const point = ecdh.generateKeys();
    return ecKey(bits, point, ecdh.getPrivateKey(), pkcs8);
  }
  const options = type === 'ec' ? { namedCurve: CURVES[bits].node } : {};
  const jwk = (await generate(type, { ...options, privateKeyEncoding: { format: 'jwk' } })).privateKey as JsonWebKey;
  if (type === 'ec') return ecKey(bits, Buffer.concat([Buffer.from([4]), bytes(jwk.x), bytes(jwk.y)]), bytes(jwk.d), pkcs8);
  const algorithm = new AlgorithmIdentifier({ algorithm: ED25519 });
  // RFC 8410: the key bits are the raw public key; the private key is a CurvePrivateKey OCTET STRING.
  const curvePrivateKey = AsnConvert.serialize(new OctetString(bytes(jwk.d)));
  const privateKey = new PrivateKeyInfo({ privateKeyAlgorithm: algorithm, privateKey: new OctetString(curvePrivateKey) });
  return { spki: new SubjectPublicKeyInfo({ algorithm, subjectPublicKey: arrayBuffer(bytes(jwk.x)) }), privateKey: der(privateKey), label: 'PRIVATE KEY' };
}

const der = (structure: unknown) => Buffer.from(AsnConvert.serialize(structure));
const arrayBuffer = (b: Buffer) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

const curves = new Map<number, { parameters: ECParameters; encoded: ArrayBuffer }>();

/** A curve's parameters, serialized once per curve. */
function curveOf(bits: number) {
  let found = curves.get(bits);
  if (!found) {
    const parameters = new ECParameters({ namedCurve: CURVES[bits].oid });
    curves.set(bits, (found = { parameters, encoded: AsnConvert.serialize(parameters) }));
  }
  return found;
}

/** An EC key from its uncompressed point and private scalar (RFC 5480, RFC 5915), built as the library's structures. */
function ecKey(bits: number, point: Buffer, scalar: Buffer, pkcs8: boolean): IssuedKey {
  // The scalar at the full size of the group's order, as OpenSSL writes it.
  const size = (point.length - 1) / 2;
  const d = scalar.length >= size ? scalar : Buffer.concat([Buffer.alloc(size - scalar.length), scalar]);
  const { parameters, encoded } = curveOf(bits);
  const publicKey = arrayBuffer(point);
  const algorithm = new AlgorithmIdentifier({ algorithm: id_ecPublicKey, parameters: encoded });
  const spki = new SubjectPublicKeyInfo({ algorithm, subjectPublicKey: publicKey });
  // Inside PKCS#8 the curve is in the algorithm, not repeated.
  if (pkcs8) {
    const inner = new ECPrivateKey({ version: 1, privateKey: new OctetString(d), publicKey });
    return { spki, privateKey: der(new PrivateKeyInfo({ privateKeyAlgorithm: algorithm, privateKey: new OctetString(AsnConvert.serialize(inner)) })), label: 'PRIVATE KEY' };
  }
  const sec1 = new ECPrivateKey({ version: 1, privateKey: new OctetString(d), parameters, publicKey });
  return { spki, privateKey: der(sec1), label: 'EC PRIVATE KEY' };
}
