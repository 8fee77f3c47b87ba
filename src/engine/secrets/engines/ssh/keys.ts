import { createPrivateKey, createPublicKey, generateKeyPair, KeyObject, sign } from 'node:crypto';
import { promisify } from 'node:util';
import * as sshpk from 'sshpk';
import { authorizedKey, parsePublicKey, SshPublicKey, WireWriter } from './wire';
import { badInput } from '../../core/request';

const generate = promisify(generateKeyPair);

/** Key families the engine generates: for the CA (`config/ca`) and for `issue/:role`. */
export type KeyFamily = 'rsa' | 'ec' | 'ed25519';

/** A CA key or issued key pair: its PEM private key and its authorized_keys line. */
export interface KeyPair {
  /** The private key as handed out or imported (PEM or OpenSSH format). */
  readonly privateKey: string;
  /** PKCS#8 PEM, what node:crypto signs with (OpenSSH-format imports are converted once). */
  readonly pkcs8: string;
  /** `type base64\n`. */
  readonly publicKey: string;
}

const CURVES: Record<number, string> = { 256: 'P-256', 384: 'P-384', 521: 'P-521' };
const NAMED: Record<string, { family: KeyFamily; bits?: number }> = {
  'ssh-rsa': { family: 'rsa' },
  'rsa': { family: 'rsa' },
  'ecdsa-sha2-nistp256': { family: 'ec', bits: 256 },
  'ecdsa-sha2-nistp384': { family: 'ec', bits: 384 },
  'ecdsa-sha2-nistp521': { family: 'ec', bits: 521 },
  'ec': { family: 'ec' },
  'ssh-ed25519': { family: 'ed25519' },
  'ed25519': { family: 'ed25519' },
};
export const KEY_TYPE_NAMES = Object.keys(NAMED);

/**
 * The family and size a `key_type`/`key_bits` pair asks for; `rsaDefault` is the size of key_bits 0
 * (4096 for a CA, 2048 for issued keys as the spec says). Named curves fix their size.
 */
export function keySpec(keyType: string, keyBits: number, rsaDefault: number): { family: KeyFamily; bits: number } {
  const named = NAMED[keyType];
  if (!named) throw badInput(`key_type: "${keyType}" is not supported: use one of ${KEY_TYPE_NAMES.join(', ')}`);
  if (named.family === 'ed25519') return { family: 'ed25519', bits: 256 };
  if (named.family === 'rsa') {
    const bits = keyBits || rsaDefault;
    if (bits < 2048 || bits > 8192) throw badInput(`key_bits: refusing to generate a ${bits}-bit RSA key: use 2048, 3072 or 4096`);
    return { family: 'rsa', bits };
  }
  const bits = named.bits ?? (keyBits || 256);
  if (named.bits && keyBits && keyBits !== named.bits) throw badInput(`key_bits: ${keyBits} does not match key_type ${keyType} (${named.bits} bits)`);
  if (!CURVES[bits]) throw badInput(`key_bits: ${bits} is not an EC curve size: use 256, 384 or 521`);
  return { family: 'ec', bits };
}

/** A new key pair; the private key in the form `ssh` reads: PKCS#1, SEC1, or OpenSSH for ed25519. */
export async function generateKeys(spec: { family: KeyFamily; bits: number }): Promise<KeyPair> {
  const { privateKey } =
    spec.family === 'rsa'
      ? await generate('rsa', { modulusLength: spec.bits })
      : spec.family === 'ec'
        ? await generate('ec', { namedCurve: CURVES[spec.bits] })
        : await generate('ed25519');
  const pkcs8 = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const handedOut =
    spec.family === 'rsa'
      ? privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()
      : spec.family === 'ec'
        ? privateKey.export({ type: 'sec1', format: 'pem' }).toString()
        : sshpk.parsePrivateKey(pkcs8, 'pem').toString('openssh');
  return { privateKey: handedOut, pkcs8, publicKey: publicLine(privateKey) };
}

/** The authorized_keys line of a private key. */
function publicLine(key: KeyObject): string {
  const pem = createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString();
  const parsed = sshpk.parseKey(pem, 'pem');
  const blob = parsed.toBuffer('rfc4253', {});
  return authorizedKey(blob.subarray(4, 4 + blob.readUInt32BE(0)).toString(), blob);
}

/**
 * A key sshpk parsed (OpenSSH's own format, which node:crypto does not read) as a KeyObject, through
 * PKCS#8. Not for Ed25519: sshpk drops a seed's leading zero byte there when the next is under 0x80,
 * which node:crypto refuses (one `ssh-keygen -t ed25519` key in about 600), so its raw parts go
 * through a JWK instead.
 */
function fromSshpk(parsed: sshpk.PrivateKey): KeyObject {
  if (parsed.type !== 'ed25519') return createPrivateKey(parsed.toBuffer('pkcs8', {}).toString());
  const { k, A } = (parsed as unknown as { part: Record<string, { data: Buffer }> }).part;
  // The seed and the public key are 32 bytes each; sshpk may hold them with a zero byte more or
  // fewer in front, and the seed followed by the public key as OpenSSH stores it.
  const raw = (data: Buffer) => Buffer.concat([Buffer.alloc(32), data]).subarray(-32).toString('base64url');
  const seed = k.data.length === 64 ? k.data.subarray(0, 32) : k.data;
  return createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: raw(seed), x: raw(A.data) }, format: 'jwk' });
}

/**
 * An imported CA key pair: the private key in PEM (PKCS#1, SEC1, PKCS#8) or OpenSSH format, and a
 * public key that must be its own.
 */
export function importKeys(privateKey: string, publicKey: string): KeyPair {
  let key: KeyObject;
  try {
    key = createPrivateKey(privateKey);
  } catch {
    try {
      key = fromSshpk(sshpk.parsePrivateKey(privateKey, 'auto'));
    } catch (err) {
      throw badInput(`private_key: unable to parse it as an SSH private key (${(err as Error).message.split('\n')[0]})`);
    }
  }
  const type = key.asymmetricKeyType;
  if (type !== 'rsa' && type !== 'ec' && type !== 'ed25519') throw badInput(`private_key: ${type} keys are not supported: use RSA, ECDSA or Ed25519`);
  const pub = parsePublicKey(publicKey);
  if (!pub) throw badInput('public_key: unable to parse it as an SSH public key (expected "ssh-ed25519 AAAA..." or similar)');
  const own = publicLine(key);
  if (own.split(' ')[1].trim() !== pub.blob.toString('base64')) throw badInput('public_key: does not belong to private_key');
  // Kept as given, comment and all: Vault shows an imported public key exactly as it was written.
  return { privateKey, pkcs8: key.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey };
}

/** Signature algorithms of an RSA CA (`algorithm_signer`); `default` is rsa-sha2-256. */
export const RSA_SIGNERS = ['ssh-rsa', 'rsa-sha2-256', 'rsa-sha2-512'] as const;
const RSA_HASH: Record<string, string> = { 'ssh-rsa': 'sha1', 'rsa-sha2-256': 'sha256', 'rsa-sha2-512': 'sha512' };
const EC_HASH: Record<string, string> = { 'ecdsa-sha2-nistp256': 'sha256', 'ecdsa-sha2-nistp384': 'sha384', 'ecdsa-sha2-nistp521': 'sha512' };

/** A CA ready to sign: its private key object and public key. */
export interface Signer {
  readonly key: KeyObject;
  readonly publicKey: SshPublicKey;
}

export function signerOf(pair: KeyPair): Signer {
  return { key: createPrivateKey(pair.pkcs8), publicKey: parsePublicKey(pair.publicKey)! };
}

/**
 * The signature algorithm a role's `algorithm_signer` selects for this CA: RSA CAs take any of
 * RSA_SIGNERS (`default` and blank are rsa-sha2-256); other CAs only their own (blank or `default`).
 */
export function signatureAlgorithm(signer: Signer, algorithmSigner: string): string {
  const caType = signer.publicKey.type;
  if (caType === 'ssh-rsa') return algorithmSigner === '' || algorithmSigner === 'default' ? 'rsa-sha2-256' : algorithmSigner;
  if (algorithmSigner !== '' && algorithmSigner !== 'default') {
    throw badInput(`algorithm_signer: "${algorithmSigner}" needs an RSA CA key; this CA is ${caType}: set it to "default" or leave it blank`);
  }
  return caType;
}

/** An SSH signature blob (RFC 4253 6.6, RFC 5656 3.1.2, RFC 8709) of `data` by the CA. */
export function sshSignature(signer: Signer, algorithm: string, data: Buffer): Buffer {
  const w = new WireWriter().string(algorithm);
  if (algorithm in RSA_HASH) return w.string(sign(RSA_HASH[algorithm], data, signer.key)).toBuffer();
  if (algorithm in EC_HASH) {
    const rs = sign(EC_HASH[algorithm], data, { key: signer.key, dsaEncoding: 'ieee-p1363' });
    const half = rs.length / 2;
    return w.string(new WireWriter().mpint(rs.subarray(0, half)).mpint(rs.subarray(half)).toBuffer()).toBuffer();
  }
  return w.string(sign(null, data, signer.key)).toBuffer();
}
