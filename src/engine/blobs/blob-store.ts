import { createHash, Hash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline as streamPipeline, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { releaseAsStreamed } from './release';

export const CHECKSUM_TYPES = ['md5', 'sha1', 'sha256', 'sha384', 'sha512'] as const;
export type ChecksumType = (typeof CHECKSUM_TYPES)[number];

/** A stored file: its id, size and the digest computed while it was written. */
export interface StoredBlob {
  readonly id: string;
  readonly size: number;
  readonly digestType: ChecksumType;
  readonly digest: string;
}

/** The stream was longer than allowed. */
export class BlobTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the file is larger than ${limit} bytes`);
  }
}

/** The partial file was swept while the upload stalled (no bytes for longer than an upload's lifetime). */
export class BlobUploadStalled extends Error {
  constructor() {
    super('the upload stalled for longer than an upload URL lives and its partial file was removed');
  }
}

const ID = /^[0-9a-f-]{36}$/;

/**
 * Bytes of an upload received and hashed ahead of the file's writes. With the write stream's default
 * (64 KiB, about one chunk of the socket) each write paused the request until it was done, so
 * receiving, hashing and writing took turns; with room for a few MiB the file is written (in one
 * `writev` of what piled up) while the next chunks arrive. Below RELEASE_STEP (release.ts), so that
 * a waiting chunk meets at most one of the transfer's minor collections and dies young.
 */
const WRITE_AHEAD = 4 * 1024 * 1024;

/** Bytes of a download read and sent at once. */
const READ_CHUNK = 1024 * 1024;

/**
 * Box images on the filesystem under `<data>/blobs`: `<id[0..2]>/<id>`. A file is written to
 * `tmp/` while it streams in and renamed into place only when complete, so a failed or
 * interrupted upload never leaves a visible partial file. Ids are generated here (UUIDs), never
 * taken from a request, so no path can escape the directory.
 */
export class BlobStore {
  static forDataDir(dataDir: string): BlobStore {
    return new BlobStore(join(dataDir, 'blobs'));
  }

  constructor(readonly root: string) {}

  path(id: string): string {
    if (!ID.test(id)) throw new Error(`invalid blob id "${id}"`);
    return join(this.root, id.slice(0, 2), id);
  }

  /** Streams `source` into a new blob, hashing as it goes; nothing is left behind on failure. */
  async write(source: Readable, digestType: ChecksumType, maxBytes = Number.POSITIVE_INFINITY): Promise<StoredBlob> {
    const id = randomUUID();
    const tmpDir = join(this.root, 'tmp');
    await mkdir(tmpDir, { recursive: true, mode: 0o700 });
    const tmp = join(tmpDir, `${id}.partial`);
    const hash = createHash(digestType);
    let size = 0;
    const release = releaseAsStreamed();
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        if (size > maxBytes) return done(new BlobTooLarge(maxBytes));
        hash.update(chunk);
        release(chunk.length);
        done(null, chunk);
      },
    });
    try {
      // flush: the file is on disk (fsync) before the database can point at it.
      await pipeline(source, meter, createWriteStream(tmp, { mode: 0o600, flush: true, highWaterMark: WRITE_AHEAD }));
      const dir = join(this.root, id.slice(0, 2));
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await rename(tmp, this.path(id)).catch((err: NodeJS.ErrnoException) => {
        throw err.code === 'ENOENT' ? new BlobUploadStalled() : err;
      });
      await syncDir(dir);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    return { id, size, digestType, digest: hash.digest('hex') };
  }

  /** The digest of a stored blob with another algorithm (reads the whole file). */
  async digest(id: string, type: ChecksumType): Promise<string> {
    const hash: Hash = createHash(type);
    await pipeline(createReadStream(this.path(id)), hash);
    return hash.digest('hex');
  }

  async size(id: string): Promise<number | undefined> {
    try {
      return (await stat(this.path(id))).size;
    } catch {
      return undefined;
    }
  }

  /**
   * A read stream of bytes start..end (inclusive), for downloads and Range requests, in chunks of
   * READ_CHUNK bytes: a sixteenth of the reads and socket writes of the default 64 KiB.
   */
  read(id: string, range?: { start: number; end: number }): Readable {
    const release = releaseAsStreamed();
    const counted = new Transform({
      highWaterMark: READ_CHUNK,
      transform(chunk: Buffer, _encoding, done) {
        release(chunk.length);
        done(null, chunk);
      },
    });
    // A pipeline, not .pipe(): a failed read fails the answer, and an answer cut short closes the file.
    return streamPipeline(createReadStream(this.path(id), { ...range, highWaterMark: READ_CHUNK }), counted, () => undefined);
  }

  /**
   * Removes the `tmp/*.partial` files of uploads that died mid-way (a killed process, a dropped
   * connection) and were last written before `cutoff` (epoch ms). A live upload writes its file
   * with every chunk, so only abandoned ones are that old. Returns how many went.
   */
  async sweepPartials(cutoff: number): Promise<number> {
    const tmpDir = join(this.root, 'tmp');
    let names: string[];
    try {
      names = await readdir(tmpDir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    let removed = 0;
    for (const name of names.filter((n) => n.endsWith('.partial'))) {
      const file = join(tmpDir, name);
      const info = await stat(file).catch(() => undefined);
      if (info && info.mtimeMs < cutoff) {
        await rm(file, { force: true });
        removed++;
      }
    }
    return removed;
  }

  /** Removes blobs; missing ones are fine (a delete may be retried). */
  async remove(...ids: (string | null | undefined)[]): Promise<void> {
    for (const id of ids) if (id) await rm(this.path(id), { force: true });
  }
}

/** Makes a rename in `dir` durable: the directory entry itself is flushed. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
