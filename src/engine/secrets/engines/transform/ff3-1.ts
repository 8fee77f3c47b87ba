/* eslint-disable no-bitwise -- FF3-1 is specified on bits and bytes (tweak halves, the round number, block bytes). */
import { Cipher, createCipheriv } from 'node:crypto';

/** Largest modulus for which the round arithmetic stays exact in doubles (y mod M by bytes). */
const FAST_LIMIT = 2 ** 45;
const TWO_96 = 2n ** 96n;

/**
 * FF3-1 (NIST SP 800-38G Rev. 1): format-preserving encryption of a numeral string under AES with
 * a 56-bit tweak. Numeral strings are arrays of digits in [0, radix).
 *
 * The standard's REV/REVB steps are folded into byte order: NUM_radix(REV(X)) is X read with its
 * first numeral least significant, so the halves A and B are carried as plain integers; the block
 * REVB(P) is P written backwards (the number little-endian, then W reversed) and NUM(REVB(output))
 * is the AES output read little-endian. Halves below 2^45 use doubles (the common case: a card
 * number's halves are 10^8), longer ones BigInt.
 */
export class FF31 {
  readonly minLength: number;
  readonly maxLength: number;
  private readonly aes: Cipher;
  private readonly block = Buffer.alloc(16);

  constructor(
    key: Buffer,
    readonly radix: number,
  ) {
    if (![16, 24, 32].includes(key.length)) throw new Error(`FF3-1 key must be 16, 24 or 32 bytes, not ${key.length}`);
    if (!Number.isInteger(radix) || radix < 2 || radix > 65536) throw new Error(`FF3-1 radix must be 2 to 65536, not ${radix}`);
    // CIPH_REVB(K): the key is used byte-reversed.
    this.aes = createCipheriv(`aes-${key.length * 8}-ecb`, Buffer.from(key).reverse(), null).setAutoPadding(false);
    // radix^minlen >= 1,000,000 and minlen >= 2; maxlen = 2 * floor(log_radix(2^96)).
    let min = 2;
    while (radix ** min < 1_000_000) min++;
    let k = 0;
    for (let p = 1n, r = BigInt(radix); p * r <= TWO_96; p *= r) k++;
    this.minLength = min;
    this.maxLength = 2 * k;
  }

  /** The reason a numeral string of this length cannot be enciphered, or undefined. */
  lengthProblem(n: number): string | undefined {
    if (n >= this.minLength && n <= this.maxLength) return undefined;
    return `FF3-1 over an alphabet of ${this.radix} characters needs ${this.minLength} to ${this.maxLength} characters to transform, not ${n}`;
  }

  encrypt(x: ArrayLike<number>, tweak: Buffer): number[] {
    return this.run(x, tweak, true);
  }

  decrypt(x: ArrayLike<number>, tweak: Buffer): number[] {
    return this.run(x, tweak, false);
  }

  private run(x: ArrayLike<number>, tweak: Buffer, forward: boolean): number[] {
    const n = x.length;
    const problem = this.lengthProblem(n);
    if (problem) throw new Error(problem);
    if (tweak.length !== 7) throw new Error(`FF3-1 tweak must be 7 bytes, not ${tweak.length}`);
    const u = Math.ceil(n / 2);
    const v = n - u;
    // T_L = T[0..27] || 0^4, T_R = T[32..55] || T[28..31] || 0^4.
    const tl = [tweak[0], tweak[1], tweak[2], tweak[3] & 0xf0];
    const tr = [tweak[4], tweak[5], tweak[6], (tweak[3] & 0x0f) << 4];
    const fast = this.radix ** u < FAST_LIMIT;
    const out = fast ? this.roundsNumber(x, u, v, tl, tr, forward) : this.roundsBigInt(x, u, v, tl, tr, forward);
    return out;
  }

  /** Writes W xor i (reversed) into the block's last four bytes and enciphers it. */
  private cipher(w: number[], i: number): Buffer {
    const b = this.block;
    b[12] = w[3] ^ i;
    b[13] = w[2];
    b[14] = w[1];
    b[15] = w[0];
    return this.aes.update(b);
  }

  private roundsNumber(x: ArrayLike<number>, u: number, v: number, tl: number[], tr: number[], forward: boolean): number[] {
    const r = this.radix;
    const mu = r ** u;
    const mv = r ** v;
    let a = 0;
    let b = 0;
    for (let k = u - 1; k >= 0; k--) a = a * r + x[k];
    for (let k = v - 1; k >= 0; k--) b = b * r + x[u + k];
    const block = this.block;
    for (let step = 0; step < 8; step++) {
      const i = forward ? step : 7 - step;
      const even = i % 2 === 0;
      const m = even ? mu : mv;
      // The numeral fed to the block: B when enciphering, A when deciphering (little-endian, 12 bytes).
      let feed = forward ? b : a;
      for (let j = 0; j < 12; j++) {
        block[j] = feed % 256;
        feed = Math.floor(feed / 256);
      }
      const s = this.cipher(even ? tr : tl, i);
      let y = 0;
      for (let j = 15; j >= 0; j--) y = (y * 256 + s[j]) % m;
      if (forward) {
        const c = (a + y) % m;
        a = b;
        b = c;
      } else {
        const c = (((b - y) % m) + m) % m;
        b = a;
        a = c;
      }
    }
    return [...digits(a, u, r), ...digits(b, v, r)];
  }

  private roundsBigInt(x: ArrayLike<number>, u: number, v: number, tl: number[], tr: number[], forward: boolean): number[] {
    const r = BigInt(this.radix);
    const mu = r ** BigInt(u);
    const mv = r ** BigInt(v);
    let a = 0n;
    let b = 0n;
    for (let k = u - 1; k >= 0; k--) a = a * r + BigInt(x[k]);
    for (let k = v - 1; k >= 0; k--) b = b * r + BigInt(x[u + k]);
    const block = this.block;
    for (let step = 0; step < 8; step++) {
      const i = forward ? step : 7 - step;
      const even = i % 2 === 0;
      const m = even ? mu : mv;
      let feed = forward ? b : a;
      for (let j = 0; j < 12; j++) {
        block[j] = Number(feed & 0xffn);
        feed >>= 8n;
      }
      const s = this.cipher(even ? tr : tl, i);
      let y = 0n;
      for (let j = 15; j >= 0; j--) y = (y << 8n) | BigInt(s[j]);
      y %= m;
      if (forward) {
        const c = (a + y) % m;
        a = b;
        b = c;
      } else {
        const c = (((b - y) % m) + m) % m;
        b = a;
        a = c;
      }
    }
    const big = (value: bigint, len: number) => {
      const out = new Array<number>(len);
      for (let k = 0; k < len; k++) {
        out[k] = Number(value % r);
        value /= r;
      }
      return out;
    };
    return [...big(a, u), ...big(b, v)];
  }
}

/** The numeral string of a value, first numeral least significant (REV(STR^m_radix(c))). */
function digits(value: number, len: number, r: number): number[] {
  const out = new Array<number>(len);
  for (let k = 0; k < len; k++) {
    out[k] = value % r;
    value = Math.floor(value / r);
  }
  return out;
}
