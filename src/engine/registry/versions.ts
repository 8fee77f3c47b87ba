import { randomUUID } from 'node:crypto';
import { invalid, notFound } from '../http/errors';
import { renderMarkdown } from '../markdown';
import { Db, UniqueViolation } from '../storage';
import { canWrite, RegistryActor } from './access';
import { BoxRow, findVisibleBox } from './boxes';
import { Owner } from './owners';
import { isReady, ProviderRow, providersOf, RegistryApi, serializeProvider, visibleProviders } from './providers';
import { reindexBox } from './search-index';

/** Version states: `unreleased` on creation, `active` once released, `revoked` after a revoke. */
export type VersionStatus = 'unreleased' | 'active' | 'revoked';

export interface VersionRow {
  readonly id: string;
  readonly box_id: string;
  readonly version: string;
  readonly sort_key: string;
  readonly description_markdown: string;
  readonly status: VersionStatus;
  readonly created_at: number;
  readonly updated_at: number;
}

/** "1.10" -> "000000001.000000010.000000000": orders numerically, and "1.0" and "1.0.0" are one version. */
export function versionSortKey(version: string): string {
  const parts = version.split('.').map((p) => Number(p));
  while (parts.length < 3) parts.push(0);
  return parts.map((p) => String(p).padStart(9, '0')).join('.');
}

/** Where a version lives, for URLs and access checks. */
export interface VersionPlace {
  readonly owner: Owner;
  readonly box: BoxRow;
  /** May the caller change this box (and see its unreleased and revoked versions)? */
  readonly writable: boolean;
}

/** The box, if the caller sees it, and whether the caller may write it. */
export async function findBoxPlace(db: Db, actor: RegistryActor | undefined, username: string, name: string): Promise<VersionPlace> {
  const { owner, box } = await findVisibleBox(db, actor, username, name);
  return { owner, box, writable: await canWrite(db, actor, owner) };
}

/** A version the caller may see: writers see every version, others only released ones. */
export async function findVisibleVersion(
  db: Db,
  actor: RegistryActor | undefined,
  username: string,
  name: string,
  version: string,
): Promise<VersionPlace & { version: VersionRow }> {
  const place = await findBoxPlace(db, actor, username, name);
  const row = await findVersion(db, place.box.id, version);
  if (!row || !(place.writable || row.status === 'active')) throw notFound(`Version ${version} of ${username}/${name} not found`);
  return { ...place, version: row };
}

export async function findVersion(db: Db, boxId: string, version: string): Promise<VersionRow | undefined> {
  return db.get<VersionRow>('SELECT * FROM registry_versions WHERE box_id = ? AND sort_key = ?', [boxId, versionSortKey(version)]);
}

/** The box's versions, newest first; only released ones unless `all`. */
export async function versionsOf(db: Db, boxId: string, all: boolean): Promise<VersionRow[]> {
  return db.all<VersionRow>(
    `SELECT * FROM registry_versions WHERE box_id = ?${all ? '' : " AND status = 'active'"} ORDER BY sort_key DESC`,
    [boxId],
  );
}

export async function insertVersion(db: Db, box: BoxRow, version: string, description: string, now: number): Promise<VersionRow> {
  const row: VersionRow = {
    id: randomUUID(),
    box_id: box.id,
    version,
    sort_key: versionSortKey(version),
    description_markdown: description,
    status: 'unreleased',
    created_at: now,
    updated_at: now,
  };
  await uniqueVersion(version, () =>
    db.run(
      `INSERT INTO registry_versions (id, box_id, version, sort_key, description_markdown, status, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [row.id, row.box_id, row.version, row.sort_key, row.description_markdown, row.status, now, now],
    ),
  );
  await touchBox(db, box.id, now);
  return row;
}

/**
 * Changes the description, and the number while the version is unreleased (a released number is
 * what users pin; the public registry does not renumber it either).
 */
export async function updateVersion(
  db: Db,
  row: VersionRow,
  fields: { version?: string; description?: string },
  now: number,
): Promise<VersionRow> {
  const renumber = fields.version !== undefined && versionSortKey(fields.version) !== row.sort_key;
  if (renumber && row.status !== 'unreleased') {
    throw invalid(`version.version: version ${row.version} is ${row.status}; only an unreleased version can be renumbered`);
  }
  const next: VersionRow = {
    ...row,
    version: renumber ? fields.version! : row.version,
    sort_key: renumber ? versionSortKey(fields.version!) : row.sort_key,
    description_markdown: fields.description ?? row.description_markdown,
    updated_at: now,
  };
  await uniqueVersion(next.version, () =>
    db.run('UPDATE registry_versions SET version = ?, sort_key = ?, description_markdown = ?, updated_at = ? WHERE id = ?', [
      next.version,
      next.sort_key,
      next.description_markdown,
      now,
      row.id,
    ]),
  );
  await touchBox(db, row.box_id, now);
  return next;
}

/** unreleased or revoked -> active; needs a provider with a URL or a finished upload. */
export async function releaseVersion(db: Db, row: VersionRow, now: number): Promise<VersionRow> {
  if (row.status === 'active') throw invalid(`version ${row.version} is already released`);
  const providers = await providersOf(db, [row.id]);
  if (!providers.some(isReady)) {
    throw invalid(
      `version ${row.version} has no valid provider: add a provider with a url, or upload the box file of one, before releasing`,
    );
  }
  return setStatus(db, row, 'active', now);
}

/** active -> revoked. */
export async function revokeVersion(db: Db, row: VersionRow, now: number): Promise<VersionRow> {
  if (row.status !== 'active') throw invalid(`version ${row.version} is ${row.status}; only a released version can be revoked`);
  return setStatus(db, row, 'revoked', now);
}

async function setStatus(db: Db, row: VersionRow, status: VersionStatus, now: number): Promise<VersionRow> {
  await db.run('UPDATE registry_versions SET status = ?, updated_at = ? WHERE id = ?', [status, now, row.id]);
  await refreshCurrentVersion(db, row.box_id, now);
  return { ...row, status, updated_at: now };
}

export async function deleteVersion(db: Db, row: VersionRow, now: number): Promise<void> {
  await db.run(
    `INSERT INTO registry_blob_garbage (blob_id, created_at)
     SELECT blob_id, CAST(? AS BIGINT) FROM registry_providers WHERE version_id = ? AND blob_id IS NOT NULL
     UNION SELECT u.blob_id, CAST(? AS BIGINT) FROM registry_uploads u JOIN registry_providers p ON p.id = u.provider_id
       WHERE p.version_id = ? AND u.blob_id IS NOT NULL`,
    [now, row.id, now, row.id],
  );
  await db.run('DELETE FROM registry_versions WHERE id = ?', [row.id]);
  await refreshCurrentVersion(db, row.box_id, now);
}

/** Keeps `registry_boxes.current_version_id` (the newest released version) in step, and bumps updated_at. */
export async function refreshCurrentVersion(db: Db, boxId: string, now: number): Promise<void> {
  const current = await db.get<{ id: string }>(
    "SELECT id FROM registry_versions WHERE box_id = ? AND status = 'active' ORDER BY sort_key DESC LIMIT 1",
    [boxId],
  );
  await db.run('UPDATE registry_boxes SET current_version_id = ?, updated_at = ? WHERE id = ?', [current?.id ?? null, now, boxId]);
  await reindexBox(db, boxId);
}

/** After a change to a box's versions or providers: its updated_at, and its search document (providers are in it). */
export async function touchBox(db: Db, boxId: string, now: number): Promise<void> {
  await db.run('UPDATE registry_boxes SET updated_at = ? WHERE id = ?', [now, boxId]);
  await reindexBox(db, boxId);
}

async function uniqueVersion(version: string, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (err) {
    if (err instanceof UniqueViolation) throw invalid(`version.version: version ${version} already exists`);
    throw err;
  }
}

/** The Version resource of the spec, with its providers. */
export function serializeVersion(
  baseUrl: string,
  owner: Owner,
  box: BoxRow,
  row: VersionRow,
  providers: readonly ProviderRow[],
  api: RegistryApi,
) {
  const path = `${baseUrl}/api/${api}/box/${owner.username}/${box.name}/version/${row.version}`;
  return {
    version: row.version,
    number: row.version,
    status: row.status,
    description_html: renderMarkdown(row.description_markdown),
    description_markdown: row.description_markdown,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
    release_url: `${path}/release`,
    revoke_url: `${path}/revoke`,
    providers: visibleProviders(providers, api).map((p) => serializeProvider(baseUrl, owner, box, row, p, api)),
  };
}

/** Versions with their providers, in two queries. */
export async function serializeVersions(db: Db, baseUrl: string, owner: Owner, box: BoxRow, rows: readonly VersionRow[], api: RegistryApi) {
  const providers = await providersOf(db, rows.map((r) => r.id));
  return rows.map((r) => serializeVersion(baseUrl, owner, box, r, providers.filter((p) => p.version_id === r.id), api));
}
