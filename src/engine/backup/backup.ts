import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { stat } from 'node:fs/promises';
import { Readable, Writable } from 'node:stream';
import { constants as zlibConstants, gzipSync } from 'node:zlib';
import type { Pack } from 'tar-stream';
import { BlobStore } from '../blobs/blob-store';
import { releaseAsStreamed } from '../blobs/release';
import { masterKeyFingerprint, masterKeyText, readMasterKey, secretsKeyLocation } from '../secrets/core/barrier';
import type { StorageConfig } from '../storage';
import { VERSION } from '../version';
import { openRawConnection, RawConnection, SQLITE_FILE } from './connection';
import {
  BACKUP_FORMAT, BLOBS_PREFIX, CHUNK_BYTES, encodeRow, FORMAT_VERSION, KEY_ENTRY, Manifest, MANIFEST_ENTRY, ManifestFile, ManifestTable,
  TABLES_PREFIX,
} from './format';
import { BLOB_COLUMN, listTables, quoted, schemaVersion } from './tables';

/**
 * How long a backup's hold on the removal of box files lasts, and how often a running backup renews
 * it. A backup that dies leaves a hold that lapses by itself; files wait for removal meanwhile.
 */
const HOLD_MS = 10 * 60 * 1000;
const HOLD_RENEW_MS = 60 * 1000;
/** Bytes read ahead of the output. */
export const IO_AHEAD = 8 * 1024 * 1024;

export interface BackupOptions {
  readonly storage: StorageConfig;
  readonly dataDir: string;
  /** `--secrets-key-file`: where the master key lives when not in the data directory. */
  readonly secretsKeyFile?: string;
  /** Puts the master key itself into the backup. */
  readonly includeSecretsKey?: boolean;
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Writes a backup (format.ts) of everything a server stores to `out`, while servers go on serving:
 * the rows of every table read in one snapshot (SQLite: one read transaction on the WAL;
 * PostgreSQL: REPEATABLE READ READ ONLY), then the box files those rows name. Box files never change
 * once written (a new upload is a new file); a removed one is removed by the registry's background
 * job, which a backup holds off (backup_holds) from before its snapshot until its last file is read.
 * Memory stays bounded: rows stream through a cursor a batch at a time, one chunk at most is held.
 */
export async function writeBackup(options: BackupOptions, out: Writable): Promise<Manifest> {
  const env = options.env ?? process.env;
  const key = readMasterKey(secretsKeyLocation(options.dataDir, env, options.secretsKeyFile), env);
  if (options.includeSecretsKey && !key) throw new Error('--include-secrets-key: there is no secrets key to include (none was ever created)');
  const holds = await openRawConnection(options.storage, options.dataDir);
  if (!holds) throw new Error(`no Hangar database in ${options.dataDir} (${SQLITE_FILE} is missing)`);
  let snapshot: RawConnection | undefined;
  const holdId = randomUUID();
  let renew: NodeJS.Timeout | undefined;
  try {
    try {
      await holds.run('INSERT INTO backup_holds (id, expires_at) VALUES (?, ?)', [holdId, Date.now() + HOLD_MS]);
    } catch (err) {
      if (/backup_holds/.test((err as Error).message)) {
        throw new Error('the database predates backups: start the current Hangar on it once (it migrates the schema), then back up');
      }
      throw err;
    }
    renew = setInterval(() => {
      holds.run('UPDATE backup_holds SET expires_at = ? WHERE id = ?', [Date.now() + HOLD_MS, holdId]).catch(() => undefined);
    }, HOLD_RENEW_MS);
    snapshot = (await openRawConnection(options.storage, options.dataDir))!;
    const tar = require('tar-stream') as typeof import('tar-stream');
    // Room for a few reads ahead of the writes, so that reading, hashing and writing overlap.
    const pack = tar.pack({ highWaterMark: IO_AHEAD });
    const output = drain(pack, out);
    // Awaited at the end; a failure before (a full disk) destroys the pack, which fails the entry being written.
    output.catch(() => undefined);
    try {
      const writer = new EntryWriter(pack);
      await snapshot.beginSnapshot();
      const all = snapshot.all.bind(snapshot);
      const version = await schemaVersion(all, snapshot.dialect);
      const tables: ManifestTable[] = [];
      const release = releaseAsStreamed();
      const blobIds = new Set<string>();
      for (const shape of await listTables(all, snapshot.dialect)) {
        const blobColumn = shape.columns.indexOf(BLOB_COLUMN);
        const select = `SELECT ${shape.columns.map(quoted).join(', ')} FROM ${quoted(shape.name)}`;
        const files: string[] = [];
        let rows = 0;
        let lines: string[] = [];
        let bytes = 0;
        const flush = async () => {
          // The chunk's buffers live outside V8's heap: see releaseAsStreamed.
          release(bytes);
          const path = `${TABLES_PREFIX}${shape.name}/${String(files.length + 1).padStart(6, '0')}.jsonl.gz`;
          await writer.buffer(path, gzipSync(`${lines.join('\n')}\n`, { level: zlibConstants.Z_BEST_SPEED }));
          files.push(path);
          lines = [];
          bytes = 0;
        };
        for await (const batch of snapshot.batches(select)) {
          for (const values of batch) {
            const line = encodeRow(values);
            lines.push(line);
            bytes += line.length + 1;
            rows++;
            if (blobColumn >= 0 && typeof values[blobColumn] === 'string') blobIds.add(values[blobColumn]);
          }
          if (bytes >= CHUNK_BYTES) await flush();
        }
        if (lines.length > 0) await flush();
        tables.push({ name: shape.name, columns: shape.columns, rows, files });
      }
      // The rows are read; the box files they name are held, so the snapshot can end (on SQLite, the WAL can be checkpointed again).
      await snapshot.endSnapshot();
      const store = BlobStore.forDataDir(options.dataDir);
      let blobBytes = 0;
      for (const id of [...blobIds].sort()) {
        const path = store.path(id);
        const size = await stat(path).then((s) => s.size, (err: NodeJS.ErrnoException) => {
          throw err.code === 'ENOENT' ? new Error(`the box file ${id} that the database names is missing from ${store.root}`) : err;
        });
        await writer.file(`${BLOBS_PREFIX}${id}`, store.read(id), size);
        blobBytes += size;
      }
      if (options.includeSecretsKey && key) await writer.buffer(KEY_ENTRY, Buffer.from(masterKeyText(key)));
      const manifest: Manifest = {
        format: BACKUP_FORMAT,
        formatVersion: FORMAT_VERSION,
        hangarVersion: VERSION,
        createdAt: new Date().toISOString(),
        storage: snapshot.dialect,
        schemaVersion: version,
        tables,
        blobs: { count: blobIds.size, bytes: blobBytes },
        secretsKey: { fingerprint: key ? masterKeyFingerprint(key) : null, included: options.includeSecretsKey === true && key !== undefined },
        files: writer.files,
      };
      await writer.buffer(MANIFEST_ENTRY, Buffer.from(`${JSON.stringify(manifest, null, 1)}\n`), false);
      pack.finalize();
      await output;
      return manifest;
    } catch (err) {
      pack.destroy(err as Error);
      // The output's own failure (a full disk) says more than the tar entry it broke.
      throw (await output.then(() => undefined, (failure: unknown) => failure)) ?? err;
    }
  } finally {
    clearInterval(renew);
    await snapshot?.close();
    await holds.run('DELETE FROM backup_holds WHERE id = ?', [holdId]).catch(() => undefined);
    await holds.close();
  }
}

/** Copies the tar to `out`, waiting for `out` whenever it is full (bounded memory); fails as `out` does. */
async function drain(pack: Pack, out: Writable): Promise<void> {
  const failed = new Promise<never>((_resolve, reject) => out.once('error', reject));
  failed.catch(() => undefined);
  try {
    for await (const chunk of pack as AsyncIterable<Buffer>) {
      if (!out.write(chunk)) await Promise.race([once(out, 'drain'), failed]);
    }
  } catch (err) {
    pack.destroy(err as Error);
    throw err;
  }
}

/** Adds entries to the tar, each with its SHA-256 for the manifest. */
class EntryWriter {
  readonly files: ManifestFile[] = [];

  constructor(private readonly pack: Pack) {}

  async buffer(path: string, data: Buffer, listed = true): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      // Its failure comes through the callback; without a listener, its 'error' event would throw.
      this.pack.entry({ name: path, size: data.length, mode: 0o600 }, data, (err) => (err ? reject(err) : resolve())).on('error', () => undefined);
    });
    if (listed) this.files.push({ path, size: data.length, sha256: createHash('sha256').update(data).digest('hex') });
  }

  /** Streams a file into the tar (one read buffer at a time). */
  async file(path: string, source: Readable, size: number): Promise<void> {
    const hash = createHash('sha256');
    let entry!: ReturnType<Pack['entry']>;
    const done = new Promise<void>((resolve, reject) => {
      entry = this.pack.entry({ name: path, size, mode: 0o600 }, (err) => (err ? reject(err) : resolve()));
      entry.on('error', () => undefined);
    });
    for await (const chunk of source as AsyncIterable<Buffer>) {
      hash.update(chunk);
      if (!entry.write(chunk)) await once(entry as unknown as NodeJS.EventEmitter, 'drain');
    }
    (entry as unknown as NodeJS.WritableStream).end();
    await done;
    this.files.push({ path, size, sha256: hash.digest('hex') });
  }
}
