import { Db, SqlValue } from '../storage';
import { RegistryActor } from './access';
import { BoxRow, searchTerms } from './boxes';
import { Owner } from './owners';

export interface SearchQuery {
  readonly q?: string;
  readonly provider?: string;
  readonly sort: 'downloads' | 'created' | 'updated';
  readonly order: 'asc' | 'desc';
  readonly limit: number;
  readonly page: number;
}

const SORT_COLUMN = { downloads: 'b.downloads', created: 'b.created_at', updated: 'b.updated_at' } as const;

/** Above every character: `term < prefix + TOP` bounds a prefix range (binary collation on both backends). */
const TOP = '\u{10FFFF}';

/** The owners whose private boxes the actor sees: itself and its organizations (undefined: all, for the admin). */
async function visibleOwnerIds(db: Db, actor: RegistryActor | undefined): Promise<string[] | undefined> {
  if (!actor) return [];
  if (actor.kind === 'admin') return undefined;
  const orgs = await db.all<{ org_id: string }>('SELECT org_id FROM registry_memberships WHERE user_id = ?', [actor.user.id]);
  return [actor.user.id, ...orgs.map((o) => o.org_id)];
}

/**
 * Boxes with a released version that the actor may see, matching every word of `q` by prefix
 * against the words of the owner's name, the box name and the short description (an index on
 * terms, not a scan), optionally only those whose current version has `provider`.
 */
export async function searchBoxes(db: Db, actor: RegistryActor | undefined, query: SearchQuery): Promise<{ owner: Owner; box: BoxRow }[]> {
  const where = ['b.current_version_id IS NOT NULL'];
  const params: SqlValue[] = [];
  const owners = await visibleOwnerIds(db, actor);
  if (owners) {
    where.push(owners.length ? `(b.is_private = 0 OR b.owner_id IN (${owners.map(() => '?').join(', ')}))` : 'b.is_private = 0');
    params.push(...owners);
  }
  for (const word of [...new Set(searchTerms(query.q ?? ''))].slice(0, 8)) {
    where.push('b.id IN (SELECT t.box_id FROM registry_box_terms t WHERE t.term >= ? AND t.term < ?)');
    params.push(word, word + TOP);
  }
  if (query.provider) {
    where.push('EXISTS (SELECT 1 FROM registry_providers p WHERE p.version_id = b.current_version_id AND p.name_lower = ?)');
    params.push(query.provider.toLowerCase());
  }
  const direction = query.order === 'asc' ? 'ASC' : 'DESC';
  const rows = await db.all<BoxRow>(
    `SELECT b.* FROM registry_boxes b
     WHERE ${where.join(' AND ')}
     ORDER BY ${SORT_COLUMN[query.sort]} ${direction}, b.id ${direction}
     LIMIT ? OFFSET ?`,
    [...params, query.limit, (query.page - 1) * query.limit],
  );
  const ownerIds = [...new Set(rows.map((r) => r.owner_id))];
  const ownerRows = ownerIds.length
    ? await db.all<Owner>(`SELECT * FROM registry_owners WHERE id IN (${ownerIds.map(() => '?').join(', ')})`, ownerIds)
    : [];
  return rows.map((box) => ({ owner: ownerRows.find((o) => o.id === box.owner_id)!, box }));
}
