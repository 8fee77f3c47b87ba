import { createHmac, createPrivateKey, createPublicKey, createSecretKey, generateKeyPairSync, hkdfSync, KeyObject, randomBytes } from 'node:crypto';
import { isVersionedBase64 } from './input';
import { BoundedMap } from '../../../bounded-map';
import { badInput, missing } from '../../core/request';
import { MountStore, SealedMemo } from '../../core/store';
import { SecretsRequest } from '../../core/types';

export const KEY_TYPES = [
  'aes128-gcm96',
  'aes256-gcm96',
  'chacha20-poly1305',
  'ed25519',
  'ecdsa-p256',
  'ecdsa-p384',
  'ecdsa-p521',
  'rsa-2048',
  'rsa-3072',
  'rsa-4096',
  'hmac',
] as const;
export type KeyType = (typeof KEY_TYPES)[number];

const SYMMETRIC: Partial<Record<KeyType, { cipher: string; size: number }>> = {
  'aes128-gcm96': { cipher: 'aes-128-gcm', size: 16 },
  'aes256-gcm96': { cipher: 'aes-256-gcm', size: 32 },
  'chacha20-poly1305': { cipher: 'chacha20-poly1305', size: 32 },
};
const CURVES: Partial<Record<KeyType, string>> = { 'ecdsa-p256': 'P-256', 'ecdsa-p384': 'P-384', 'ecdsa-p521': 'P-521' };

export const symmetric = (type: KeyType) => SYMMETRIC[type];
export const isRsa = (type: KeyType) => type.startsWith('rsa-');
export const canEncrypt = (type: KeyType) => symmetric(type) !== undefined || isRsa(type);
export const canSign = (type: KeyType) => type === 'ed25519' || type.startsWith('ecdsa-') || isRsa(type);

/** One version of a key: its secret material (base64 or PKCS#8 DER base64) and its HMAC key. */
export interface KeyVersion {
  readonly created: number;
  readonly key?: string;
  readonly privateKey?: string;
  readonly hmacKey: string;
}

/** A named key with all its versions, sealed by the barrier as one entry (Vault's policy). */
export interface Keyring {
  readonly name: string;
  readonly type: KeyType;
  readonly derived: boolean;
  /** Convergent encryption (derived keys only): the nonce is derived from the plaintext and context. */
  readonly convergent?: boolean;
  exportable: boolean;
  allowPlaintextBackup: boolean;
  deletionAllowed: boolean;
  minDecryptionVersion: number;
  minEncryptionVersion: number;
  autoRotatePeriod: number;
  latestVersion: number;
  /** Versions below it were trimmed (0: none). */
  minAvailableVersion?: number;
  versions: Record<string, KeyVersion>;
}

const entryKey = (name: string) => `keys/${name}`;

/**
 * Opened keyrings by ciphertext (MountStore.getMemo): every encryption, signature or HMAC reads its
 * key, and a request opens it only when the stored entry changed since (a write seals anew). Vault
 * keeps its keys in memory too. The versions' KeyObjects below live as long as the opened keyring.
 */
const opened = new SealedMemo<Keyring>(1024);

/** Shared by every request while unchanged: frozen, so that changing one in place fails loudly. */
function frozen(ring: Keyring): Keyring {
  for (const v of Object.values(ring.versions)) Object.freeze(v);
  Object.freeze(ring.versions);
  return Object.freeze(ring);
}

/** A key to use (read-only, shared); undefined when there is none. */
export const openKeyring = (store: MountStore, name: string) => store.getMemo<Keyring>(entryKey(name), opened, frozen);
/** A key to change: opened anew, the caller's own copy. */
export const loadKeyring = (store: MountStore, name: string) => store.get<Keyring>(entryKey(name));
export const saveKeyring = (store: MountStore, ring: Keyring) => store.put(entryKey(ring.name), ring);
export const keyringExists = (store: MountStore, name: string) => store.exists(entryKey(name));

/** The named key of a request (`:name`) to use, or Vault's 404-ish answer for a missing one. */
export async function keyringOf(req: SecretsRequest): Promise<Keyring> {
  const ring = await openKeyring(req.store, req.params.name);
  if (!ring) throw missing();
  return ring;
}

/** The named key of a request to change (config, rotate, trim): the request's own copy. */
export async function keyringToChange(req: SecretsRequest): Promise<Keyring> {
  const ring = await loadKeyring(req.store, req.params.name);
  if (!ring) throw missing();
  return ring;
}

/** Fresh material of a key type; `hmac` keys take `keySize` bytes. */
export function newVersion(type: KeyType, now: number, keySize = 32): KeyVersion {
  const hmacKey = randomBytes(32).toString('base64');
  const sym = symmetric(type);
  if (sym) return { created: now, key: randomBytes(sym.size).toString('base64'), hmacKey };
  if (type === 'hmac') return { created: now, key: randomBytes(keySize).toString('base64'), hmacKey };
  const pair =
    type === 'ed25519'
      ? generateKeyPairSync('ed25519')
      : isRsa(type)
        ? generateKeyPairSync('rsa', { modulusLength: Number(type.slice(4)) })
        : generateKeyPairSync('ec', { namedCurve: CURVES[type]! });
  return { created: now, privateKey: pair.privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64'), hmacKey };
}

/** The size in bytes of a version's symmetric (or hmac) key. */
function keyLength(v: KeyVersion): number {
  return Buffer.byteLength(v.key!, 'base64');
}

export function rotate(ring: Keyring, now: number): void {
  const keySize = ring.type === 'hmac' ? keyLength(ring.versions[String(ring.latestVersion)]) : 32;
  ring.latestVersion += 1;
  ring.versions[String(ring.latestVersion)] = newVersion(ring.type, now, keySize);
}

/** The version to encrypt or sign with: 0 or none is the latest; refused below the minimum. */
export function versionFor(ring: Keyring, asked: number | undefined): [number, KeyVersion] {
  const n = asked || ring.latestVersion;
  if (n > ring.latestVersion) throw badInput(`key_version: version ${n} does not exist (latest is ${ring.latestVersion})`);
  if (n < Math.max(ring.minEncryptionVersion, ring.minDecryptionVersion)) {
    throw badInput(`key_version: requested version ${n} is below the key's minimum encryption version`);
  }
  return [n, ring.versions[String(n)]];
}

/** The version a ciphertext, signature or HMAC names, if policy still allows it. */
export function versionOf(ring: Keyring, n: number): KeyVersion {
  if (n < ring.minDecryptionVersion) throw badInput('ciphertext or signature version is disallowed by policy (too old)');
  const v = ring.versions[String(n)];
  if (!v) throw badInput(`invalid key version ${n}`);
  return v;
}

/**
 * Node.js KeyObjects of a key version, made on first use and kept as long as the version object (for
 * an opened keyring, until the key changes): a cipher keyed by a KeyObject costs a fraction of one
 * keyed by a Buffer, which Node.js (OpenSSL 3) imports anew every time; a private key is parsed once.
 */
function keyCache(make: (v: KeyVersion) => KeyObject): (v: KeyVersion) => KeyObject {
  const made = new WeakMap<KeyVersion, KeyObject>();
  return (v) => {
    let key = made.get(v);
    if (!key) made.set(v, (key = make(v)));
    return key;
  };
}

const secretKeyOf = keyCache((v) => createSecretKey(Buffer.from(v.key!, 'base64')));
export const privateKeyOf = keyCache((v) => createPrivateKey({ key: Buffer.from(v.privateKey!, 'base64'), format: 'der', type: 'pkcs8' }));
export const publicKeyOf = keyCache((v) => createPublicKey(privateKeyOf(v)));
const hmacSecretOf = keyCache((v) => createSecretKey(Buffer.from(v.hmacKey, 'base64')));

/** The key of `hmac/`: an hmac key's own material, else the version's HMAC key. */
export const hmacKeyOf = (ring: Keyring, v: KeyVersion): KeyObject => (ring.type === 'hmac' ? secretKeyOf(v) : hmacSecretOf(v));

/**
 * Derived keys by key material and context (a batch or a client often repeats its contexts), for all
 * keys of the process together: contexts come from requests, so the table is bounded.
 */
const derivedKeys = new BoundedMap<string, KeyObject>(4096);

const derivedBytes = (v: KeyVersion, context: Buffer | undefined, length: number): KeyObject => {
  if (!context || context.length === 0) throw badInput('context: missing, required for a derived key');
  const id = `${length}:${v.key}:${context.toString('base64')}`;
  let derived = derivedKeys.get(id);
  if (!derived) {
    derived = createSecretKey(Buffer.from(hkdfSync('sha256', Buffer.from(v.key!, 'base64'), Buffer.alloc(0), context, length)));
    derivedKeys.set(id, derived);
  }
  return derived;
};

/** Symmetric key; derived keys (HKDF-SHA256 with the context as info, as Vault) need a context. */
export function symmetricKey(ring: Keyring, v: KeyVersion, context: Buffer | undefined): KeyObject {
  return ring.derived ? derivedBytes(v, context, keyLength(v)) : secretKeyOf(v);
}

/**
 * A convergent key's encryption key and nonce for a plaintext, as Vault's convergent version 3 (keys
 * created since Vault 0.6.2): HKDF-SHA256 of the key with the context as info yields the encryption
 * key followed by 32 bytes of HMAC key; the nonce is the first 12 bytes of HMAC-SHA256 of the
 * plaintext under that HMAC key. The same plaintext and context encrypt to the same ciphertext.
 */
export function convergentKey(v: KeyVersion, context: Buffer | undefined, plaintext: Buffer, nonceSize: number): [KeyObject, Buffer] {
  const size = keyLength(v);
  const both = derivedBytes(v, context, size + 32).export();
  const nonce = createHmac('sha256', both.subarray(size)).update(plaintext).digest().subarray(0, nonceSize);
  return [createSecretKey(both.subarray(0, size)), nonce];
}

/** The public key as Vault shows it: raw base64 for ed25519, PEM for ECDSA and RSA. */
export function publicKeyText(type: KeyType, v: KeyVersion): string {
  const pub = publicKeyOf(v);
  if (type === 'ed25519') return pub.export({ format: 'jwk' }).x!.replace(/-/g, '+').replace(/_/g, '/') + '=';
  return pub.export({ type: 'spki', format: 'pem' }).toString();
}

/** The `name` Vault gives an asymmetric key's versions (Go's curve names for ECDSA). */
const ASYMMETRIC_NAMES: Partial<Record<KeyType, string>> = { 'ecdsa-p256': 'P-256', 'ecdsa-p384': 'P-384', 'ecdsa-p521': 'P-521' };

/** The key's read response. */
export function keyInfo(ring: Keyring): Record<string, unknown> {
  // Vault: creation times (seconds) of symmetric keys; name, public key and certificate chain of
  // asymmetric ones; nothing for hmac keys.
  const keys: Record<string, unknown> = {};
  for (const [n, v] of Object.entries(ring.versions)) {
    keys[n] = v.privateKey
      ? { certificate_chain: '', creation_time: new Date(v.created).toISOString(), name: ASYMMETRIC_NAMES[ring.type] ?? ring.type, public_key: publicKeyText(ring.type, v) }
      : Math.floor(v.created / 1000);
  }
  return {
    allow_plaintext_backup: ring.allowPlaintextBackup,
    auto_rotate_period: ring.autoRotatePeriod,
    deletion_allowed: ring.deletionAllowed,
    derived: ring.derived,
    exportable: ring.exportable,
    imported_key: false,
    ...(ring.type === 'hmac' ? {} : { keys }),
    latest_version: ring.latestVersion,
    min_available_version: ring.minAvailableVersion ?? 0,
    min_decryption_version: ring.minDecryptionVersion,
    min_encryption_version: ring.minEncryptionVersion,
    name: ring.name,
    supports_decryption: canEncrypt(ring.type),
    supports_derivation: symmetric(ring.type) !== undefined,
    supports_encryption: canEncrypt(ring.type),
    supports_signing: canSign(ring.type),
    type: ring.type,
    ...(ring.type === 'hmac' ? { key_size: keyLength(ring.versions[String(ring.latestVersion)]) } : {}),
    // Vault shows these of derived keys only; -1 is the convergent version of keys made since Vault 0.6.2.
    ...(ring.derived ? { kdf: 'hkdf_sha256', convergent_encryption: ring.convergent ?? false } : {}),
    ...(ring.convergent ? { convergent_encryption_version: -1 } : {}),
  };
}

/** `vault:v<N>:<base64>`: the version and the payload, or a message naming the field. */
export function parseVersioned(field: string, text: string): [number, Buffer] {
  const colon = text.startsWith(VERSIONED_PREFIX) ? text.indexOf(':', VERSIONED_PREFIX.length) : -1;
  const version = text.slice(VERSIONED_PREFIX.length, colon);
  const data = text.slice(colon + 1);
  if (colon < 0 || !/^\d+$/.test(version)) throw notVersioned(field);
  const payload = Buffer.from(data, data.includes('-') || data.includes('_') ? 'base64url' : 'base64');
  if (!isVersionedBase64(data, payload)) throw notVersioned(field);
  return [Number(version), payload];
}

const VERSIONED_PREFIX = 'vault:v';
const notVersioned = (field: string) => badInput(`${field}: must look like vault:v<version>:<base64>`);

export const versioned = (n: number, payload: Buffer, encoding: 'base64' | 'base64url' = 'base64') => `vault:v${n}:${payload.toString(encoding)}`;
