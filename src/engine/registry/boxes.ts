import { randomUUID } from 'node:crypto';
import { invalid, notFound } from '../http/errors';
import { renderMarkdown } from '../markdown';
import { allIn, Db, UniqueViolation } from '../storage';
import { canRead, RegistryActor } from './access';
import { findOwner, Owner } from './owners';
import { ProviderRow, providersOf, RegistryApi } from './providers';
import { boxTerms, reindexBox } from './search-index';
import { serializeVersion, serializeVersions, VersionRow, versionsOf } from './versions';

export { searchTerms } from './search-index';

export interface BoxRow {
  readonly id: string;
  readonly owner_id: string;
  readonly name: string;
  readonly short_description: string;
  readonly description_markdown: string;
  readonly is_private: number;
  readonly downloads: number;
  /** The newest released version, kept in step by versions.ts. */
  readonly current_version_id: string | null;
  readonly created_at: number;
  readonly updated_at: number;
}

export interface BoxFields {
  readonly name: string;
  readonly shortDescription: string;
  readonly description: string;
  readonly isPrivate: boolean;
}

/** The box and its owner when the actor may see it; 404 otherwise (also for a private box). */
export async function findVisibleBox(
  db: Db,
  actor: RegistryActor | undefined,
  username: string,
  name: string,
): Promise<{ owner: Owner; box: BoxRow }> {
  const owner = await findOwner(db, username);
  const box = owner && (await findBox(db, owner.id, name));
  if (!owner || !box || !(await canRead(db, actor, owner, box.is_private === 1))) throw notFound();
  return { owner, box };
}

export async function findBox(db: Db, ownerId: string, name: string): Promise<BoxRow | undefined> {
  return db.get<BoxRow>('SELECT * FROM registry_boxes WHERE owner_id = ? AND name_lower = ?', [ownerId, name.toLowerCase()]);
}

export async function insertBox(db: Db, owner: Owner, fields: BoxFields, now: number): Promise<BoxRow> {
  const row: BoxRow = {
    id: randomUUID(),
    owner_id: owner.id,
    name: fields.name,
    short_description: fields.shortDescription,
    description_markdown: fields.description,
    is_private: fields.isPrivate ? 1 : 0,
    downloads: 0,
    current_version_id: null,
    created_at: now,
    updated_at: now,
  };
  await uniqueName(fields.name, () =>
    db.run(
      `INSERT INTO registry_boxes (id, owner_id, name, name_lower, short_description, description_markdown, is_private,
         downloads, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [row.id, row.owner_id, row.name, row.name.toLowerCase(), row.short_description, row.description_markdown,
        row.is_private, row.downloads, now, now],
    ),
  );
  await indexTerms(db, owner, row);
  return row;
}

export async function updateBox(db: Db, box: BoxRow, fields: Partial<BoxFields>, now: number): Promise<BoxRow> {
  const next: BoxRow = {
    ...box,
    name: fields.name ?? box.name,
    short_description: fields.shortDescription ?? box.short_description,
    description_markdown: fields.description ?? box.description_markdown,
    is_private: fields.isPrivate === undefined ? box.is_private : fields.isPrivate ? 1 : 0,
    updated_at: now,
  };
  await uniqueName(next.name, () =>
    db.run(
      `UPDATE registry_boxes SET name = ?, name_lower = ?, short_description = ?, description_markdown = ?,
         is_private = ?, updated_at = ? WHERE id = ?`,
      [next.name, next.name.toLowerCase(), next.short_description, next.description_markdown, next.is_private, now, box.id],
    ),
  );
  if (next.name !== box.name || next.short_description !== box.short_description) {
    const owner = await db.get<Owner>('SELECT * FROM registry_owners WHERE id = ?', [box.owner_id]);
    await db.run('DELETE FROM registry_box_terms WHERE box_id = ?', [box.id]);
    await indexTerms(db, owner!, next);
  }
  await reindexBox(db, box.id);
  return next;
}

export async function deleteBox(db: Db, box: BoxRow, now: number): Promise<void> {
  await db.run(
    `INSERT INTO registry_blob_garbage (blob_id, created_at)
     SELECT p.blob_id, CAST(? AS BIGINT) FROM registry_providers p JOIN registry_versions v ON v.id = p.version_id
       WHERE v.box_id = ? AND p.blob_id IS NOT NULL
     UNION SELECT u.blob_id, CAST(? AS BIGINT) FROM registry_uploads u JOIN registry_providers p ON p.id = u.provider_id
       JOIN registry_versions v ON v.id = p.version_id WHERE v.box_id = ? AND u.blob_id IS NOT NULL`,
    [now, box.id, now, box.id],
  );
  // Its terms and its search document go with it (ON DELETE CASCADE).
  await db.run('DELETE FROM registry_boxes WHERE id = ?', [box.id]);
}

/** The term table of a box, which the window of common words probes (search.ts). */
async function indexTerms(db: Db, owner: Owner, box: BoxRow): Promise<void> {
  for (const term of boxTerms(owner.username, box.name, box.short_description)) {
    await db.run('INSERT INTO registry_box_terms (term, box_id) VALUES (?, ?)', [term, box.id]);
  }
}

async function uniqueName(name: string, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (err) {
    if (err instanceof UniqueViolation) throw invalid(`box.name: "${name}" has already been taken`);
    throw err;
  }
}

/** Fields of the Box resource shared by reads, lists and search results. */
function boxFields(owner: Owner, box: BoxRow) {
  return {
    created_at: new Date(box.created_at).toISOString(),
    updated_at: new Date(box.updated_at).toISOString(),
    tag: `${owner.username}/${box.name}`,
    name: box.name,
    short_description: box.short_description,
    description_html: renderMarkdown(box.description_markdown),
    description_markdown: box.description_markdown,
    username: owner.username,
    private: box.is_private === 1,
    downloads: box.downloads,
  };
}

/**
 * The Box resource of the spec: `current_version` (newest released) and, for a single box,
 * `versions` (newest first; unreleased and revoked ones only for those who may write the box).
 */
export async function serializeBox(
  db: Db,
  baseUrl: string,
  owner: Owner,
  box: BoxRow,
  options: { withVersions: boolean; writable?: boolean; api: RegistryApi },
) {
  const base = boxFields(owner, box);
  if (!options.withVersions) {
    return { ...base, current_version: (await serializeCurrentVersions(db, baseUrl, [{ owner, box }], options.api))[0] };
  }
  const versions = await versionsOf(db, box.id, options.writable === true);
  const serialized = await serializeVersions(db, baseUrl, owner, box, versions, options.api);
  const current = box.current_version_id ? versions.findIndex((v) => v.id === box.current_version_id) : -1;
  return { ...base, current_version: current >= 0 ? serialized[current] : null, versions: serialized };
}

/** Boxes for lists and search results: `current_version` without `versions`, in three queries. */
export async function serializeBoxList(db: Db, baseUrl: string, boxes: readonly { owner: Owner; box: BoxRow }[], api: RegistryApi) {
  const current = await serializeCurrentVersions(db, baseUrl, boxes, api);
  return boxes.map(({ owner, box }, i) => ({ ...boxFields(owner, box), current_version: current[i] }));
}

async function serializeCurrentVersions(db: Db, baseUrl: string, boxes: readonly { owner: Owner; box: BoxRow }[], api: RegistryApi) {
  const ids = boxes.map((b) => b.box.current_version_id).filter((id): id is string => id !== null);
  const versions = await allIn(ids, (placeholders, slice) => db.all<VersionRow>(`SELECT * FROM registry_versions WHERE id IN (${placeholders})`, slice));
  const providers = await providersOf(db, ids);
  // By id, not by searching the lists per box: a search page holds up to 100 boxes.
  const versionById = new Map(versions.map((v) => [v.id, v]));
  const providersByVersion = new Map<string, ProviderRow[]>();
  for (const p of providers) providersByVersion.set(p.version_id, [...(providersByVersion.get(p.version_id) ?? []), p]);
  return boxes.map(({ owner, box }) => {
    const v = box.current_version_id ? versionById.get(box.current_version_id) : undefined;
    return v ? serializeVersion(baseUrl, owner, box, v, providersByVersion.get(v.id) ?? [], api) : null;
  });
}
