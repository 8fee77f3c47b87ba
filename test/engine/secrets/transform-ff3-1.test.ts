/* eslint-disable no-bitwise -- the reference FF3-1 is specified on bits and bytes, as the cipher it checks. */
import { createCipheriv, randomBytes } from 'node:crypto';
import vectors from './fixtures/ff3-1-vectors.json';
import { FF31 } from '../../../src/engine/secrets/engines/transform/ff3-1';

const alphabets = vectors.alphabets as Record<string, string>;

/** FF3-1.Encrypt written straight from SP 800-38G Rev. 1 (Algorithm 9), in BigInt: the check of the fast paths. */
function reference(key: Buffer, radix: number, x: readonly number[], tweak: Buffer): number[] {
  const r = BigInt(radix);
  const num = (digits: readonly number[]) => digits.reduce((acc, d) => acc * r + BigInt(d), 0n);
  const str = (value: bigint, m: number) => Array.from({ length: m }, (_, k) => Number((value / r ** BigInt(m - 1 - k)) % r));
  const rev = <T>(a: readonly T[]) => [...a].reverse();
  const aes = createCipheriv(`aes-${key.length * 8}-ecb`, Buffer.from(key).reverse(), null).setAutoPadding(false);
  const n = x.length;
  const u = Math.ceil(n / 2);
  const v = n - u;
  let a = x.slice(0, u);
  let b = x.slice(u);
  const tl = Buffer.from([tweak[0], tweak[1], tweak[2], tweak[3] & 0xf0]);
  const tr = Buffer.from([tweak[4], tweak[5], tweak[6], (tweak[3] & 0x0f) << 4]);
  for (let i = 0; i < 8; i++) {
    const m = i % 2 === 0 ? u : v;
    const w = Buffer.from(i % 2 === 0 ? tr : tl);
    w[3] ^= i;
    const nb = num(rev(b));
    const p = Buffer.concat([w, Buffer.from(Array.from({ length: 12 }, (_, k) => Number((nb >> BigInt(8 * (11 - k))) & 0xffn)))]);
    const s = Buffer.from(aes.update(Buffer.from(p).reverse())).reverse();
    const y = BigInt(`0x${s.toString('hex')}`);
    const c = (num(rev(a)) + y) % r ** BigInt(m);
    [a, b] = [b, rev(str(c, m))];
  }
  return [...a, ...b];
}

describe('FF3-1 (NIST SP 800-38G Rev. 1)', () => {
  test.each(vectors.vectors.map((v) => [`radix ${v.radix}, ${v.key.length * 4}-bit key, ${v.plaintext.length} numerals`, v] as const))(
    'ACVP vector: %s',
    (_name, v) => {
      const alphabet = alphabets[String(v.radix)];
      const cipher = new FF31(Buffer.from(v.key, 'hex'), v.radix);
      const tweak = Buffer.from(v.tweak, 'hex');
      const numerals = (s: string) => Array.from(s, (c) => alphabet.indexOf(c));
      const text = (d: number[]) => d.map((i) => alphabet[i]).join('');
      expect(text(cipher.encrypt(numerals(v.plaintext), tweak))).toBe(v.ciphertext);
      expect(text(cipher.decrypt(numerals(v.ciphertext), tweak))).toBe(v.plaintext);
    },
  );

  test('length limits of the standard: radix^minlen >= 10^6, maxlen = 2 floor(log_radix 2^96)', () => {
    const key = randomBytes(32);
    expect([new FF31(key, 10).minLength, new FF31(key, 10).maxLength]).toEqual([6, 56]);
    expect([new FF31(key, 26).minLength, new FF31(key, 26).maxLength]).toEqual([5, 40]);
    expect([new FF31(key, 62).minLength, new FF31(key, 62).maxLength]).toEqual([4, 32]);
    expect([new FF31(key, 65536).minLength, new FF31(key, 65536).maxLength]).toEqual([2, 12]);
    const ten = new FF31(key, 10);
    expect(() => ten.encrypt([1, 2, 3, 4, 5], randomBytes(7))).toThrow(/needs 6 to 56 characters to transform, not 5/);
    expect(() => ten.encrypt(new Array(57).fill(1), randomBytes(7))).toThrow(/not 57/);
    expect(() => ten.encrypt([1, 2, 3, 4, 5, 6], randomBytes(8))).toThrow(/tweak must be 7 bytes/);
    expect(() => new FF31(randomBytes(20), 10)).toThrow(/16, 24 or 32 bytes/);
    expect(() => new FF31(key, 1)).toThrow(/radix must be 2 to 65536/);
  });

  test('the reference implementation agrees with the ACVP vectors', () => {
    for (const v of vectors.vectors) {
      const alphabet = alphabets[String(v.radix)];
      const out = reference(Buffer.from(v.key, 'hex'), v.radix, Array.from(v.plaintext, (c) => alphabet.indexOf(c)), Buffer.from(v.tweak, 'hex'));
      expect(out.map((i) => alphabet[i]).join('')).toBe(v.ciphertext);
    }
  });

  test('every length and arithmetic path (one reduction, reductions every few bytes, BigInt) matches the reference; batches match single calls', () => {
    const key = randomBytes(32);
    for (const radix of [10, 26, 62, 65536]) {
      const ff = new FF31(key, radix);
      const xs: number[][] = [];
      const tweaks: Buffer[] = [];
      for (let n = ff.minLength; n <= ff.maxLength; n++) {
        const x = Array.from({ length: n }, () => Math.floor(Math.random() * radix));
        const tweak = randomBytes(7);
        expect(ff.encrypt(x, tweak)).toEqual(reference(key, radix, x, tweak));
        expect(ff.decrypt(ff.encrypt(x, tweak), tweak)).toEqual(x);
        xs.push(x);
        tweaks.push(tweak);
      }
      // One call for all lengths: the Number-path values share each round's AES call, the others run alone.
      const batch = ff.encryptAll(xs, tweaks);
      expect(batch).toEqual(xs.map((x, k) => ff.encrypt(x, tweaks[k])));
      expect(ff.decryptAll(batch, tweaks)).toEqual(xs);
    }
    expect(() => new FF31(key, 10).encryptAll([[1, 2, 3, 4, 5, 6]], [])).toThrow(/one tweak per value/);
  });

  test('the single-value path (in place, on a longer scratch) agrees with the reference and the batch path: many radixes and lengths, both directions', () => {
    const key = randomBytes(24);
    for (const radix of [2, 3, 7, 10, 11, 16, 26, 36, 62, 100, 255, 256, 1000, 4096, 40000, 65535, 65536]) {
      const ff = new FF31(key, radix);
      const lengths = Array.from({ length: 12 }, () => ff.minLength + Math.floor(Math.random() * (ff.maxLength - ff.minLength + 1)));
      for (const n of [ff.minLength, ff.maxLength, ...lengths]) {
        const x = Array.from({ length: n }, () => Math.floor(Math.random() * radix));
        const tweak = randomBytes(7);
        const expected = reference(key, radix, x, tweak);
        const scratch = new Uint16Array(ff.maxLength + 3).fill(7 % radix);
        scratch.set(x);
        ff.transform(scratch, n, tweak, true);
        expect(Array.from(scratch.subarray(0, n))).toEqual(expected);
        expect(Array.from(scratch.subarray(n))).toEqual(new Array(ff.maxLength + 3 - n).fill(7 % radix));
        // The batch path (round i of both values in one AES call) gives the same, both ways.
        const other = Array.from({ length: n }, () => Math.floor(Math.random() * radix));
        expect(ff.encryptAll([x, other], [tweak, tweak])).toEqual([expected, ff.encrypt(other, tweak)]);
        expect(ff.decryptAll([expected, ff.encrypt(other, tweak)], [tweak, tweak])).toEqual([x, other]);
        ff.transform(scratch, n, tweak, false);
        expect(Array.from(scratch.subarray(0, n))).toEqual(x);
      }
      expect(() => ff.transform(new Uint16Array(ff.maxLength + 1), ff.maxLength + 1, randomBytes(7), true)).toThrow(/needs \d+ to \d+ characters/);
      expect(() => ff.transform(new Uint16Array(ff.maxLength), ff.maxLength, randomBytes(6), false)).toThrow(/tweak must be 7 bytes, not 6/);
    }
  });

  test('a permutation of the whole domain, both arithmetic paths agree with decryption', () => {
    const key = randomBytes(32);
    const tweak = randomBytes(7);
    // radix 1000, 2 numerals: the smallest domain the standard allows (10^6), checked in full would be slow;
    // radix 10 with 6 numerals: 10^6 values, sampled; long strings use the BigInt path.
    const ten = new FF31(key, 10);
    const seen = new Set<string>();
    for (let n = 0; n < 2000; n++) {
      const x = Array.from(String(n * 499).padStart(6, '0'), Number);
      const c = ten.encrypt(x, tweak);
      expect(c).toHaveLength(6);
      expect(ten.decrypt(c, tweak)).toEqual(x);
      seen.add(c.join(''));
    }
    expect(seen.size).toBe(2000);
    const long = Array.from({ length: 56 }, (_, i) => (i * 7) % 10);
    expect(ten.decrypt(ten.encrypt(long, tweak), tweak)).toEqual(long);
    expect(ten.encrypt(long, tweak)).not.toEqual(ten.encrypt(long, randomBytes(7)));
  });
});
