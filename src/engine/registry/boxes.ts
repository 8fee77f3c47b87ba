import { randomUUID } from 'node:crypto';
import { invalid, notFound } from '../http/errors';
import { renderMarkdown } from '../markdown';
import { Db, UniqueViolation } from '../storage';
import { canRead, RegistryActor } from './access';
import { findOwner, Owner } from './owners';

export interface BoxRow {
  readonly id: string;
  readonly owner_id: string;
  readonly name: string;
  readonly short_description: string;
  readonly description_markdown: string;
  readonly is_private: number;
  readonly downloads: number;
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
  return next;
}

export async function deleteBox(db: Db, box: BoxRow): Promise<void> {
  await db.run('DELETE FROM registry_boxes WHERE id = ?', [box.id]);
}

async function uniqueName(name: string, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (err) {
    if (err instanceof UniqueViolation) throw invalid(`box.name: "${name}" has already been taken`);
    throw err;
  }
}

/** The Box resource of the spec. Versions arrive with the versions table; until then there are none. */
export function serializeBox(owner: Owner, box: BoxRow, options: { withVersions: boolean }) {
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
    current_version: null,
    ...(options.withVersions ? { versions: [] as unknown[] } : {}),
  };
}
