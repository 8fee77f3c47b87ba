import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { BlobStore, BlobTooLarge, BlobUploadStalled, StoredBlob } from '../blobs/blob-store';
import { newToken, sha256Hex, timingSafeEqualHex } from '../crypto';
import type { Engine } from '../engine';
import { HangarError, invalid, notFound } from '../http/errors';
import { Db } from '../storage';
import { registryConfig } from './config';
import { discardBlob, ProviderRow } from './providers';
import { touchBox } from './versions';

interface UploadRow {
  readonly id: string;
  readonly provider_id: string;
  readonly token_hash: string;
  readonly direct: number;
  readonly blob_id: string | null;
  readonly blob_size: number | null;
  readonly blob_digest_type: ProviderRow['blob_digest_type'];
  readonly blob_digest: string | null;
  readonly expires_at: number;
}

/** The box image store of the engine's data directory. */
export function blobStore(engine: Engine): BlobStore {
  if (!engine.dataDir) throw new HangarError(500, ['This server has no data directory for box files']);
  return BlobStore.forDataDir(engine.dataDir);
}

/**
 * A fresh upload URL for a provider. `upload_path` carries a one-time secret in its `token` query
 * parameter (the PUT to it has no other authentication; logs blank that parameter); the direct
 * kind also returns the `callback` that finalizes it (with authentication, path only: the
 * Vagrant CLI sends the callback's path and drops its query).
 */
export async function prepareUpload(
  db: Db,
  engine: Engine,
  baseUrl: string,
  provider: ProviderRow,
  callbackBase: string,
  direct: boolean,
  now: number,
): Promise<{ upload_path: string; callback?: string }> {
  const id = randomUUID();
  const token = newToken('');
  await db.run(
    'INSERT INTO registry_uploads (id, provider_id, token_hash, direct, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    [id, provider.id, sha256Hex(token), direct ? 1 : 0, now + registryConfig(engine).uploadUrlTtlMs, now],
  );
  const upload_path = `${baseUrl}/api/v1/uploads/${id}?token=${token}`;
  return direct ? { upload_path, callback: `${callbackBase}/${id}` } : { upload_path };
}

/**
 * Receives the PUT of a box file: streams it into the blob store (never into memory), computing
 * the checksum as it goes, and checks it against the provider's declared checksum. A plain upload
 * makes the provider hosted at once; a direct one waits for its callback. Nothing is visible
 * unless all of it arrived and matched.
 */
export async function receiveUpload(engine: Engine, uploadId: string, token: string, body: Readable): Promise<ProviderRow> {
  const now = engine.clock.now();
  const { provider } = await engine.storage.tx(async (db) => findUpload(db, uploadId, token, now), { readOnly: true });
  const store = blobStore(engine);
  let blob: StoredBlob;
  try {
    blob = await store.write(body, provider.checksum_type ?? 'sha256', registryConfig(engine).maxUploadBytes);
  } catch (err) {
    if (err instanceof BlobTooLarge) throw new HangarError(413, [`The box file is larger than the limit of ${err.limit} bytes`]);
    if (err instanceof BlobUploadStalled) throw new HangarError(408, ['The upload stalled for longer than its upload URL lives; request a new upload URL and upload again']);
    throw err;
  }
  try {
    return await engine.storage.tx(async (db) => {
      const found = await findUpload(db, uploadId, token, now, { ignoreExpiry: true });
      checkDigest(found.provider, blob.digestType, blob.digest);
      const later = engine.clock.now();
      if (found.upload.direct === 1) {
        if (found.upload.blob_id) await discardBlob(db, found.upload.blob_id, later);
        await db.run(
          'UPDATE registry_uploads SET blob_id = ?, blob_size = ?, blob_digest_type = ?, blob_digest = ? WHERE id = ?',
          [blob.id, blob.size, blob.digestType, blob.digest, uploadId],
        );
        return found.provider;
      }
      await db.run('DELETE FROM registry_uploads WHERE id = ?', [uploadId]);
      return attachBlob(db, found.provider, blob, later);
    });
  } catch (err) {
    await store.remove(blob.id);
    throw err;
  }
}

/** The callback of a direct upload: the received file becomes the provider's. */
export async function finishDirectUpload(
  db: Db,
  engine: Engine,
  provider: ProviderRow,
  uploadId: string,
  now: number,
): Promise<ProviderRow> {
  const upload = await db.get<UploadRow>('SELECT * FROM registry_uploads WHERE id = ? AND provider_id = ? AND direct = 1', [
    uploadId,
    provider.id,
  ]);
  if (!upload) throw notFound('No such direct upload for this provider: prepare it again (GET .../upload/direct)');
  if (!upload.blob_id) throw invalid('The box file has not been uploaded to upload_path yet: PUT it there, then call the callback');
  const blob: StoredBlob = {
    id: upload.blob_id,
    size: Number(upload.blob_size),
    digestType: upload.blob_digest_type!,
    digest: upload.blob_digest!,
  };
  if (provider.checksum_type && provider.checksum_type !== blob.digestType) {
    checkDigest(provider, provider.checksum_type, await blobStore(engine).digest(blob.id, provider.checksum_type));
  } else {
    checkDigest(provider, blob.digestType, blob.digest);
  }
  await db.run('DELETE FROM registry_uploads WHERE id = ?', [uploadId]);
  return attachBlob(db, provider, blob, now);
}

async function attachBlob(db: Db, provider: ProviderRow, blob: StoredBlob, now: number): Promise<ProviderRow> {
  if (provider.blob_id) await discardBlob(db, provider.blob_id, now);
  await db.run(
    `UPDATE registry_providers SET original_url = NULL, blob_id = ?, blob_size = ?, blob_digest_type = ?, blob_digest = ?,
       updated_at = ? WHERE id = ?`,
    [blob.id, blob.size, blob.digestType, blob.digest, now, provider.id],
  );
  const box = await db.get<{ box_id: string }>('SELECT box_id FROM registry_versions WHERE id = ?', [provider.version_id]);
  if (box) await touchBox(db, box.box_id, now);
  return {
    ...provider,
    original_url: null,
    blob_id: blob.id,
    blob_size: blob.size,
    blob_digest_type: blob.digestType,
    blob_digest: blob.digest,
    updated_at: now,
  };
}

function checkDigest(provider: ProviderRow, type: string, digest: string): void {
  if (provider.checksum && provider.checksum_type === type && provider.checksum !== digest) {
    throw invalid(`checksum mismatch: the uploaded file's ${type} is ${digest}, but the provider declares ${provider.checksum}`);
  }
}

async function findUpload(
  db: Db,
  id: string,
  token: string,
  now: number,
  options: { ignoreExpiry?: boolean } = {},
): Promise<{ upload: UploadRow; provider: ProviderRow }> {
  const upload = await db.get<UploadRow>('SELECT * FROM registry_uploads WHERE id = ?', [id]);
  if (!upload || !timingSafeEqualHex(upload.token_hash, sha256Hex(token))) {
    throw notFound('Unknown or already used upload URL: prepare the upload again (GET .../upload)');
  }
  if (!options.ignoreExpiry && upload.expires_at <= now) {
    throw notFound('This upload URL has expired: prepare the upload again (GET .../upload) and start the PUT at once');
  }
  const provider = await db.get<ProviderRow>('SELECT * FROM registry_providers WHERE id = ?', [upload.provider_id]);
  if (!provider) throw notFound('The provider of this upload no longer exists');
  return { upload, provider };
}

/** Removes expired uploads and the files nobody references any more; run by the registry's background job. */
export async function collectGarbage(engine: Engine): Promise<void> {
  const now = engine.clock.now();
  await engine.storage.tx(async (db) => {
    // A direct upload keeps its received file an hour past expiry, for a callback that comes late.
    const grace = now - 60 * 60 * 1000;
    await db.run(
      `INSERT INTO registry_blob_garbage (blob_id, created_at)
       SELECT blob_id, CAST(? AS BIGINT) FROM registry_uploads WHERE blob_id IS NOT NULL AND expires_at < ? ON CONFLICT (blob_id) DO NOTHING`,
      [now, grace],
    );
    await db.run('DELETE FROM registry_uploads WHERE (blob_id IS NULL AND expires_at < ?) OR expires_at < ?', [now, grace]);
  });
  // None while a backup holds them (backup_holds): its snapshot may name a file that became garbage
  // after it. One statement, so that PostgreSQL reads the holds and the garbage in one snapshot; the
  // holds are leases between processes, in wall-clock time.
  const garbage = await engine.storage.tx(
    (db) =>
      db.all<{ blob_id: string }>(
        'SELECT blob_id FROM registry_blob_garbage WHERE NOT EXISTS (SELECT 1 FROM backup_holds WHERE expires_at > ?) LIMIT 1000',
        [Date.now()],
      ),
    { readOnly: true },
  );
  if (garbage.length === 0 || !engine.dataDir) return;
  const store = blobStore(engine);
  for (const { blob_id } of garbage) {
    await store.remove(blob_id);
    await engine.storage.tx((db) => db.run('DELETE FROM registry_blob_garbage WHERE blob_id = ?', [blob_id]));
  }
}

/**
 * Removes the partial files of uploads that died mid-way: at server start and every minute, those
 * not written for longer than an upload URL's lifetime (HANGAR_REGISTRY_UPLOAD_TTL, 10 minutes).
 * They are never served: a blob becomes visible only when renamed out of `tmp/` complete.
 */
export async function sweepPartialUploads(engine: Engine): Promise<number> {
  if (!engine.dataDir) return 0;
  return blobStore(engine).sweepPartials(engine.clock.now() - registryConfig(engine).uploadUrlTtlMs);
}
