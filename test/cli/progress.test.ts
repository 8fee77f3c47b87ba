import { Readable } from 'node:stream';
import { formatBytes, TransferProgress } from '../../src/client/progress';

/** A clock the test moves by hand, and the lines written. */
function harness(inPlace = false) {
  let now = 0;
  const lines: string[] = [];
  const options = { now: () => now, write: (text: string) => lines.push(text), inPlace };
  return { options, lines, tick: (ms: number) => (now += ms) };
}

describe('transfer progress', () => {
  test('a transfer quicker than the interval prints nothing', () => {
    const h = harness();
    const p = new TransferProgress('upload a/b/1/virtualbox', 1000, h.options);
    h.tick(500);
    p.advance(1000);
    p.finish();
    expect(h.lines).toEqual([]);
  });

  test('a long transfer reports bytes, share, rate and time left once per interval, then a summary', () => {
    const h = harness();
    const gib = 1024 ** 3;
    const p = new TransferProgress('upload a/b/1/virtualbox', 2 * gib, h.options);
    h.tick(1000);
    p.advance(gib / 4); // 256 MiB after 1 s
    h.tick(400);
    p.advance(1); // within the interval: no line
    h.tick(600);
    p.advance(gib / 4 - 1);
    h.tick(6000);
    p.advance(1.5 * gib);
    p.finish();
    expect(h.lines).toEqual([
      'upload a/b/1/virtualbox: 256.0 MiB of 2.0 GiB (12%), 256.0 MiB/s, about 7 s left\n',
      'upload a/b/1/virtualbox: 512.0 MiB of 2.0 GiB (25%), 256.0 MiB/s, about 6 s left\n',
      'upload a/b/1/virtualbox: 2.0 GiB of 2.0 GiB (100%), 256.0 MiB/s, about 0 s left\n',
      'upload a/b/1/virtualbox: 2.0 GiB in 8.0 s (256.0 MiB/s)\n',
    ]);
  });

  test('on a terminal one line is rewritten in place', () => {
    const h = harness(true);
    const p = new TransferProgress('download', undefined, h.options);
    h.tick(2000);
    p.advance(2048);
    p.finish();
    expect(h.lines).toEqual(['\r\u001b[Kdownload: 2.0 KiB, 1.0 KiB/s', '\r\u001b[Kdownload: 2.0 KiB in 2.0 s (1.0 KiB/s)', '\n']);
  });

  test('the tracked stream passes every byte through unchanged and carries source errors', async () => {
    const h = harness();
    const p = new TransferProgress('upload', 6, h.options);
    const chunks: Buffer[] = [];
    for await (const chunk of p.track(Readable.from([Buffer.from('abc'), Buffer.from('def')]))) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('abcdef');

    const failing = new Readable({ read() { this.destroy(new Error('disk gone')); } });
    await expect((async () => { for await (const _ of p.track(failing)); })()).rejects.toThrow('disk gone');
  });

  test('sizes in binary units', () => {
    expect([0, 1023, 1536, 5 * 1024 ** 2, 3.25 * 1024 ** 3].map(formatBytes)).toEqual(['0 B', '1023 B', '1.5 KiB', '5.0 MiB', '3.3 GiB']);
  });
});
