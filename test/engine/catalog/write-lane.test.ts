import { CatalogServer, startCatalogServer } from './helpers';
import { CATALOG_WRITES } from '../../../src/engine/catalog/index-state';
import { TxOptions } from '../../../src/engine/storage';

/**
 * Catalog writes all take the index row's lock, so they ask the storage for the catalog's lane
 * (PostgreSQL then lets two of them at a time into the database per server); other writes do not.
 */
describe('the catalog write lane', () => {
  let s: CatalogServer;
  let writes: (string | undefined)[];

  beforeAll(async () => {
    s = await startCatalogServer('sqlite');
    const tx = s.engine.storage.tx.bind(s.engine.storage);
    s.engine.storage.tx = (fn, options?: TxOptions) => {
      if (!options?.readOnly) writes.push(options?.lane);
      return tx(fn, options);
    };
  });
  afterAll(() => s.close());
  beforeEach(() => {
    writes = [];
  });

  test('catalog write requests run in it', async () => {
    expect((await s.call('catalog', 'PUT', '/v1/kv/lane', { raw: 'v', headers: { 'x-consul-token': 'test-root-token' } })).status).toBe(200);
    expect((await s.root('PUT', '/v1/catalog/register', { Node: 'lane', Address: '10.0.0.1' })).status).toBe(200);
    expect((await s.root('PUT', '/v1/session/create', { Node: 'lane' })).status).toBe(200);
    expect(writes.length).toBeGreaterThanOrEqual(3);
    expect(new Set(writes)).toEqual(new Set([CATALOG_WRITES]));
  });

  test('secrets writes do not', async () => {
    const written = await s.call('secrets', 'POST', '/v1/cubbyhole/lane', { body: { a: 1 }, headers: { 'x-vault-token': 'test-root-token' } });
    expect(written.status).toBe(204);
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.every((lane) => lane === undefined)).toBe(true);
  });
});
