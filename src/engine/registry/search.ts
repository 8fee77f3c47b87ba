import { allIn, Db, SqlValue } from '../storage';
import { RegistryActor } from './access';
import { BoxRow } from './boxes';
import { Owner } from './owners';
import { matchingBoxIds, searchTerms } from './search-index';

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

/**
 * Which boxes the actor sees: public ones, and the private boxes of itself and its organizations
 * (a subquery, not a list of ids: one SQL variable however many organizations); undefined: all, for the admin.
 */
function visibility(actor: RegistryActor | undefined): { sql: string; params: SqlValue[] } | undefined {
  if (!actor) return { sql: 'b.is_private = 0', params: [] };
  if (actor.kind === 'admin') return undefined;
  return {
    sql: '(b.is_private = 0 OR b.owner_id = ? OR b.owner_id IN (SELECT m.org_id FROM registry_memberships m WHERE m.user_id = ?))',
    params: [actor.user.id, actor.user.id],
  };
}

/**
 * A query whose index documents match at most this many boxes is answered from them: their rows
 * are read by id and sorted (about 2.5 µs a box on SQLite). More matches are a common query, whose
 * page is looked for first among the first boxes in sort order.
 */
const COLLECT = 1000;

/**
 * Boxes with a released version that the actor may see, matching every word of `q` by prefix
 * against the words of the owner's name, the box name and the short description, optionally only
 * those whose current version has `provider` (and `architecture`). Words and filters are
 * intersected in the full-text index (search-index.ts); sorting and paging use the sort indexes.
 */
export async function searchBoxes(
  db: Db,
  dialect: 'sqlite' | 'postgres',
  actor: RegistryActor | undefined,
  query: SearchQuery,
): Promise<{ owner: Owner; box: BoxRow }[]> {
  const where = ['b.current_version_id IS NOT NULL'];
  const params: SqlValue[] = [];
  const visible = visibility(actor);
  if (visible) {
    where.push(visible.sql);
    params.push(...visible.params);
  }
  const terms = [...new Set(searchTerms(query.q ?? ''))].slice(0, 8);
  const direction = query.order === 'asc' ? 'ASC' : 'DESC';
  const order = `${SORT_COLUMN[query.sort]} ${direction}, b.id ${direction}`;
  const offset = (query.page - 1) * query.limit;

  let ids: string[] | undefined;
  if (terms.length > 0 || query.provider || query.architecture) {
    const matching = await matchingBoxIds(db, dialect, { words: terms, provider: query.provider, architecture: query.architecture }, COLLECT);
    // At most COLLECT ids (matchingBoxIds answers undefined beyond): a bounded IN list, in one statement since it pages.
    if (matching) {
      ids = matching.length === 0 || offset >= matching.length ? [] : await pageOf(`b.id IN (${matching.map(() => '?').join(', ')})`, matching);
    }
  }
  ids ??= await pageOfMany();
  return boxesById(db, ids);

  /** The ids of one page of the boxes that satisfy `where` and `extra`, in sort order. */
  function pageOf(extra: string, extraParams: SqlValue[], from = 'registry_boxes b', fromParams: SqlValue[] = []): Promise<string[]> {
    return db
      .all<{ id: string }>(`SELECT b.id FROM ${from} WHERE ${[...where, extra].join(' AND ')} ORDER BY ${order} LIMIT ? OFFSET ?`, [
        ...fromParams,
        ...params,
        ...extraParams,
        query.limit,
        offset,
      ])
      .then((rows) => rows.map((r) => r.id));
  }

  /**
   * A page of a query with many matches (or no words and no filter). When every word is common, a
   * window of the first boxes in sort order is probed first (each box's words by the term table's
   * (box_id, term) index): a full page there is the answer, since the window is a prefix of the
   * order. Otherwise the boxes are collected (the rarest word's by the term index) and sorted.
   */
  async function pageOfMany(): Promise<string[]> {
    // Provider and architecture together: one provider row with both.
    const filters: string[] = [];
    const filterParams: SqlValue[] = [];
    const providerWhere: string[] = [];
    if (query.provider) {
      providerWhere.push('p.name_lower = ?');
      filterParams.push(query.provider.toLowerCase());
    }
    if (query.architecture) {
      providerWhere.push('p.architecture = ?');
      filterParams.push(query.architecture);
    }
    if (providerWhere.length) {
      filters.push(`EXISTS (SELECT 1 FROM registry_providers p WHERE p.version_id = b.current_version_id AND ${providerWhere.join(' AND ')})`);
    }
    const words = await byRarity(db, terms);
    const wordFilters = (collect: boolean) => {
      const sql: string[] = [];
      const wordParams: SqlValue[] = [];
      words.forEach(({ word }, i) => {
        sql.push(
          collect && (i === 0 || words[0].matches >= COMMON)
            ? 'b.id IN (SELECT t.box_id FROM registry_box_terms t WHERE t.term >= ? AND t.term < ?)'
            : 'EXISTS (SELECT 1 FROM registry_box_terms t WHERE t.box_id = b.id AND t.term >= ? AND t.term < ?)',
        );
        wordParams.push(word, word + TOP);
      });
      return { sql: [...filters, ...sql].join(' AND ') || '1 = 1', params: [...filterParams, ...wordParams] };
    };
    if (words.length > 0 && words[0].matches >= COMMON) {
      const window = Math.min(WINDOW.max, Math.max(WINDOW.min, WINDOW.perRow * (offset + query.limit)));
      const probed = wordFilters(false);
      const page = await pageOf(probed.sql, probed.params, `(SELECT * FROM registry_boxes b ORDER BY ${order} LIMIT ?) b`, [window]);
      if (page.length === query.limit) return page;
    }
    const collected = wordFilters(words.length > 0);
    return pageOf(collected.sql, collected.params);
  }
}

/** The boxes and their owners of `ids`, in that order (two queries). */
async function boxesById(db: Db, ids: readonly string[]): Promise<{ owner: Owner; box: BoxRow }[]> {
  if (ids.length === 0) return [];
  const boxes = await allIn(ids, (placeholders, slice) => db.all<BoxRow>(`SELECT * FROM registry_boxes WHERE id IN (${placeholders})`, slice));
  const ownerIds = [...new Set(boxes.map((r) => r.owner_id))];
  const owners = await allIn(ownerIds, (placeholders, slice) => db.all<Owner>(`SELECT * FROM registry_owners WHERE id IN (${placeholders})`, slice));
  const boxById = new Map(boxes.map((b) => [b.id, b]));
  const ownerById = new Map(owners.map((o) => [o.id, o]));
  return ids.map((id) => boxById.get(id)!).map((box) => ({ owner: ownerById.get(box.owner_id)!, box }));
}
