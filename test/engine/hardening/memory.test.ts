import { randomBytes } from 'node:crypto';
import { hostileRun } from '../../../bench/hostile-memory';
import { BoundedMap } from '../../../src/engine/bounded-map';
import { PARSED_RULES_MAX, parsedRulesCached } from '../../../src/engine/catalog/acl/store';
import { runtimeOf } from '../../../src/engine/catalog/runtime';
import { RATE_WINDOWS_MAX, rateLimitWindows } from '../../../src/engine/registry/limits';
import { STATEMENTS_MAX } from '../../../src/engine/storage/sqlite/sqlite-storage';
import { ROOT_TOKEN, startTestServer, TestServer } from '../../helpers/server';

const hex = () => randomBytes(6).toString('hex');

test('BoundedMap drops the entry set longest ago, and re-setting a key makes it young', () => {
  const map = new BoundedMap<string, number>(3);
  for (const k of ['a', 'b', 'c']) map.set(k, 1);
  map.set('a', 2);
  map.set('d', 1);
  expect([...map.keys()]).toEqual(['c', 'a', 'd']);
  expect(map.size).toBe(3);
});

/**
 * Issue 18, "seen to fail": memory grew under a fuzz run and stayed. Every in-memory table whose
 * keys come from requests is bounded; after hostile traffic, each is within its bound.
 */
describe('hardening: in-memory tables stay bounded under hostile traffic', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('sqlite');
  });
  afterAll(() => server.close());

  test('rate-limit windows: one per made-up token, in a map bounded as above', async () => {
    const app = server.engine.app('registry');
    for (let i = 0; i < 100; i++) {
      await app.inject({ method: 'GET', url: `/api/v1/box/${hex()}/x`, headers: { 'x-registry-token': hex() } });
    }
    expect(rateLimitWindows(server.engine)).toMatchObject({ size: 100, maxSize: RATE_WINDOWS_MAX });
    expect(rateLimitWindows(server.engine)).toBeInstanceOf(BoundedMap);
  });

  test('varied paths, tokens and bodies over the three APIs leave every table within its bound', async () => {
    const catalog = server.engine.app('catalog');
    const secrets = server.engine.app('secrets');
    for (let i = 0; i < 100; i++) {
      const token = i % 2 ? ROOT_TOKEN : hex();
      await catalog.inject({ method: 'PUT', url: '/v1/acl/policy', headers: { 'x-consul-token': ROOT_TOKEN }, payload: { Name: `p${hex()}`, Rules: `key_prefix "${hex()}" { policy = "read" }` } });
      await catalog.inject({ method: 'PUT', url: `/v1/kv/${hex()}?flags=${i}`, headers: { 'x-consul-token': token }, payload: hex() });
      await catalog.inject({ method: 'GET', url: `/v1/kv/${hex()}?recurse&index=1&wait=1ms`, headers: { 'x-consul-token': token } });
      await secrets.inject({ method: 'POST', url: `/v1/secret/data/${hex()}`, headers: { 'x-vault-token': token }, payload: { data: { [hex()]: hex() } } });
      await secrets.inject({ method: 'GET', url: `/v1/${hex()}/${hex()}?list=true`, headers: { 'x-vault-token': token } });
    }
    // The SQLite storage's writing and read-only connections each keep their prepared statements.
    type Connection = { statements: Map<string, unknown> };
    const storage = server.engine.storage as unknown as { writer: Connection; reader: Connection };
    for (const { statements } of [storage.writer, storage.reader]) {
      expect(statements.size).toBeLessThanOrEqual(STATEMENTS_MAX);
      expect(statements).toBeInstanceOf(BoundedMap);
    }
    expect(parsedRulesCached()).toBeLessThanOrEqual(PARSED_RULES_MAX);
    const runtime = runtimeOf(server.engine);
    expect(runtime.pending.size).toBe(0);
    expect(runtime.blocking.waiting).toBe(0);
  });
});

/**
 * Issue 18: resident memory under hostile bodies (at and past the 1 MiB limit, 400,000-deep arrays,
 * invalid JSON and UTF-8, 8 KB paths, made-up tokens) against a `hangar server` process plateaus:
 * each round after the first ends within PLATEAU_MIB of the highest RSS before it, and the whole run
 * stays within GROWTH_MIB of the idle server. Before JSON nested too deep (now: MAX_JSON_DEPTH) was refused
 * unparsed, RSS went from ~170 to ~600 MiB (docs/security.md, "Memory"; bench/hostile-memory.ts).
 */
// RSS at a round's end moves with when V8 and malloc last gave memory back: in six runs of
// bench/hostile-memory.ts with this test's settings (26 Nov 2026), one round ended up to 56 MiB above
// the highest before it, with no growth over the run (48, the bound before, failed a CI run). The
// leak this guards against grew RSS by 430 MiB, over both bounds.
const PLATEAU_MIB = 64;
const GROWTH_MIB = 160;

test('RSS under rounds of hostile bodies reaches a plateau, no 5xx', async () => {
  const run = await hostileRun({ rounds: 4, requests: 320, concurrency: 8 });
  const table = `start ${run.startMiB.toFixed(0)} MiB, warm ${run.warmMiB.toFixed(0)} MiB, rounds ${run.rounds.map((r) => r.toFixed(0)).join(' ')} MiB`;
  expect({ errors: run.errors, table }).toEqual({ errors: 0, table });
  // Each round after the first against the highest RSS of the rounds before it.
  const growths = run.rounds.slice(1).map((r, j) => r - Math.max(...run.rounds.slice(0, j + 1)));
  const total = Math.max(...run.rounds) - run.startMiB;
  expect({ table, plateau: growths.every((g) => g <= PLATEAU_MIB), bounded: total <= GROWTH_MIB }).toEqual({ table, plateau: true, bounded: true });
}, 240_000);
