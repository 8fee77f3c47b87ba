import { formatRow, runSoak, SoakRow } from '../../bench/soak';

/**
 * The short soak (the long one is `npm run soak -- --minutes N`): ~40 s of mixed load on all three
 * APIs of one `hangar server` process. No errors at all, and the server's RSS after the first
 * interval grows by less than RSS_GROWTH_MIB to the end. The bound covers the warm-up, not a
 * plateau: on an idle 2-core machine (about 1,200 requests/s) RSS climbs from ~190 to ~275 MiB over
 * the first ~70 s, then stays flat (a 2-minute `npm run soak`); a leak of a few KiB per request
 * exceeds it within this run.
 */
const RSS_GROWTH_MIB = 128;

jest.setTimeout(120_000);

test('mixed load on the three APIs: no errors, RSS flat', async () => {
  const rows: SoakRow[] = await runSoak({ minutes: 0.6, workers: 4, intervalSeconds: 6 });
  const table = rows.map(formatRow).join('\n');
  const failures = rows.flatMap((r) => r.samples);
  expect({ errors: rows.reduce((n, r) => n + r.errors, 0), failures, table }).toEqual({ errors: 0, failures: [], table });
  expect(rows.length).toBeGreaterThanOrEqual(5);
  expect(rows.every((r) => r.requests > 0)).toBe(true);
  const warm = rows[0].rssMiB;
  const peak = Math.max(...rows.map((r) => r.rssMiB));
  if (peak - warm > RSS_GROWTH_MIB) throw new Error(`RSS grew ${(peak - warm).toFixed(0)} MiB, more than ${RSS_GROWTH_MIB}:\n${table}`);
});
