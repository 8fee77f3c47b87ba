import type { Db } from '../storage';

/**
 * The registry's full-text index: one document per box with a released version, in
 * `registry_search (box_id, doc)`, kept in step in the writing transaction by `reindexBox`. The
 * database indexes `doc` (migration 105): an FTS5 table on SQLite, a GIN index over a tsvector on
 * PostgreSQL. Both keep, per token, the boxes that have it, so that the words of a query and its
 * filters are intersected in the index instead of row by row.
 *
 * A document is space-separated tokens:
 * - the box's search terms that are words (letters and digits only), which the words of a query
 *   match by prefix;
 * - filter tokens, which start with `~` and so never match a query word (a word starts with a
 *   letter or a digit): for each provider of the current version `~p~NAME`, `~a~ARCHITECTURE` and
 *   `~pa~NAME~ARCHITECTURE`.
 *
 * Visibility is not in the index: the boxes it returns are read and filtered by the same SQL as
 * every other search (private ones only for their owner, its organizations' members and the
 * administrator), so the index can never make a private box visible.
 *
 * The whole owner and box names, which the term table also holds, are left out: a query word
 * (letters and digits) that is a prefix of a whole name is a prefix of its first word, which is in
 * the document (names start with a letter or digit, are ASCII and at most 100 characters long).
 */

/** How many terms a box is found by (its owner's name, its name and its short description's words). */
const MAX_TERMS = 64;

/** Lower-case words of a text: what search matches a query's words against (by prefix). */
export function searchTerms(text: string): string[] {
  return text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((t) => t.length > 0 && t.length <= 100);
}

/** A box's search terms: its owner's name, its name (whole and in words) and its short description's words. */
export function boxTerms(username: string, boxName: string, shortDescription: string): string[] {
  const terms = new Set([username.toLowerCase(), boxName.toLowerCase(), ...searchTerms(`${username} ${boxName}`)]);
  for (const t of searchTerms(shortDescription)) {
    if (terms.size >= MAX_TERMS) break;
    terms.add(t);
  }
  return [...terms];
}

const WORD = /^[\p{L}\p{N}]+$/u;

export interface SearchDocumentFields {
  readonly terms: readonly string[];
  /** The providers of the current version. */
  readonly providers: readonly { readonly name_lower: string; readonly architecture: string }[];
}

/** The index document of a box (see above). */
export function searchDocument(fields: SearchDocumentFields): string {
  const tokens = new Set(fields.terms.filter((t) => WORD.test(t)));
  for (const p of fields.providers) {
    tokens.add(providerToken(p.name_lower));
    tokens.add(architectureToken(p.architecture));
    tokens.add(providerToken(p.name_lower, p.architecture));
  }
  return [...tokens].join(' ');
}

export const architectureToken = (architecture: string): string => `~a~${architecture}`;
export const providerToken = (nameLower: string, architecture?: string): string =>
  architecture === undefined ? `~p~${nameLower}` : `~pa~${nameLower}~${architecture}`;

/**
 * Rewrites the index document of a box from its rows: none when it has no released version (search
 * finds only those) or no longer exists. Called in the transaction of every write that changes
 * what search matches: the box's name or description, its current version, and the
 * providers of its versions.
 */
export async function reindexBox(db: Db, boxId: string): Promise<void> {
  await db.run('DELETE FROM registry_search WHERE box_id = ?', [boxId]);
  const box = await db.get<{
    username: string;
    name: string;
    short_description: string;
    current_version_id: string | null;
  }>(
    `SELECT o.username, b.name, b.short_description, b.current_version_id
       FROM registry_boxes b JOIN registry_owners o ON o.id = b.owner_id WHERE b.id = ?`,
    [boxId],
  );
  if (!box?.current_version_id) return;
  const providers = await db.all<{ name_lower: string; architecture: string }>(
    'SELECT name_lower, architecture FROM registry_providers WHERE version_id = ?',
    [box.current_version_id],
  );
  const doc = searchDocument({
    terms: boxTerms(box.username, box.name, box.short_description),
    providers,
  });
  await db.run('INSERT INTO registry_search (box_id, doc) VALUES (?, ?)', [boxId, doc]);
}

/** What a query asks of the index: every word by prefix, and the provider filters. */
export interface IndexQuery {
  readonly words: readonly string[];
  readonly provider?: string;
  readonly architecture?: string;
}

/** The filter token a query requires, if any. */
function filterToken(query: IndexQuery): string | undefined {
  if (query.provider) return providerToken(query.provider.toLowerCase(), query.architecture);
  return query.architecture ? architectureToken(query.architecture) : undefined;
}

/** An FTS5 query: words as prefix strings, the filter token as an exact string (none can hold a `"`). */
function fts5Query(query: IndexQuery): string {
  const filter = filterToken(query);
  return [...query.words.map((w) => `"${w}"*`), ...(filter ? [`"${filter}"`] : [])].join(' AND ');
}

/** A tsquery: lexemes quoted (words are letters and digits, tokens add `~`, `-` and `_`), words by prefix. */
function tsQuery(query: IndexQuery): string {
  const filter = filterToken(query);
  return [...query.words.map((w) => `'${w}':*`), ...(filter ? [`'${filter}'`] : [])].join(' & ');
}

/**
 * The ids of the boxes whose documents match the query (in no particular order), or undefined when
 * there are more than `max`. On SQLite they are counted first (reading a row into JavaScript
 * costs ten times more than counting it), and read only when there are some and not too many.
 */
export async function matchingBoxIds(db: Db, dialect: 'sqlite' | 'postgres', query: IndexQuery, max: number): Promise<string[] | undefined> {
  if (dialect === 'postgres') {
    const rows = await db.all<{ box_id: string }>('SELECT box_id FROM registry_search WHERE lexemes @@ CAST(? AS tsquery) LIMIT ?', [
      tsQuery(query),
      max + 1,
    ]);
    return rows.length > max ? undefined : rows.map((r) => r.box_id);
  }
  const matching = 'SELECT rowid FROM registry_search_fts WHERE registry_search_fts MATCH ? LIMIT ?';
  const match = fts5Query(query);
  const counted = await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM (${matching})`, [match, max + 1]);
  const n = Number(counted?.n ?? 0);
  if (n > max) return undefined;
  if (n === 0) return [];
  const rows = await db.all<{ box_id: string }>(`SELECT box_id FROM registry_search WHERE rid IN (${matching})`, [match, max + 1]);
  return rows.map((r) => r.box_id);
}
