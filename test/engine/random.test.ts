import { pooledRandomBytes } from '../../src/engine/random';

describe('pooledRandomBytes', () => {
  it('hands out bytes of the size asked, never the same bytes twice across pool refills', () => {
    const seen = new Set<string>();
    // 4 KiB pool: 1,000 draws of 32 bytes refill it several times.
    for (let i = 0; i < 1000; i++) {
      const bytes = pooledRandomBytes(32);
      expect(bytes).toHaveLength(32);
      const hex = bytes.toString('hex');
      expect(seen.has(hex)).toBe(false);
      seen.add(hex);
    }
  });

  it('gives each caller a copy: changing one leaves the next draws alone', () => {
    const a = pooledRandomBytes(12);
    a.fill(0);
    const b = pooledRandomBytes(12);
    expect(b.equals(Buffer.alloc(12))).toBe(false);
  });

  it('draws sizes larger than a pool share directly', () => {
    expect(pooledRandomBytes(4096)).toHaveLength(4096);
    expect(pooledRandomBytes(0)).toHaveLength(0);
  });
});
