import { randomUUID } from 'node:crypto';
import { searchDocument, searchTerms } from '../../../src/engine/registry/search-index';
import { versionSortKey } from '../../../src/engine/registry/versions';
import { Db, SqlValue } from '../../../src/engine/storage';
import { startTestServer, TestServer } from '../../helpers/server';
import { STORAGE_KINDS } from '../../helpers/storage';

/**
 * Search with common words (more than 5,000 matching boxes): the page comes from a window of
 * boxes in sort order, or, when the window holds less than a page, from collecting the boxes.
 */
describe.each(STORAGE_KINDS)('registry search with common words (%s)', (kind) => {
  let server: TestServer;
  // Boxes 0..5199 say "alpha", 5197..10399 "beta": both common, together only 5197..5199.
  const boxes = Array.from({ length: 10_400 }, (_, i) => ({
    id: randomUUID(),
    version: randomUUID(),
    name: `box-${i}`,
    words: [i < 5200 ? 'alpha' : '', i >= 5197 ? 'beta' : ''].join(' ').trim(),
    downloads: (i * 7919) % 10_427, // distinct: 10427 is prime
    private: i % 10 === 3,
  }));

  /** Multi-row INSERTs, a few hundred rows each: ten thousand boxes load in a moment. */
  async function insertRows(db: Db, table: string, columns: string[], rows: SqlValue[][]) {
    for (let i = 0; i < rows.length; i += 300) {
      const chunk = rows.slice(i, i + 300);
      const values = chunk.map(() => `(${columns.map(() => '?').join(', ')})`).join(', ');
      await db.run(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values}`, chunk.flat());
    }
  }

  beforeAll(async () => {
    server = await startTestServer(kind);
    const owner = randomUUID();
    await server.engine.storage.tx(async (db) => {
      await db.run(
        "INSERT INTO registry_owners (id, username, username_lower, kind, profile_markdown, created_at, updated_at) VALUES (?, 'many', 'many', 'user', '', 0, 0)",
        [owner],
      );
      const boxColumns = ['id', 'owner_id', 'name', 'name_lower', 'short_description', 'description_markdown', 'is_private', 'downloads', 'current_version_id', 'created_at', 'updated_at'];
      await insertRows(db, 'registry_boxes', boxColumns, boxes.map((b, i) => [b.id, owner, b.name, b.name, b.words, '', b.private ? 1 : 0, b.downloads, b.version, i, i]));
      const versionColumns = ['id', 'box_id', 'version', 'sort_key', 'description_markdown', 'status', 'created_at', 'updated_at'];
      await insertRows(db, 'registry_versions', versionColumns, boxes.map((b) => [b.version, b.id, '1.0.0', versionSortKey('1.0.0'), '', 'active', 0, 0]));
      await insertRows(db, 'registry_box_terms', ['term', 'box_id'], boxes.flatMap((b) => searchTerms(b.words).map((t) => [t, b.id])));
      const doc = (b: (typeof boxes)[number]) => searchDocument({ terms: searchTerms(b.words), providers: [] });
      await insertRows(db, 'registry_search', ['box_id', 'doc'], boxes.map((b) => [b.id, doc(b)]));
    });
  });
  afterAll(() => server.close());

  const search = async (query: string) => {
    const res = await server.call('registry', 'GET', `/api/v1/search?${query}`);
    expect(res.status).toBe(200);
    return (res.body.boxes as { name: string }[]).map((b) => b.name);
  };
  const expected = (match: (b: (typeof boxes)[number]) => boolean, offset: number, limit: number) =>
    boxes
      .filter((b) => !b.private && match(b))
      .sort((a, b) => b.downloads - a.downloads)
      .slice(offset, offset + limit)
      .map((b) => b.name);

  test('a common word: the first pages by downloads, as a full sort would give them', async () => {
    const alpha = (b: (typeof boxes)[number]) => b.words.includes('alpha');
    expect(await search('q=alpha')).toEqual(expected(alpha, 0, 10));
    expect(await search('q=alp&page=3&limit=7')).toEqual(expected(alpha, 14, 7));
    expect(await search('q=alpha&sort=created&order=asc&limit=3')).toEqual(['box-0', 'box-1', 'box-2']);
  });

  test('two common words that rarely meet, and a page beyond the matches', async () => {
    const both = expected((b) => b.words === 'alpha beta', 0, 10);
    expect(both).toHaveLength(3);
    expect(await search('q=alpha%20beta')).toEqual(both);
    expect(await search('q=beta&page=400')).toEqual(expected((b) => b.words.includes('beta'), 3990, 10));
    expect(await search('q=beta&page=600')).toEqual([]);
  });
});
