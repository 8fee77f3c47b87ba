import { Db, SqlValue } from '../storage';
import { RegistryActor } from './access';
import { BoxRow, searchTerms } from './boxes';
import { Owner } from './owners';

export interface SearchQuery {
  readonly q?: string;
  readonly provider?: string;
  readonly architecture?: string;
  readonly sort: 'downloads' | 'created' | 'updated';
  readonly order: 'asc' | 'desc';
  readonly limit: number;
  readonly page: number;
}

const SORT_COLUMN = { downloads: 'b.downloads', created: 'b.created_at', updated: 'b.updated_at' } as const;

/** Above every character: `term < prefix + TOP` bounds a prefix range (binary collation on both backends). */
const TOP = '\u{10FFFF}';

/**
 * A word with at least this many matching terms is common: walking the boxes in sort order finds a
 * page of them sooner than collecting and sorting all of its boxes (q=nginx over 100,000 boxes:
 * 20,000 boxes to sort, or about 50 to probe). Below it, collecting costs at most a few milliseconds.
 */
const COMMON = 5000;
/** How many boxes, in sort order, are probed for a page of common words: 40 per row up to the page's end, within bounds. */
const WINDOW = { min: 500, perRow: 40, max: 20_000 };

/** The words with their number of matching terms (counted up to COMMON), rarest first. */
async function byRarity(db: Db, words: readonly string[]): Promise<{ word: string; matches: number }[]> {
  const counted = [];
  for (const word of words) {
    const row = await db.get<{ n: number | string }>(
      'SELECT COUNT(*) AS n FROM (SELECT 1 FROM registry_box_terms WHERE term >= ? AND term < ? LIMIT ?) m',
      [word, word + TOP, COMMON],
    );
    counted.push({ word, matches: Number(row?.n ?? 0) });
  }
  return counted.sort((a, b) => a.matches - b.matches);
}

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
  // Provider and architecture together: one provider row with both.
  const providerWhere: string[] = [];
  if (query.provider) {
    providerWhere.push('p.name_lower = ?');
    params.push(query.provider.toLowerCase());
  }
  if (query.architecture) {
    providerWhere.push('p.architecture = ?');
    params.push(query.architecture);
  }
  if (providerWhere.length) {
    where.push(`EXISTS (SELECT 1 FROM registry_providers p WHERE p.version_id = b.current_version_id AND ${providerWhere.join(' AND ')})`);
  }
  const words = await byRarity(db, [...new Set(searchTerms(query.q ?? ''))].slice(0, 8));
  const direction = query.order === 'asc' ? 'ASC' : 'DESC';
  const order = `${SORT_COLUMN[query.sort]} ${direction}, b.id ${direction}`;
  const offset = (query.page - 1) * query.limit;
  /**
   * One page from `from`. `collect`: each word's boxes are collected (IN), all of them when every word
   * is common (SQLite intersects the lists), else the rarest one's, and its boxes are probed for the
   * others (EXISTS); otherwise every word is probed, box by box in sort order.
   */
  const page = (from: string, fromParams: SqlValue[], collect: boolean) => {
    const wordWhere: string[] = [];
    const wordParams: SqlValue[] = [];
    words.forEach(({ word }, i) => {
      wordWhere.push(
        collect && (i === 0 || words[0].matches >= COMMON)
          ? 'b.id IN (SELECT t.box_id FROM registry_box_terms t WHERE t.term >= ? AND t.term < ?)'
          : 'EXISTS (SELECT 1 FROM registry_box_terms t WHERE t.box_id = b.id AND t.term >= ? AND t.term < ?)',
      );
      wordParams.push(word, word + TOP);
    });
    return db.all<BoxRow>(
      `SELECT b.* FROM ${from} WHERE ${[...where, ...wordWhere].join(' AND ')} ORDER BY ${order} LIMIT ? OFFSET ?`,
      [...fromParams, ...params, ...wordParams, query.limit, offset],
    );
  };
  let rows: BoxRow[] | undefined;
  if (words.length > 0 && words[0].matches >= COMMON) {
    // Every word is common: the page is likely among the first boxes in sort order. Probe a window
    // of them (the sort index, a box's words by the (box_id, term) index); a full page there is the
    // answer, since the window is a prefix of the order. Otherwise collect and sort, as for rare words.
    const window = Math.min(WINDOW.max, Math.max(WINDOW.min, WINDOW.perRow * (offset + query.limit)));
    rows = await page(`(SELECT * FROM registry_boxes b ORDER BY ${order} LIMIT ?) b`, [window], false);
    if (rows.length < query.limit) rows = undefined;
  }
  rows ??= await page('registry_boxes b', [], words.length > 0);
  const ownerIds = [...new Set(rows.map((r) => r.owner_id))];
  const ownerRows = ownerIds.length
    ? await db.all<Owner>(`SELECT * FROM registry_owners WHERE id IN (${ownerIds.map(() => '?').join(', ')})`, ownerIds)
    : [];
  return rows.map((box) => ({ owner: ownerRows.find((o) => o.id === box.owner_id)!, box }));
}
