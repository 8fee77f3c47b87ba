import { openStorage, Storage } from '../../../src/engine/storage';
import { NESTED_TX_CHECK_VAR } from '../../../src/engine/storage/nesting-check';
import { freshStorage, FreshStorage } from '../../helpers/storage';

/** The test suite's check (test/setup/global-setup.ts sets it): on SQLite these would hang for ever. */
describe('a transaction opened inside another', () => {
  let fresh: FreshStorage;
  let storage: Storage;

  beforeAll(async () => {
    expect(process.env[NESTED_TX_CHECK_VAR]).toBe('1');
    fresh = await freshStorage('sqlite');
    storage = await openStorage(fresh.config);
  });
  afterAll(async () => {
    await storage.close();
    await fresh.cleanup();
  });

  test('of the same kind fails at once, naming the problem', async () => {
    await expect(storage.tx(() => storage.tx(async () => 1, { readOnly: true }), { readOnly: true })).rejects.toThrow(
      'a read transaction was opened inside another: it would wait for itself',
    );
    await expect(storage.tx(() => storage.tx(async () => 1))).rejects.toThrow('a write transaction was opened inside another');
  });

  test('of the other kind runs (a route that reads, then writes in a transaction of its own)', async () => {
    expect(await storage.tx(() => storage.tx(async () => 'written'), { readOnly: true })).toBe('written');
  });

  test('from a timer the transaction started, after it ended, runs', async () => {
    let later: Promise<number> | undefined;
    await storage.tx(async () => {
      later = new Promise((resolve, reject) => setTimeout(() => storage.tx(async () => 2).then(resolve, reject), 10));
    });
    expect(await later).toBe(2);
  });

  test('side by side with another (two requests at once) runs', async () => {
    const results = await Promise.all([1, 2, 3].map((n) => storage.tx(async () => n, { readOnly: true })));
    expect(results).toEqual([1, 2, 3]);
  });
});
