import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, MetricObjectWithValues, MetricValue, Registry } from 'prom-client';
import type { Engine } from './engine';
import type { ApiName } from './http/api';
import { SeriesCounter, SeriesHistogram } from './metric-series';

/** The Peers topic on which a thread asks the others for their metrics. */
const METRICS_TOPIC = 'metrics';

/** Latency buckets in seconds: sub-millisecond cached reads up to blocking queries' minutes. */
const SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 600];

/**
 * The metrics of one engine, in a registry of its own (not prom-client's global one: tests and
 * the in-process transport run several engines in one process). Counters are updated on the hot
 * path; gauges that need the database (leases, sessions) are read when someone scrapes.
 *
 * A server with several worker threads answers for all of them: the thread asked gathers the
 * others' metrics (Peers) and sums them; the process's own metrics come from the main thread, and
 * the database's gauges from one thread.
 */
export class EngineMetrics {
  readonly registry = new Registry();
  private readonly requests = new SeriesCounter('hangar_http_requests_total', 'HTTP requests answered, by API, method, route pattern and status', [
    'api',
    'method',
    'route',
    'status',
  ]);
  private readonly latency = new SeriesHistogram(
    'hangar_http_request_duration_seconds',
    'Time from a request received to its response sent, by API, method and route pattern',
    ['api', 'method', 'route'],
    SECONDS,
  );
  private readonly transactions = new SeriesHistogram(
    'hangar_storage_transaction_duration_seconds',
    'Storage transactions, read-only or read-write, committed or rolled back',
    ['mode', 'outcome'],
    SECONDS,
  );
  private readonly jobs: Counter<'job' | 'outcome'>;

  constructor(private readonly engine: Engine) {
    const registers = [this.registry];
    if (!engine.peers || engine.peers.config.index === 0) collectDefaultMetrics({ register: this.registry });
    engine.peers?.answer(METRICS_TOPIC, () => this.registry.getMetricsAsJSON());
    // The hot path's series (metric-series.ts), in the registry as prom-client's own metrics.
    for (const metric of [this.requests, this.latency, this.transactions]) this.registry.registerMetric(metric as never);
    this.jobs = new Counter({
      name: 'hangar_background_job_runs_total',
      help: 'Rounds of background jobs this server ran (it held the job\'s lease), by outcome',
      labelNames: ['job', 'outcome'],
      registers,
    });
    const count = (sql: string) => engine.storage.tx(async (db) => Number((await db.get<{ n: number }>(sql))?.n ?? 0), { readOnly: true });
    new Gauge({
      name: 'hangar_secrets_leases',
      help: 'Secrets leases outstanding (not yet revoked)',
      registers,
      aggregator: 'first',
      async collect() {
        this.set(await count('SELECT COUNT(*) AS n FROM secrets_leases'));
      },
    });
    new Gauge({
      name: 'hangar_catalog_sessions',
      help: 'Catalog sessions',
      registers,
      aggregator: 'first',
      async collect() {
        this.set(await count('SELECT COUNT(*) AS n FROM catalog_sessions'));
      },
    });
    new Gauge({
      name: 'hangar_catalog_blocking_queries',
      help: 'Catalog blocking queries waiting in this server',
      registers,
      collect() {
        // Loaded here: the catalog's modules are not the metrics' business until someone scrapes.
        const { runtimeOf } = require('./catalog/runtime') as typeof import('./catalog/runtime');
        this.set(runtimeOf(engine).blocking.waiting);
      },
    });
  }

  observeRequest(api: ApiName, method: string, route: string, status: number, ms: number): void {
    this.requests.inc([api, method, route, String(status)]);
    this.latency.observe([api, method, route], ms / 1000);
  }

  observeTransaction(readOnly: boolean, committed: boolean, ms: number): void {
    this.transactions.observe([readOnly ? 'read' : 'write', committed ? 'commit' : 'rollback'], ms / 1000);
  }

  observeJob(job: string, ok: boolean): void {
    this.jobs.inc({ job, outcome: ok ? 'ok' : 'failed' });
  }

  /** The Prometheus text exposition format. */
  async prometheus(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await (await this.wholeServer()).metrics() };
  }

  /** This engine's registry, or with worker threads the sum of all of theirs. */
  private async wholeServer(): Promise<Registry> {
    const peers = this.engine.peers;
    if (!peers) return this.registry;
    const theirs = (await peers.gather(METRICS_TOPIC)).filter((m) => m !== null) as MetricObjectWithValues<MetricValue<string>>[][];
    // prom-client omits what it cannot sum over processes (the start time); here one thread reports it.
    const all = [await this.registry.getMetricsAsJSON(), ...theirs].map((metrics) =>
      metrics.map((m) => (m.aggregator === 'omit' ? { ...m, aggregator: 'first' as const } : m)),
    );
    return AggregatorRegistry.aggregate(all);
  }

  /**
   * The JSON the public services answer without `format=prometheus` (go-metrics' in-memory sink:
   * Gauges, Counters, Samples). Values are cumulative since start, not per interval; a histogram
   * becomes a sample with its count, sum and mean.
   */
  async json(now: number): Promise<object> {
    const gauges: object[] = [];
    const counters: object[] = [];
    const samples: object[] = [];
    for (const metric of await (await this.wholeServer()).getMetricsAsJSON()) {
      if (String(metric.type) === 'gauge') {
        for (const v of metric.values) gauges.push({ Name: metric.name, Value: v.value, Labels: v.labels });
      } else if (String(metric.type) === 'counter') {
        for (const v of metric.values) counters.push(aggregate(metric.name, v.value, v.value, v.labels));
      } else if (String(metric.type) === 'histogram') {
        const series = new Map<string, { labels: object; count: number; sum: number }>();
        for (const v of metric.values as { value: number; labels: Record<string, string | number>; metricName?: string }[]) {
          const { le: _le, ...labels } = v.labels;
          const key = JSON.stringify(labels);
          const entry = series.get(key) ?? { labels, count: 0, sum: 0 };
          if (v.metricName?.endsWith('_count')) entry.count = v.value;
          if (v.metricName?.endsWith('_sum')) entry.sum = v.value;
          series.set(key, entry);
        }
        for (const s of series.values()) samples.push(aggregate(metric.name, s.count, s.sum, s.labels));
      }
    }
    const timestamp = new Date(now).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' +0000 UTC');
    return { Timestamp: timestamp, Gauges: gauges, Points: [], Counters: counters, Samples: samples };
  }
}

function aggregate(name: string, count: number, sum: number, labels: object): object {
  const mean = count > 0 ? sum / count : 0;
  return { Name: name, Count: count, Rate: 0, Sum: sum, Min: 0, Max: 0, Mean: mean, Stddev: 0, Labels: labels };
}

