import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { SeriesCounter, SeriesHistogram } from '../../src/engine/metric-series';

const BOUNDS = [0.001, 0.01, 0.1, 1];

/** The same observations in prom-client's own metrics and in the series ones, each in a registry. */
function both() {
  const theirs = new Registry();
  const ours = new Registry();
  const counter = new Counter({ name: 'c_total', help: 'c', labelNames: ['api', 'status'], registers: [theirs] });
  const histogram = new Histogram({ name: 'h_seconds', help: 'h', labelNames: ['api'], buckets: BOUNDS, registers: [theirs] });
  const seriesCounter = new SeriesCounter('c_total', 'c', ['api', 'status']);
  const seriesHistogram = new SeriesHistogram('h_seconds', 'h', ['api'], BOUNDS);
  ours.registerMetric(seriesCounter as never);
  ours.registerMetric(seriesHistogram as never);
  const observe = (api: string, status: string, seconds: number) => {
    counter.inc({ api, status });
    histogram.observe({ api }, seconds);
    seriesCounter.inc([api, status]);
    seriesHistogram.observe([api], seconds);
  };
  return { theirs, ours, observe };
}

describe('metric series', () => {
  test('expose what prom-client\'s own counter and histogram expose for the same observations', async () => {
    const { theirs, ours, observe } = both();
    // On a bound, between bounds, above all of them, and a second series.
    for (const seconds of [0.0005, 0.001, 0.005, 0.1, 0.5, 3, 0.001]) observe('catalog', '200', seconds);
    observe('secrets', '404', 0.02);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    // prom-client's add an empty `exemplar` to each value.
    const withoutExemplars = (await theirs.getMetricsAsJSON()).map((m) => ({
      ...m,
      values: m.values.map((v) => {
        const { exemplar: _exemplar, ...rest } = v as typeof v & { exemplar?: unknown };
        return rest;
      }),
    }));
    expect(await ours.getMetricsAsJSON()).toEqual(withoutExemplars);
  });

  test('sum over worker threads as prom-client\'s do', async () => {
    const threads = [both(), both()];
    threads[0].observe('catalog', '200', 0.002);
    threads[1].observe('catalog', '200', 0.2);
    threads[1].observe('registry', '201', 2);
    const sum = async (which: 'ours' | 'theirs') =>
      (AggregatorRegistry.aggregate(await Promise.all(threads.map((t) => t[which].getMetricsAsJSON()))).metrics());
    expect(await sum('ours')).toBe(await sum('theirs'));
  });

  test('reset empties every series', async () => {
    const { ours, observe } = both();
    observe('catalog', '200', 0.002);
    ours.resetMetrics();
    expect((await ours.getMetricsAsJSON()).map((m) => m.values)).toEqual([[], []]);
  });
});
