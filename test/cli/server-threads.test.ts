import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServerThreads } from '../../src/cli/commands/server-threads';
import { captureLog } from '../helpers/log-capture';
import { tempDir } from '../helpers/storage';
import { until } from '../helpers/until';

/**
 * What the main thread of `hangar server --workers N` does when a worker thread dies, with a
 * stand-in for the CLI that dies once holding the SQLite write lock (fixtures/dying-thread.cjs).
 */
describe('a worker thread that dies', () => {
  test('is started again after a second, and the write lock it held is freed first', async () => {
    const dataDir = tempDir();
    const log = captureLog();
    const writeLock = new SharedArrayBuffer(4);
    const threads = await ServerThreads.start(
      { count: 2, channel: 'hangar-test-threads', writeLock, dataDir, addresses: { registry: '127.0.0.1:0', secrets: '127.0.0.1:0', catalog: '127.0.0.1:0' } },
      log.logger,
      { path: join(__dirname, 'fixtures', 'dying-thread.cjs'), argv: [] },
    );
    try {
      const exited = await log.waitFor((r) => r.msg === 'a worker thread exited; starting it again');
      expect(exited).toMatchObject({ thread: 1, code: 3 });
      await until('the thread to start again', () => existsSync(join(dataDir, 'second-run')));
      expect(readFileSync(join(dataDir, 'second-run'), 'utf8')).toBe('took the lock');
    } finally {
      await threads.stop();
    }
    expect(new Int32Array(writeLock)[0]).toBe(0);
  });
});
