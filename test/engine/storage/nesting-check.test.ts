import { NESTED_TX_CHECK_VAR } from '../../../src/engine/storage/nesting-check';
import { openedStorage } from '../../helpers/storage';

/** The test suite's check (test/setup/global-setup.ts sets it): on SQLite these would hang for ever. */
describe('a transaction opened inside another', () => {
  const opened = openedStorage('sqlite');

  test('of the same kind fails at once, naming the problem', async () => {
    expect(process.env[NESTED_TX_CHECK_VAR]).toBe('1');
    const storage = opened.storage;
    await expect(storage.tx(() => storage.tx(async () => 1, { readOnly: true }), { readOnly: true })).rejects.toThrow(
      'a read transaction was opened inside another: it would wait for itself',
    );
    await expect(storage.tx(() => storage.tx(async () => 1))).rejects.toThrow('a write transaction was opened inside another');
  });

  test('of the other kind runs (a route that reads, then writes in a transaction of its own)', async () => {
    const storage = opened.storage;
    expect(await storage.tx(() => storage.tx(async () => 'written'), { readOnly: true })).toBe('written');
  });

  test('from a timer the transaction started, after it ended, runs', async () => {
    const storage = opened.storage;
    let later: Promise<number> | undefined;
    await storage.tx(async () => {
      later = new Promise((resolve, reject) => setTimeout(() => storage.tx(async () => 2).then(resolve, reject), 10));
    });
    expect(await later).toBe(2);
  });

  test('side by side with another (two requests at once) runs', async () => {
    const storage = opened.storage;
    const results = await Promise.all([1, 2, 3].map((n) => storage.tx(async () => n, { readOnly: true })));
    expect(results).toEqual([1, 2, 3]);
  });
});
