import { randomUUID } from 'node:crypto';
import { ChecksumType } from '../blobs/blob-store';
import { HangarError, invalid } from '../http/errors';
import { allIn, Db, UniqueViolation } from '../storage';
import type { BoxRow } from './boxes';
import type { Owner } from './owners';
import { touchBox, VersionRow } from './versions';

export interface ProviderRow {
  readonly id: string;
  readonly version_id: string;
  readonly name: string;
  readonly name_lower: string;
  /** One of names.ts ARCHITECTURES; `unknown` for providers published without one. */
  readonly architecture: string;
  /** 1 for exactly one row per provider name of a version: what API v1 and Vagrant before 2.4 see. */
  readonly default_architecture: number;
  readonly original_url: string | null;
  readonly checksum: string | null;
  readonly checksum_type: ChecksumType | null;
  /** The uploaded box file in the blob store, when hosted. */
  readonly blob_id: string | null;
  readonly blob_size: number | null;
  readonly blob_digest_type: ChecksumType | null;
  readonly blob_digest: string | null;
  readonly downloads: number;
  readonly created_at: number;
  readonly updated_at: number;
}

/** What a create or update asks for; undefined keeps a value, an empty string clears it. */
export interface ProviderFields {
  readonly name?: string;
  readonly url?: string;
  readonly checksum?: string;
  readonly checksumType?: ChecksumType;
  readonly architecture?: string;
  /** true makes this row its name's default; false is refused for the default while other architectures exist. */
  readonly defaultArchitecture?: boolean;
}

/** The two API versions: v1 sees one provider per name (its default architecture), v2 every architecture. */
export type RegistryApi = 'v1' | 'v2';

const HEX_LENGTH: Record<ChecksumType, number> = { md5: 32, sha1: 40, sha256: 64, sha384: 96, sha512: 128 };

/** A provider can be released once it has a URL or a finished upload. */
export function isReady(p: ProviderRow): boolean {
  return p.original_url !== null || p.blob_id !== null;
}

export async function providersOf(db: Db, versionIds: readonly string[]): Promise<ProviderRow[]> {
  // In slices (a box may have more versions than one statement takes variables); each version's
  // providers come in one slice, in order.
  return allIn(versionIds, (placeholders, slice) =>
    db.all<ProviderRow>(
      // The default architecture last within its name: Vagrant before 2.4 keeps the last entry of a name.
      `SELECT * FROM registry_providers WHERE version_id IN (${placeholders})
       ORDER BY name_lower, default_architecture, architecture`,
      slice,
    ),
  );
}

/** A provider by name and architecture; without an architecture (API v1), the name's default one. */
export async function findProvider(db: Db, versionId: string, name: string, architecture?: string): Promise<ProviderRow | undefined> {
  return architecture === undefined
    ? db.get<ProviderRow>('SELECT * FROM registry_providers WHERE version_id = ? AND name_lower = ? AND default_architecture = 1', [
      versionId,
      name.toLowerCase(),
    ])
    : db.get<ProviderRow>('SELECT * FROM registry_providers WHERE version_id = ? AND name_lower = ? AND architecture = ?', [
      versionId,
      name.toLowerCase(),
      architecture,
    ]);
}

/** Only v1's view: the default architecture of each name. */
export function visibleProviders(rows: readonly ProviderRow[], api: RegistryApi): readonly ProviderRow[] {
  return api === 'v1' ? rows.filter((p) => p.default_architecture === 1) : rows;
}

/**
 * Keeps one default architecture per provider name of a version: `id` (when given) becomes the
 * default; a name left without one (its first architecture, or after its default was deleted or
 * renamed away) gets its oldest architecture as default, as the public registry makes the first
 * provider of a name its default.
 */
async function settleDefault(db: Db, versionId: string, nameLower: string, id?: string): Promise<void> {
  try {
    if (id) {
      // Two statements: PostgreSQL checks the one-default index row by row, so a swap in one UPDATE could fail.
      await db.run('UPDATE registry_providers SET default_architecture = 0 WHERE version_id = ? AND name_lower = ? AND id <> ?', [
        versionId,
        nameLower,
        id,
      ]);
      await db.run('UPDATE registry_providers SET default_architecture = 1 WHERE id = ?', [id]);
      return;
    }
    await db.run(
      `UPDATE registry_providers SET default_architecture = 1 WHERE id = (
         SELECT id FROM registry_providers WHERE version_id = ? AND name_lower = ? ORDER BY created_at, id LIMIT 1
       ) AND NOT EXISTS (SELECT 1 FROM registry_providers WHERE version_id = ? AND name_lower = ? AND default_architecture = 1)`,
      [versionId, nameLower, versionId, nameLower],
    );
  } catch (err) {
    // The one-default index: two concurrent changes of one name's architectures.
    if (err instanceof UniqueViolation) {
      throw new HangarError(409, ['Another change to the architectures of this provider happened at the same time; retry']);
    }
    throw err;
  }
}

async function reread(db: Db, id: string): Promise<ProviderRow> {
  return (await db.get<ProviderRow>('SELECT * FROM registry_providers WHERE id = ?', [id]))!;
}

export async function insertProvider(db: Db, version: VersionRow, fields: ProviderFields & { name: string }, now: number): Promise<ProviderRow> {
  const checksum = checksumOf(undefined, fields);
  const row: ProviderRow = {
    id: randomUUID(),
    version_id: version.id,
    name: fields.name,
    name_lower: fields.name.toLowerCase(),
    architecture: fields.architecture ?? 'unknown',
    default_architecture: 0,
    original_url: fields.url || null,
    checksum: checksum.checksum,
    checksum_type: checksum.checksum_type,
    blob_id: null,
    blob_size: null,
    blob_digest_type: null,
    blob_digest: null,
    downloads: 0,
    created_at: now,
    updated_at: now,
  };
  await uniqueProvider(row, () =>
    db.run(
      `INSERT INTO registry_providers (id, version_id, name, name_lower, architecture, default_architecture, original_url, checksum,
         checksum_type, downloads, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, 0, ?, ?)`,
      [row.id, row.version_id, row.name, row.name_lower, row.architecture, row.original_url, row.checksum, row.checksum_type, now, now],
    ),
  );
  await settleDefault(db, version.id, row.name_lower, fields.defaultArchitecture ? row.id : undefined);
  await touchBox(db, version.box_id, now);
  return reread(db, row.id);
}

/**
 * Renames, changes the URL or the checksum. A URL makes the provider external: an uploaded file
 * is dropped. A new checksum of a hosted file must match the file (`verify` computes its digest).
 */
export async function updateProvider(
  db: Db,
  version: VersionRow,
  row: ProviderRow,
  fields: ProviderFields,
  now: number,
  verify: (blobId: string, type: ChecksumType) => Promise<string>,
): Promise<ProviderRow> {
  const checksum = checksumOf(row, fields);
  const url = fields.url === undefined ? row.original_url : fields.url || null;
  const dropBlob = url !== null && row.blob_id !== null;
  if (!dropBlob && row.blob_id && checksum.checksum && checksum.checksum_type) {
    const digest =
      row.blob_digest_type === checksum.checksum_type ? row.blob_digest : await verify(row.blob_id, checksum.checksum_type);
    if (digest !== checksum.checksum) {
      throw invalid(`provider.checksum: the uploaded file's ${checksum.checksum_type} is ${digest}, not ${checksum.checksum}`);
    }
  }
  const name = fields.name ?? row.name;
  const next: ProviderRow = {
    ...row,
    name,
    name_lower: name.toLowerCase(),
    architecture: fields.architecture ?? row.architecture,
    // A row moving to another name joins it as a non-default architecture (settleDefault decides).
    default_architecture: name.toLowerCase() === row.name_lower ? row.default_architecture : 0,
    original_url: url,
    ...checksum,
    ...(dropBlob ? { blob_id: null, blob_size: null, blob_digest_type: null, blob_digest: null } : {}),
    updated_at: now,
  };
  if (fields.defaultArchitecture === false && next.default_architecture === 1) {
    const others = await db.get<{ id: string }>('SELECT id FROM registry_providers WHERE version_id = ? AND name_lower = ? AND id <> ?', [
      version.id,
      next.name_lower,
      row.id,
    ]);
    if (others) {
      throw invalid(`provider.default_architecture: ${next.architecture} is the default architecture of ${next.name}; make another architecture the default instead`);
    }
  }
  if (dropBlob) await discardBlob(db, row.blob_id!, now);
  await uniqueProvider(next, () =>
    db.run(
      `UPDATE registry_providers SET name = ?, name_lower = ?, architecture = ?, default_architecture = ?, original_url = ?, checksum = ?,
         checksum_type = ?, blob_id = ?, blob_size = ?, blob_digest_type = ?, blob_digest = ?, updated_at = ? WHERE id = ?`,
      [next.name, next.name_lower, next.architecture, next.default_architecture, next.original_url, next.checksum, next.checksum_type,
        next.blob_id, next.blob_size, next.blob_digest_type, next.blob_digest, now, row.id],
    ),
  );
  if (next.name_lower !== row.name_lower) await settleDefault(db, version.id, row.name_lower);
  await settleDefault(db, version.id, next.name_lower, fields.defaultArchitecture ? row.id : undefined);
  await touchBox(db, version.box_id, now);
  return reread(db, row.id);
}

/**
 * Deletes a provider; a released version keeps at least one valid provider. Deleting a name's
 * default architecture makes its oldest remaining architecture the default.
 */
export async function deleteProvider(db: Db, version: VersionRow, row: ProviderRow, now: number): Promise<void> {
  if (version.status === 'active' && isReady(row)) {
    const others = (await providersOf(db, [version.id])).filter((p) => p.id !== row.id && isReady(p));
    if (others.length === 0) {
      throw invalid(`provider ${row.name} is the only valid provider of released version ${version.version}; revoke the version first`);
    }
  }
  await db.run(
    `INSERT INTO registry_blob_garbage (blob_id, created_at)
     SELECT blob_id, CAST(? AS BIGINT) FROM registry_providers WHERE id = ? AND blob_id IS NOT NULL
     UNION SELECT blob_id, CAST(? AS BIGINT) FROM registry_uploads WHERE provider_id = ? AND blob_id IS NOT NULL`,
    [now, row.id, now, row.id],
  );
  await db.run('DELETE FROM registry_providers WHERE id = ?', [row.id]);
  await settleDefault(db, version.id, row.name_lower);
  await touchBox(db, version.box_id, now);
}

/** Marks a blob for removal once no transaction can need it (the garbage job deletes the file). */
export async function discardBlob(db: Db, blobId: string, now: number): Promise<void> {
  await db.run('INSERT INTO registry_blob_garbage (blob_id, created_at) VALUES (?, ?) ON CONFLICT (blob_id) DO NOTHING', [blobId, now]);
}

/**
 * The checksum after a change: both fields or neither, the digest as hex of the type's length,
 * stored lower case. An empty string clears both.
 */
function checksumOf(
  row: ProviderRow | undefined,
  fields: ProviderFields,
): { checksum: string | null; checksum_type: ChecksumType | null } {
  if (fields.checksum === '') return { checksum: null, checksum_type: null };
  const checksum = fields.checksum ? fields.checksum.toLowerCase() : (row?.checksum ?? null);
  const type = fields.checksumType ?? row?.checksum_type ?? null;
  if (checksum && !type) throw invalid('provider.checksum_type is required with provider.checksum (md5, sha1, sha256, sha384 or sha512)');
  if (!checksum && fields.checksumType) throw invalid('provider.checksum is required with provider.checksum_type');
  if (checksum && type && !new RegExp(`^[0-9a-f]{${HEX_LENGTH[type]}}$`).test(checksum)) {
    throw invalid(`provider.checksum: must be ${HEX_LENGTH[type]} hexadecimal digits for ${type}`);
  }
  return { checksum, checksum_type: checksum ? type : null };
}

async function uniqueProvider(p: ProviderRow, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (err) {
    if (err instanceof UniqueViolation) {
      throw invalid(`provider.architecture: provider ${p.name} with architecture ${p.architecture} already exists for this version`);
    }
    throw err;
  }
}

/**
 * The download URL of a provider: v1's `.../providers/NAME.box` (the name's default architecture)
 * or, as the public registry's v2 and box metadata list them, `.../providers/NAME/ARCH/vagrant.box`.
 */
export function downloadUrl(baseUrl: string, owner: Owner, box: BoxRow, version: VersionRow, p: ProviderRow, api: RegistryApi): string {
  const base = `${baseUrl}/${owner.username}/boxes/${box.name}/versions/${version.version}/providers/${p.name}`;
  return api === 'v1' ? `${base}.box` : `${base}/${p.architecture}/vagrant.box`;
}

/** The Provider resource of the spec; v2 adds `architecture` and `default_architecture`. */
export function serializeProvider(baseUrl: string, owner: Owner, box: BoxRow, version: VersionRow, p: ProviderRow, api: RegistryApi) {
  const hosted = p.blob_id !== null;
  const v1 = {
    name: p.name,
    hosted,
    hosted_token: hosted ? p.blob_id : null,
    original_url: p.original_url,
    created_at: new Date(p.created_at).toISOString(),
    updated_at: new Date(p.updated_at).toISOString(),
    download_url: downloadUrl(baseUrl, owner, box, version, p, api),
    checksum: p.checksum,
    checksum_type: p.checksum_type,
  };
  return api === 'v1' ? v1 : { ...v1, architecture: p.architecture, default_architecture: p.default_architecture === 1 };
}
