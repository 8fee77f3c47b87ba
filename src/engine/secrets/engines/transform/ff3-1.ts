/* eslint-disable no-bitwise -- FF3-1 is specified on bits and bytes (tweak halves, the round number, block bytes). */
import { Cipher, createCipheriv } from 'node:crypto';

/**
 * Largest modulus of the Number path: a round's NUM(S) mod m sums products S[j] * (256^j mod m),
 * each below 256 m, and stays exact in doubles when reduced every few terms (see `Shape.every`).
 */
const FAST_LIMIT = 2 ** 44;
const TWO_96 = 2n ** 96n;

/** What a numeral-string length fixes: the halves, their moduli and, on the Number path, the powers of 256 mod each. */
interface Shape {
  readonly u: number;
  readonly v: number;
  readonly mu: number;
  readonly mv: number;
  /** 256^j mod mu and mod mv, j = 0..15 (Number path only). */
  readonly pu?: Float64Array;
  readonly pv?: Float64Array;
  /** How many products may be summed before a reduction keeps the sum below 2^53. */
  readonly everyU: number;
  readonly everyV: number;
}

const powersMod = (m: number) => {
  const p = new Float64Array(16);
  let x = 1 % m;
  for (let j = 0; j < 16; j++) {
    p[j] = x;
    x = (x * 256) % m;
  }
  return p;
};
// (every * 255 + 2) * m must stay below 2^53: a partial sum plus the carried remainder, plus m for `mod`.
const termsPerReduction = (m: number) => Math.max(1, Math.floor((2 ** 53 / m - 2) / 256));

/**
 * y mod m for integers 0 <= y and y + m < 2^53, without the `%` of doubles (a call to fmod in V8):
 * the rounded quotient is the true one or one above, and every product and difference is exact.
 */
function mod(y: number, m: number): number {
  const r = y - Math.floor(y / m) * m;
  return r < 0 ? r + m : r;
}

/** One value of a batch while its rounds run: the halves as Numbers and its tweak halves. */
interface Lane {
  a: number;
  b: number;
  readonly shape: Shape;
  readonly tl: number;
  readonly tr: number;
}

/** Numerals in [0, radix): radixes go to 65536, so a Uint16Array holds any (one type keeps the hot path monomorphic). */
export type Numerals = Uint16Array;

/**
 * FF3-1 (NIST SP 800-38G Rev. 1): format-preserving encryption of a numeral string under AES with
 * a 56-bit tweak. Numeral strings are arrays of digits in [0, radix).
 *
 * The standard's REV/REVB steps are folded into byte order: NUM_radix(REV(X)) is X read with its
 * first numeral least significant, so the halves A and B are carried as plain integers; the block
 * REVB(P) is P written backwards (the number little-endian, then W reversed) and NUM(REVB(output))
 * is the AES output read little-endian. Halves below 2^44 use doubles (a card number's halves are
 * 10^8), longer ones BigInt.
 *
 * Cost: the eight rounds of one value are eight dependent AES blocks, and each call into
 * node:crypto (one `update` of a long-lived ECB cipher) costs far more than the block itself, so a
 * single value is bound by eight such calls: `transform` runs one value with nothing else on the
 * way (no allocation but the AES outputs). `encryptAll`/`decryptAll` run round i of every value of
 * a batch in one multi-block `update`, which costs little more than one.
 */
export class FF31 {
  readonly minLength: number;
  readonly maxLength: number;
  private readonly aes: Cipher;
  private readonly block = Buffer.alloc(16);
  /** The Number path's block: only bytes 0..5 (NUM < 2^44) and 12..15 (the tweak) are ever written. */
  private readonly numberBlock = Buffer.alloc(16);
  private readonly scratch: Uint16Array;
  /** By numeral-string length. */
  private readonly shapes: Array<Shape | undefined> = [];

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
    this.scratch = new Uint16Array(this.maxLength);
  }

  /** The reason a numeral string of this length cannot be enciphered, or undefined. */
  lengthProblem(n: number): string | undefined {
    if (n >= this.minLength && n <= this.maxLength) return undefined;
    return `FF3-1 over an alphabet of ${this.radix} characters needs ${this.minLength} to ${this.maxLength} characters to transform, not ${n}`;
  }

  encrypt(x: ArrayLike<number>, tweak: Buffer): number[] {
    return this.one(x, tweak, true);
  }

  decrypt(x: ArrayLike<number>, tweak: Buffer): number[] {
    return this.one(x, tweak, false);
  }

  /** `transform` on a copy (in a scratch string when it fits: a longer one fails the length check). */
  private one(x: ArrayLike<number>, tweak: Buffer, forward: boolean): number[] {
    const n = x.length;
    const numerals = n <= this.scratch.length ? this.scratch : new Uint16Array(n);
    for (let k = 0; k < n; k++) numerals[k] = x[k];
    this.transform(numerals, n, tweak, forward);
    const out = new Array<number>(n);
    for (let k = 0; k < n; k++) out[k] = numerals[k];
    return out;
  }

  /**
   * Enciphers (forward) or deciphers the numeral string x[0..n) in place: the single-value path,
   * whose only allocations (on the Number path) are node:crypto's eight AES outputs.
   */
  transform(x: Numerals, n: number, tweak: Buffer, forward: boolean): void {
    if (n > x.length) throw new Error(`FF3-1: ${n} numerals asked of a string of ${x.length}`);
    const shape = this.checked(n, tweak);
    const tl = tweakLeft(tweak);
    const tr = tweakRight(tweak);
    const { u, v, mu, mv, pu, pv } = shape;
    if (!pu || !pv) {
      const out = this.roundsBigInt(x, shape, tl, tr, forward);
      for (let k = 0; k < n; k++) x[k] = out[k];
      return;
    }
    const r = this.radix;
    let a = 0;
    let b = 0;
    for (let j = u - 1; j >= 0; j--) a = a * r + x[j];
    for (let j = v - 1; j >= 0; j--) b = b * r + x[u + j];
    const block = this.numberBlock;
    for (let step = 0; step < 8; step++) {
      const i = forward ? step : 7 - step;
      const even = (i & 1) === 0;
      writeNum(block, 0, forward ? b : a);
      writeTweak(block, 0, even ? tr : tl, i);
      const m = even ? mu : mv;
      const y = numMod(this.aes.update(block), 0, even ? pu : pv, m, even ? shape.everyU : shape.everyV);
      if (forward) {
        const c = a + y;
        a = b;
        b = c < m ? c : c - m;
      } else {
        const c = b - y;
        b = a;
        a = c < 0 ? c + m : c;
      }
    }
    writeDigits(x, 0, a, u, r);
    writeDigits(x, u, b, v, r);
  }

  /** Enciphers many numeral strings (each with its tweak); the rounds of all run together. */
  encryptAll(xs: readonly ArrayLike<number>[], tweaks: readonly Buffer[]): number[][] {
    return this.runAll(xs, tweaks, true);
  }

  decryptAll(xs: readonly ArrayLike<number>[], tweaks: readonly Buffer[]): number[][] {
    return this.runAll(xs, tweaks, false);
  }

  /** The shape of a valid length; throws the standard's length limit or the tweak's size. */
  private checked(n: number, tweak: Buffer): Shape {
    const problem = this.lengthProblem(n);
    if (problem) throw new Error(problem);
    if (tweak.length !== 7) throw new Error(`FF3-1 tweak must be 7 bytes, not ${tweak.length}`);
    return this.shapes[n] ?? this.shape(n);
  }

  private shape(n: number): Shape {
    let s = this.shapes[n];
    if (!s) {
      const u = Math.ceil(n / 2);
      const v = n - u;
      const mu = this.radix ** u;
      const mv = this.radix ** v;
      const fast = mu < FAST_LIMIT;
      const [pu, pv] = fast ? [powersMod(mu), powersMod(mv)] : [undefined, undefined];
      s = { u, v, mu, mv, everyU: termsPerReduction(mu), everyV: termsPerReduction(mv), pu, pv };
      this.shapes[n] = s;
    }
    return s;
  }

  private runAll(xs: readonly ArrayLike<number>[], tweaks: readonly Buffer[], forward: boolean): number[][] {
    if (xs.length !== tweaks.length) throw new Error('FF3-1: one tweak per value');
    if (xs.length === 1) return [forward ? this.encrypt(xs[0], tweaks[0]) : this.decrypt(xs[0], tweaks[0])];
    const out = new Array<number[]>(xs.length);
    const lanes: Lane[] = [];
    const at: number[] = [];
    for (let k = 0; k < xs.length; k++) {
      const x = xs[k];
      const tweak = tweaks[k];
      const shape = this.checked(x.length, tweak);
      const tl = tweakLeft(tweak);
      const tr = tweakRight(tweak);
      if (!shape.pu) {
        out[k] = this.roundsBigInt(x, shape, tl, tr, forward);
        continue;
      }
      let a = 0;
      let b = 0;
      const r = this.radix;
      for (let j = shape.u - 1; j >= 0; j--) a = a * r + x[j];
      for (let j = shape.v - 1; j >= 0; j--) b = b * r + x[shape.u + j];
      lanes.push({ a, b, shape, tl, tr });
      at.push(k);
    }
    if (lanes.length) this.roundsMany(lanes, forward);
    lanes.forEach((lane, i) => {
      const digits = new Uint16Array(lane.shape.u + lane.shape.v);
      writeDigits(digits, 0, lane.a, lane.shape.u, this.radix);
      writeDigits(digits, lane.shape.u, lane.b, lane.shape.v, this.radix);
      out[at[i]] = [...digits];
    });
    return out;
  }

  /** The eight rounds of many values: each round one multi-block update. */
  private roundsMany(lanes: readonly Lane[], forward: boolean): void {
    const blocks = Buffer.alloc(16 * lanes.length);
    for (let step = 0; step < 8; step++) {
      const i = forward ? step : 7 - step;
      for (let k = 0; k < lanes.length; k++) {
        const lane = lanes[k];
        writeNum(blocks, 16 * k, forward ? lane.b : lane.a);
        writeTweak(blocks, 16 * k, i % 2 === 0 ? lane.tr : lane.tl, i);
      }
      const s = this.aes.update(blocks);
      for (let k = 0; k < lanes.length; k++) round(lanes[k], s, 16 * k, i, forward);
    }
  }

  private roundsBigInt(x: ArrayLike<number>, shape: Shape, tl: number, tr: number, forward: boolean): number[] {
    const { u, v } = shape;
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
      writeTweak(block, 0, even ? tr : tl, i);
      const s = this.aes.update(block);
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

// T_L = T[0..27] || 0^4 and T_R = T[32..55] || T[28..31] || 0^4, as 32-bit words.
const tweakLeft = (t: Buffer) => ((t[0] << 24) | (t[1] << 16) | (t[2] << 8) | (t[3] & 0xf0)) >>> 0;
const tweakRight = (t: Buffer) => ((t[4] << 24) | (t[5] << 16) | (t[6] << 8) | ((t[3] & 0x0f) << 4)) >>> 0;

/**
 * The block REVB(W xor [i]_4 || [NUM]_12) is NUM little-endian in bytes 0..11, then W xor i reversed.
 * writeNum writes NUM < 2^44 into bytes 0..5: bytes 6..11 stay zero.
 */
function writeNum(buf: Buffer, at: number, num: number): void {
  const lo = num >>> 0;
  const hi = (num - lo) / 0x100000000;
  buf[at] = lo & 0xff;
  buf[at + 1] = (lo >>> 8) & 0xff;
  buf[at + 2] = (lo >>> 16) & 0xff;
  buf[at + 3] = lo >>> 24;
  buf[at + 4] = hi & 0xff;
  buf[at + 5] = hi >>> 8;
}

function writeTweak(buf: Buffer, at: number, w: number, i: number): void {
  buf[at + 12] = (w & 0xff) ^ i;
  buf[at + 13] = (w >>> 8) & 0xff;
  buf[at + 14] = (w >>> 16) & 0xff;
  buf[at + 15] = w >>> 24;
}

/** NUM(REVB(S)) mod m for the AES output S (16 bytes at `at`): the sum of S[j] * (256^j mod m), reduced every `every` terms. */
function numMod(s: Buffer, at: number, p: Float64Array, m: number, every: number): number {
  let y = 0;
  if (every >= 16) {
    for (let j = 0; j < 16; j++) y += s[at + j] * p[j];
  } else {
    for (let j = 0; j < 16; j++) {
      y += s[at + j] * p[j];
      if ((j + 1) % every === 0) y = mod(y, m);
    }
  }
  return mod(y, m);
}

/** One Feistel round of a lane from its AES output S (16 bytes at `at`), on the Number path. */
function round(lane: Lane, s: Buffer, at: number, i: number, forward: boolean): void {
  const even = i % 2 === 0;
  const { shape } = lane;
  const m = even ? shape.mu : shape.mv;
  const y = numMod(s, at, (even ? shape.pu : shape.pv)!, m, even ? shape.everyU : shape.everyV);
  // a, b and y are below m.
  if (forward) {
    const c = lane.a + y;
    lane.a = lane.b;
    lane.b = c < m ? c : c - m;
  } else {
    const c = lane.b - y;
    lane.b = lane.a;
    lane.a = c < 0 ? c + m : c;
  }
}

/** REV(STR^len_radix(value)) into out[from..from+len): first numeral least significant. */
function writeDigits(out: Numerals, from: number, value: number, len: number, r: number): void {
  for (let k = 0; k < len; k++) {
    const q = Math.floor(value / r);
    out[from + k] = value - q * r;
    value = q;
  }
}
