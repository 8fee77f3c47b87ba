/* eslint-disable no-bitwise -- PSS masks are specified on bits. */
import { constants, createHash, KeyObject, privateEncrypt, publicEncrypt, randomBytes, timingSafeEqual } from 'node:crypto';
import { badInput } from '../../core/request';

/**
 * RSA signatures over a digest the caller computed (`prehashed: true`). node:crypto signs messages
 * only (it always hashes), so the padding is built here and the key operation stays in OpenSSL
 * (raw RSA through `privateEncrypt`/`publicEncrypt`). ECDSA is refused with prehashed: node:crypto
 * offers no way to sign a digest with an EC key, and doing the scalar arithmetic on the private key
 * in JavaScript would not be constant-time.
 */

const size = (hash: string) => createHash(hash).digest().length;

/** Refuses a digest whose length is not the hash's output size. */
export function checkDigest(hash: string, algorithmName: string, digest: Buffer): void {
  if (digest.length !== size(hash)) {
    throw badInput(`input: with prehashed, input must be a base64 ${algorithmName} digest of ${size(hash)} bytes (got ${digest.length})`);
  }
}

// ---- RSA PKCS#1 v1.5: EMSA-PKCS1-v1_5 DigestInfo, type-1 padding by OpenSSL ----

const OIDS: Record<string, string> = {
  'sha1': '2b0e03021a',
  'sha224': '608648016503040204',
  'sha256': '608648016503040201',
  'sha384': '608648016503040202',
  'sha512': '608648016503040203',
  'sha3-224': '608648016503040207',
  'sha3-256': '608648016503040208',
  'sha3-384': '608648016503040209',
  'sha3-512': '60864801650304020a',
};

/** DER DigestInfo { AlgorithmIdentifier { oid, NULL }, OCTET STRING digest } (RFC 8017 §9.2). */
function digestInfo(hash: string, digest: Buffer): Buffer {
  const oid = Buffer.from(OIDS[hash], 'hex');
  const alg = Buffer.concat([Buffer.from([0x30, oid.length + 4, 0x06, oid.length]), oid, Buffer.from([0x05, 0x00])]);
  const body = Buffer.concat([alg, Buffer.from([0x04, digest.length]), digest]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

// ---- RSA-PSS: EMSA-PSS (RFC 8017 §9.1) with MGF1 over the same hash, raw RSA by OpenSSL ----

function mgf1(hash: string, seed: Buffer, length: number): Buffer {
  const out: Buffer[] = [];
  for (let i = 0; out.length * size(hash) < length; i++) {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(i);
    out.push(createHash(hash).update(seed).update(counter).digest());
  }
  return Buffer.concat(out).subarray(0, length);
}

const pssHash = (hash: string, digest: Buffer, salt: Buffer) => createHash(hash).update(Buffer.alloc(8)).update(digest).update(salt).digest();

function modulusBits(key: KeyObject): number {
  return key.asymmetricKeyDetails!.modulusLength!;
}

/** PSS with the largest salt, as Go's `PSSSaltLengthAuto` signs (and as the message path does). */
function pssEncode(hash: string, digest: Buffer, bits: number): Buffer {
  const emBits = bits - 1;
  const emLen = Math.ceil(emBits / 8);
  const hLen = digest.length;
  const salt = randomBytes(emLen - hLen - 2);
  const h = pssHash(hash, digest, salt);
  const db = Buffer.concat([Buffer.alloc(emLen - salt.length - hLen - 2), Buffer.from([1]), salt]);
  const mask = mgf1(hash, h, db.length);
  for (let i = 0; i < db.length; i++) db[i] ^= mask[i];
  db[0] &= 0xff >> (8 * emLen - emBits);
  const em = Buffer.concat([db, h, Buffer.from([0xbc])]);
  return Buffer.concat([Buffer.alloc(Math.ceil(bits / 8) - emLen), em]);
}

/** EMSA-PSS-VERIFY with the salt length recovered from the encoding (Go's auto). */
function pssVerify(hash: string, digest: Buffer, raw: Buffer, bits: number): boolean {
  const emBits = bits - 1;
  const emLen = Math.ceil(emBits / 8);
  const em = raw.subarray(raw.length - emLen);
  const hLen = digest.length;
  if (raw.subarray(0, raw.length - emLen).some((b) => b !== 0) || emLen < hLen + 2 || em[emLen - 1] !== 0xbc) return false;
  const db = Buffer.from(em.subarray(0, emLen - hLen - 1));
  const h = em.subarray(emLen - hLen - 1, emLen - 1);
  if ((db[0] & ~(0xff >> (8 * emLen - emBits)) & 0xff) !== 0) return false;
  const mask = mgf1(hash, h, db.length);
  for (let i = 0; i < db.length; i++) db[i] ^= mask[i];
  db[0] &= 0xff >> (8 * emLen - emBits);
  const one = db.findIndex((b) => b !== 0);
  if (one < 0 || db[one] !== 1) return false;
  return timingSafeEqual(pssHash(hash, digest, db.subarray(one + 1)), h);
}

// ---- entry points ----

export interface PrehashOptions {
  /** node's hash name. */
  hash: string;
  /** PSS padding, else PKCS#1 v1.5. */
  pss: boolean;
}

/** Signs a digest with an RSA private key. */
export function signDigest(key: KeyObject, digest: Buffer, o: PrehashOptions): Buffer {
  if (o.pss) return privateEncrypt({ key, padding: constants.RSA_NO_PADDING }, pssEncode(o.hash, digest, modulusBits(key)));
  return privateEncrypt({ key, padding: constants.RSA_PKCS1_PADDING }, digestInfo(o.hash, digest));
}

/** Verifies an RSA signature over a digest. */
export function verifyDigest(key: KeyObject, digest: Buffer, sig: Buffer, o: PrehashOptions): boolean {
  const bytes = Math.ceil(modulusBits(key) / 8);
  if (sig.length !== bytes) return false;
  let raw: Buffer;
  try {
    raw = publicEncrypt({ key, padding: constants.RSA_NO_PADDING }, sig);
  } catch {
    return false; // signature not below the modulus
  }
  if (o.pss) return pssVerify(o.hash, digest, raw, modulusBits(key));
  return pkcs1Matches(raw, bytes, digestInfo(o.hash, digest));
}

/** EMSA-PKCS1-v1_5: 00 01 FF..FF 00 DigestInfo, compared whole. */
function pkcs1Matches(raw: Buffer, bytes: number, info: Buffer): boolean {
  const em = Buffer.concat([Buffer.from([0, 1]), Buffer.alloc(bytes - info.length - 3, 0xff), Buffer.from([0]), info]);
  return raw.length === em.length && timingSafeEqual(raw, em);
}
