import { randomBytes } from 'node:crypto';
import vectors from './fixtures/ff3-1-vectors.json';
import { FF31 } from '../../../src/engine/secrets/engines/transform/ff3-1';

const alphabets = vectors.alphabets as Record<string, string>;

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
