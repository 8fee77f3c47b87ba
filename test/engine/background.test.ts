import { Scheduler } from '../../src/engine/background';
import { ManualClock } from '../../src/engine/clock';
import { Engine } from '../../src/engine/engine';
import { freshStorage, STORAGE_KINDS } from '../helpers/storage';

describe.each(STORAGE_KINDS)('background jobs (%s)', (kind) => {
  test('a job runs on one engine at a time, and another takes over when the lease lapses', async () => {
    const storage = await freshStorage(kind);
    const clock = new ManualClock();
    const a = await Engine.open({ storage: storage.config, dataDir: storage.dataDir, clock });
    const b = await Engine.open({ storage: storage.config, dataDir: storage.dataDir, clock });
    const runs: string[] = [];
    const job = (who: string) => ({ name: 'count', intervalMs: 1000, run: async () => void runs.push(who) });
    const sa = new Scheduler(a, [job('a')]);
    const sb = new Scheduler(b, [job('b')]);
    try {
      await sa.runOnce();
      await sb.runOnce();
      await sa.runOnce();
      expect(runs).toEqual(['a', 'a']);
      clock.advance(2001); // a stopped renewing: its lease (twice the interval) has lapsed
      await sb.runOnce();
      await sa.runOnce();
      expect(runs).toEqual(['a', 'a', 'b']);
    } finally {
      await sa.stop();
      await sb.stop();
      await a.close();
      await b.close();
      await storage.cleanup();
    }
  });

  test('short-lived processes (the CLI) give their leases back after one round; a server keeps its own', async () => {
    const storage = await freshStorage(kind);
    const clock = new ManualClock();
    const engines = await Promise.all([0, 1, 2].map(() => Engine.open({ storage: storage.config, dataDir: storage.dataDir, clock })));
    const runs: string[] = [];
    const job = (who: string) => ({ name: 'due', intervalMs: 60_000, run: async () => void runs.push(who) });
    const [cli1, cli2, server] = engines.map((e, i) => new Scheduler(e, [job(['cli1', 'cli2', 'server'][i])]));
    try {
      // One CLI command after another: each runs the job at once, no lease left held.
      await cli1.runOnce({ releaseLeases: true });
      await cli2.runOnce({ releaseLeases: true });
      expect(runs).toEqual(['cli1', 'cli2']);
      // A server's lease is its own: the CLI skips the round (the server does the work) without waiting.
      await server.runOnce();
      await cli1.runOnce({ releaseLeases: true });
      expect(runs).toEqual(['cli1', 'cli2', 'server']);
    } finally {
      for (const s of [cli1, cli2, server]) await s.stop();
      for (const e of engines) await e.close();
      await storage.cleanup();
    }
  });

  test('a failing round is logged and does not stop the next one', async () => {
    const storage = await freshStorage(kind);
    const engine = await Engine.open({ storage: storage.config, dataDir: storage.dataDir });
    let calls = 0;
    const scheduler = new Scheduler(engine, [
      { name: 'flaky', intervalMs: 1000, run: async () => { calls++; if (calls === 1) throw new Error('boom'); } },
    ]);
    try {
      await scheduler.runOnce();
      await scheduler.runOnce();
      expect(calls).toBe(2);
    } finally {
      await engine.close();
      await storage.cleanup();
    }
  });
});
