import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { badInput } from '../../core/request';
import { MountStore } from '../../core/store';

/** Hangar's own storage (sealed `secrets_entries`), the default tokenization store. */
export const INTERNAL_STORE = 'builtin/internal';

/**
 * A token's state as every store holds it: the HMAC of the token (the lookup key), the value and
 * its metadata sealed with AES-256-GCM under the transformation's key, and the expiry. No store
 * row holds the plaintext or the token itself.
 */
export interface TokenRecord {
  readonly hash: string;
  readonly ciphertext: string;
  /** Epoch ms; 0 never expires. */
  readonly expireAt: number;
  /** The key version that sealed it (tokenization-keys.ts); absent is version 1. */
  readonly version?: number;
}

export interface TokenPayload {
  readonly value: string;
  readonly metadata?: Record<string, string>;
}

interface TokenKeys {
  readonly mac: Buffer;
  readonly seal: Buffer;
  /** Convergent transformations: makes the token of a value and expiration. */
  readonly convergent: Buffer;
  /** Convergent transformations: names a value in the lookup index, so that no store row holds it. */
  readonly value: Buffer;
}

const keyCache = new Map<string, TokenKeys>();

/** The transformation's two sub-keys (HKDF of its key): one names tokens, one seals values. */
function keysOf(key: string): TokenKeys {
  let keys = keyCache.get(key);
  if (!keys) {
    const ikm = Buffer.from(key, 'base64');
    const derive = (info: string) => Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), info, 32));
    keys = {
      mac: derive('hangar transform token hash'),
      seal: derive('hangar transform token seal'),
      convergent: derive('hangar transform convergent token'),
      value: derive('hangar transform convergent value'),
    };
    if (keyCache.size > 1000) keyCache.clear();
    keyCache.set(key, keys);
  }
  return keys;
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** A new token: 32 random bytes in base58, as the public service's tokens look. */
export function newToken(): string {
  return base58(randomBytes(32));
}

/**
 * The token of a convergent transformation: 32 bytes of HMAC-SHA256 of the value and its expiration
 * (epoch ms, 0 for none) under a key derived from the transformation's first key (so rotating the key
 * keeps the tokens), in base58 like a random token. The same value and expiration give the same token.
 */
export function convergentToken(key: string, transformation: string, value: string, expireAt: number): string {
  return base58(createHmac('sha256', keysOf(key).convergent).update(`${transformation}\0${expireAt}\0${value}`).digest());
}

/** The lookup index's name of a value of a convergent transformation. */
export function valueHash(key: string, transformation: string, value: string): string {
  return createHmac('sha256', keysOf(key).value).update(`${transformation}\0${value}`).digest('base64url');
}

function base58(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = BASE58[Number(n % 58n)] + out;
    n /= 58n;
  }
  return out;
}

export function tokenHash(key: string, transformation: string, token: string): string {
  return createHmac('sha256', keysOf(key).mac).update(`${transformation}\0${token}`).digest('base64url');
}

export function sealToken(key: string, transformation: string, hash: string, payload: TokenPayload, expireAt: number, version = 1): TokenRecord {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keysOf(key).seal, iv).setAAD(Buffer.from(`${transformation}\0${hash}`));
  const body = Buffer.concat([cipher.update(JSON.stringify(payload)), cipher.final()]);
  const ciphertext = Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  return version === 1 ? { hash, ciphertext, expireAt } : { hash, ciphertext, expireAt, version };
}

export function openToken(key: string, transformation: string, record: TokenRecord): TokenPayload {
  const raw = Buffer.from(record.ciphertext, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', keysOf(key).seal, raw.subarray(0, 12)).setAAD(Buffer.from(`${transformation}\0${record.hash}`));
  decipher.setAuthTag(raw.subarray(12, 28));
  return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString()) as TokenPayload;
}

/** `key1=value1,key2=value2` (the spec's metadata string) as a map. */
export function parseMetadata(text: string | null | undefined): Record<string, string> | undefined {
  if (!text) return undefined;
  const out: Record<string, string> = {};
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue;
    const eq = pair.indexOf('=');
    if (eq <= 0) throw badInput(`metadata: "${pair}" is not key=value (use key1=value1,key2=value2)`);
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return out;
}

/** The internal store's key of a token. */
const internalKey = (transformation: string, hash: string) => `token/${transformation}/${hash}`;

export async function putInternal(store: MountStore, transformation: string, record: TokenRecord): Promise<void> {
  // The expiry also lets the secrets core's background job drop expired tokens.
  await store.put(internalKey(transformation, record.hash), record, record.expireAt || undefined);
}

export function getInternal(store: MountStore, transformation: string, hash: string): Promise<TokenRecord | undefined> {
  return store.get<TokenRecord>(internalKey(transformation, hash));
}

/** The lookup index of a convergent transformation: per value, the expirations (epoch ms, 0 none) it was encoded with. */
const indexKey = (transformation: string, hash: string) => `convergent/${transformation}/${hash}`;

export async function indexExpirations(store: MountStore, transformation: string, hash: string, add: readonly number[], now: number): Promise<void> {
  const known = (await store.get<number[]>(indexKey(transformation, hash))) ?? [];
  const live = [...new Set([...known, ...add])].filter((e) => e === 0 || e > now).sort((a, b) => a - b);
  const last = live.length ? live[live.length - 1] : now;
  // The entry expires with its last token (never, when one of them has no expiry).
  await store.put(indexKey(transformation, hash), live, live.includes(0) ? undefined : last);
}

export async function expirationsOf(store: MountStore, transformation: string, hash: string): Promise<number[]> {
  return (await store.get<number[]>(indexKey(transformation, hash))) ?? [];
}

/** Drops a deleted transformation's tokens (and convergent lookup index) from the internal store. */
export async function deleteTokens(store: MountStore, transformation: string): Promise<void> {
  for (const hash of await store.list(`token/${transformation}/`)) await store.delete(internalKey(transformation, hash));
  for (const hash of await store.list(`convergent/${transformation}/`)) await store.delete(indexKey(transformation, hash));
}
