import { hash as oneShotHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { recordSecret } from './leak-watch';
import { pooledRandomBytes } from './random';

/** One-shot `hash` (no Hash object): tokens are hashed on every request. */
export function sha256Hex(value: string): string {
  return oneShotHash('sha256', value, 'hex');
}

export function timingSafeEqualHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A random token: `prefix` plus 32 random bytes, URL-safe. */
export function newToken(prefix: string): string {
  const token = `${prefix}${pooledRandomBytes(32).toString('base64url')}`;
  recordSecret('token', token);
  return token;
}

/**
 * Passwords are hashed with scrypt (memory-hard: N=2^15, r=8 uses 32 MiB per hash).
 * Stored as `scrypt$N$r$p$salt$hash`, so parameters can be raised later without breaking old hashes.
 */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keylen: 32 };

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, SCRYPT.N, SCRYPT.r, SCRYPT.p, SCRYPT.keylen);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  // An unknown user still costs one hash, so response time does not reveal which logins exist.
  const [scheme, n, r, p, salt, hash] = (stored ?? DUMMY_HASH).split('$');
  if (scheme !== 'scrypt') return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), Number(n), Number(r), Number(p), expected.length);
  return stored !== null && stored !== undefined && timingSafeEqual(actual, expected);
}

const DUMMY_HASH = `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`;

function scryptAsync(password: string, salt: Buffer, N: number, r: number, p: number, keylen: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, keylen, { N, r, p, maxmem: 256 * N * r }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}
