import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readlinkSync } from 'node:fs';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { BlobStore } from '../../../src/engine/blobs/blob-store';
import { RELEASE_STEP, releaseAsStreamed, releasesRun } from '../../../src/engine/blobs/release';
import { tempDir } from '../../helpers/storage';

/**
 * While `work` runs: the collections the counters ran, and the minor collections V8 reported
 * (PerformanceObserver's gc entries), which show that they are real ones.
 */
async function minorCollections(work: () => Promise<void>): Promise<{ run: number; seen: number }> {
  const before = releasesRun();
  let minor = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) minor++;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  await work();
  // gc entries are delivered on later turns, through immediates: a timer alone could fire first in a
  // process the busy machine had paused, and leave them undelivered.
  for (let i = 0; i < 10; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setImmediate(resolve));
  }
  observer.disconnect();
  return { run: releasesRun() - before, seen: minor };
}

const drain = async (stream: Readable): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

const openFiles = (path: string) => readdirSync('/proc/self/fd').filter((fd) => {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`) === path;
  } catch {
    return false;
  }
}).length;

/** src/engine/blobs/release.ts: box files free their chunks' buffers as they stream, not 64 MiB later. */
describe('box file streams release their buffers as they go', () => {
  const store = new BlobStore(tempDir());
  const size = 3 * RELEASE_STEP + 12345;
  const data = randomBytes(size);
  let id = '';

  test('a counter runs a minor collection each time the bytes pass a multiple of the step', async () => {
    // The first collection also sets the collector up, whose context V8 later collects in a full collection.
    releaseAsStreamed()(RELEASE_STEP);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const count = releaseAsStreamed();
    // Young objects between the counts: V8 skips a scavenge of an empty young generation.
    const garbage = () => Array.from({ length: 1000 }, (_, i) => ({ i }));
    const ran = await minorCollections(async () => {
      count(RELEASE_STEP - 1); // no step passed yet
      garbage();
      count(1);
      garbage();
      count(RELEASE_STEP / 2);
      garbage();
      count(RELEASE_STEP);
    });
    expect(ran.run).toBe(2);
    expect(ran.seen).toBeGreaterThanOrEqual(1);
  });

  test('an upload keeps every byte and its digest while collecting', async () => {
    const chunks = Array.from({ length: Math.ceil(size / 65536) }, (_, i) => data.subarray(i * 65536, (i + 1) * 65536));
    let blob: Awaited<ReturnType<BlobStore['write']>> | undefined;
    const ran = await minorCollections(async () => {
      blob = await store.write(Readable.from(chunks), 'sha256');
    });
    expect(blob).toMatchObject({ size, digest: createHash('sha256').update(data).digest('hex') });
    expect(ran.run).toBe(3);
    expect(ran.seen).toBeGreaterThanOrEqual(1);
    id = blob!.id;
  });

  test('a download and a range of it read back the same bytes', async () => {
    let whole: Buffer = Buffer.alloc(0);
    const ran = await minorCollections(async () => {
      whole = await drain(store.read(id));
    });
    expect(whole.equals(data)).toBe(true);
    expect(ran.run).toBe(3);
    expect(ran.seen).toBeGreaterThanOrEqual(1);
    const range = await drain(store.read(id, { start: RELEASE_STEP - 10, end: RELEASE_STEP + 9 }));
    expect(range.equals(data.subarray(RELEASE_STEP - 10, RELEASE_STEP + 10))).toBe(true);
  });

  const onLinux = process.platform === 'linux' ? test : test.skip;
  onLinux('a download cut short closes its file, and a missing file fails the stream', async () => {
    const stream = store.read(id);
    await new Promise((resolve) => stream.once('readable', resolve));
    expect(openFiles(store.path(id))).toBe(1);
    stream.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(openFiles(store.path(id))).toBe(0);
    await expect(drain(store.read('00000000-0000-4000-8000-000000000000'))).rejects.toThrow(/ENOENT/);
  });
});
