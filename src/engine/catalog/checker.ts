import type { Engine } from '../engine';
import type { Db } from '../storage';
import { OUTPUT_MAX_SIZE } from './agent';
import { aggregatedStatus, CheckDefinition, CheckThresholds, checkTypeOf, MIN_INTERVAL_NS } from './checks';
import { tablesIndex } from './index-state';
import { CheckRow, deregister, getCheck, setCheckStatus } from './nodes';
import { PROBES, ProbeResult } from './probes';
import { parseDuration } from './route';
import { writeAndNotify } from './runtime';
import { isAlive, listServers, ServerRow } from './servers';

/**
 * The checker: runs the health checks of the nodes this server owns on their interval, as the
 * public service's agent runs the checks of its node (agent/checks), and writes a check's status
 * through the catalog's write path only when it changed.
 *
 * Which server runs what (docs/catalog.md, "Health checks"): each server its own node's checks; the
 * oldest live server (the one /v1/status/leader names) also the checks of failed servers' nodes
 * and of external nodes (node meta `external-node` = "true", what consul-esm runs for the public
 * service). Every server derives this from catalog_servers alone, so no lease is needed; around a
 * failure two servers may both probe a check for up to one refresh, which only repeats a write.
 */

/** How often the checker looks for added, changed or removed checks and for failed servers. */
export const REFRESH_MS = 1000;
/** The public service's default check timeout. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/**
 * The public service's check_update_interval: a check whose output changed but not its status is
 * written at most this often (a status change is written at once).
 */
export const OUTPUT_UPDATE_MS = 5 * 60_000;
/** Writes of one transaction at most; more wait for the next. */
const BATCH = 500;
/** How often critical checks with DeregisterCriticalServiceAfter are looked at (the public service: every 30s). */
const REAP_MS = 2000;
/** The node meta by which consul-esm recognizes an external node. */
export const EXTERNAL_NODE_META = 'external-node';

/**
 * The shortest DeregisterCriticalServiceAfter honoured (the public service's
 * check_deregister_interval_min, 1m): HANGAR_CATALOG_CHECK_DEREGISTER_MIN, a duration from 1s.
 */
export function deregisterMinMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.HANGAR_CATALOG_CHECK_DEREGISTER_MIN;
  if (text === undefined || text === '') return 60_000;
  const ns = parseDuration(text);
  if (ns === undefined || ns < 1e9) {
    throw new Error(`HANGAR_CATALOG_CHECK_DEREGISTER_MIN "${text}" is invalid: use a duration of at least 1s, such as "1m" or "30s"`);
  }
  return Math.round(ns / 1e6);
}

/** The public service's StatusHandler: SuccessBeforePassing, FailuresBeforeWarning, FailuresBeforeCritical. */
export class StatusHandler {
  private successes: number;
  private failures: number;
  private readonly successBeforePassing: number;
  private readonly failuresBeforeWarning: number;
  private readonly failuresBeforeCritical: number;

  constructor(t: CheckThresholds) {
    this.successBeforePassing = t.SuccessBeforePassing ?? 0;
    this.failuresBeforeCritical = t.FailuresBeforeCritical ?? 0;
    // FailuresBeforeWarning defaults to FailuresBeforeCritical (agent.addCheck).
    this.failuresBeforeWarning = t.FailuresBeforeWarning || this.failuresBeforeCritical;
    // Counters start at their thresholds: the first result counts at once.
    this.successes = this.successBeforePassing;
    this.failures = this.failuresBeforeCritical;
  }

  /** The status to record for a probe's result, or undefined while a threshold is not reached. */
  next(result: ProbeResult): ProbeResult | undefined {
    if (result.status !== 'critical') {
      this.successes++;
      this.failures = 0;
      return this.successes >= this.successBeforePassing ? result : undefined;
    }
    this.failures++;
    this.successes = 0;
    if (this.failures >= this.failuresBeforeCritical) return result;
    if (this.failures >= this.failuresBeforeWarning) return { status: 'warning', output: result.output };
    return undefined;
  }
}

/** One check this server runs. */
interface Runner {
  readonly key: string;
  readonly node: string;
  readonly ns: string;
  readonly checkId: string;
  readonly type: string;
  readonly definition: CheckDefinition;
  /** The stored definition and thresholds: a change restarts the runner. */
  readonly version: string;
  readonly handler: StatusHandler;
  /** What the catalog holds for it, and when its output was last written (ms, engine clock). */
  status: string;
  output: string;
  writtenAt: number;
  timer?: NodeJS.Timeout;
  stopped: boolean;
}

const keyOf = (node: string, ns: string, checkId: string) => `${node}\u0000${ns}\u0000${checkId}`;

/** The nodes whose checks this server runs, and whether it stands in for the others (failed servers, external nodes). */
export function ownedNodes(engine: Engine, servers: readonly ServerRow[], now: number): { own: string; deputy: boolean; failed: string[] } {
  const own = engine.catalogNode.name;
  const live = servers.filter((s) => s.name === own || isAlive(s, now));
  const deputy = live.length === 0 || live[0].name === own;
  return { own, deputy, failed: deputy ? servers.filter((s) => !live.includes(s)).map((s) => s.name) : [] };
}

/** The checks of those nodes that run on an interval (or alias others), with alias checks apart. */
async function runnableChecks(db: Db, engine: Engine, now: number): Promise<CheckRow[]> {
  const { own, deputy, failed } = ownedNodes(engine, await listServers(db), now);
  const nodes = [own, ...failed];
  if (deputy) {
    const candidates = await db.all<{ name: string; meta: string }>("SELECT name, meta FROM catalog_nodes WHERE meta LIKE '%external-node%'");
    for (const c of candidates) if ((JSON.parse(c.meta) as Record<string, string>)[EXTERNAL_NODE_META] === 'true') nodes.push(c.name);
  }
  const rows: CheckRow[] = [];
  for (let i = 0; i < nodes.length; i += 500) {
    const part = nodes.slice(i, i + 500);
    rows.push(...await db.all<CheckRow>(
      `SELECT * FROM catalog_checks WHERE node IN (${part.map(() => '?').join(', ')}) AND definition <> '{}'`,
      part,
    ));
  }
  return rows.filter((r) => PROBES[checkTypeOf(JSON.parse(r.definition) as CheckDefinition)] !== undefined || isAlias(r));
}

const isAlias = (row: CheckRow) => checkTypeOf(JSON.parse(row.definition) as CheckDefinition) === 'alias';

/**
 * An alias check's status (CheckAlias): the worst of the aliased service's checks (and its node's)
 * on AliasNode, or of the node's checks when only AliasNode is given; passing when there are none.
 */
async function aliasResult(db: Db, row: CheckRow): Promise<ProbeResult> {
  const d = JSON.parse(row.definition) as CheckDefinition;
  const node = d.AliasNode || row.node;
  const checks = await db.all<CheckRow>('SELECT * FROM catalog_checks WHERE node = ? AND ns IN (?, ?)', [node, row.ns, 'default']);
  const relevant = checks.filter((c) =>
    !(c.node === row.node && c.ns === row.ns && c.check_id === row.check_id) &&
    (c.service_id === '' ? c.ns === 'default' : d.AliasService !== undefined && c.service_id === d.AliasService && c.ns === row.ns));
  if (relevant.length === 0) return { status: 'passing', output: 'No checks found.' };
  const status = aggregatedStatus(relevant) === 'maintenance' ? 'critical' : aggregatedStatus(relevant);
  if (status === 'passing') return { status: 'passing', output: 'All checks passing.' };
  const failing = relevant.find((c) => c.status === status) ?? relevant.find((c) => c.status !== 'passing')!;
  return { status: status as ProbeResult['status'], output: `Aliased check ${JSON.stringify(failing.name)} failing: ${failing.output}` };
}

export class Checker {
  private readonly runners = new Map<string, Runner>();
  /** Results waiting to be written, by check. */
  private readonly pending = new Map<string, { runner: Runner; result: ProbeResult }>();
  private flushing?: Promise<void>;
  private refreshTimer?: NodeJS.Timeout;
  private refreshing?: Promise<void>;
  private lastIndex = -1;
  private lastOwned = '';
  private lastReap = 0;
  private stopped = false;
  private readonly deregisterMin = deregisterMinMs();

  constructor(private readonly engine: Engine) {}

  /** The checks running now (for tests and metrics). */
  get size(): number {
    return this.runners.size;
  }

  async start(): Promise<void> {
    await this.refresh();
    this.refreshTimer = setInterval(() => void this.refresh(), REFRESH_MS);
    this.refreshTimer.unref();
  }

  /** Stops every check and waits for the writes in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.refreshTimer);
    for (const runner of this.runners.values()) this.stopRunner(runner);
    this.runners.clear();
    await this.refreshing;
    await this.flushing;
  }

  /** Looks for changed checks and failed servers, starts and stops runners, reaps what stayed critical too long. */
  refresh(): Promise<void> {
    this.refreshing ??= this.doRefresh()
      .catch((err: unknown) => this.engine.logger.warn({ err }, 'catalog: the health checker could not refresh its checks'))
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async doRefresh(): Promise<void> {
    if (this.stopped) return;
    const now = this.engine.clock.now();
    const { index, owned } = await this.engine.storage.tx(async (db) => {
      const servers = await listServers(db);
      const { own, deputy, failed } = ownedNodes(this.engine, servers, now);
      return { index: await tablesIndex(db, ['nodes']), owned: `${own} ${deputy} ${failed.join(',')}` };
    }, { readOnly: true });
    if (index !== this.lastIndex || owned !== this.lastOwned) {
      const { rows, aliases } = await this.engine.storage.tx(async (db) => {
        const found = await runnableChecks(db, this.engine, now);
        const results = new Map<string, ProbeResult>();
        for (const row of found.filter(isAlias)) results.set(keyOf(row.node, row.ns, row.check_id), await aliasResult(db, row));
        return { rows: found, aliases: results };
      }, { readOnly: true });
      if (this.stopped) return;
      this.sync(rows, now);
      for (const [key, result] of aliases) {
        const runner = this.runners.get(key);
        if (runner) this.record(runner, result);
      }
      this.lastIndex = index;
      this.lastOwned = owned;
    }
    if (now - this.lastReap >= REAP_MS) {
      this.lastReap = now;
      await this.reap(now);
    }
  }

  /** Starts runners for new or changed checks, stops those of checks gone. */
  private sync(rows: readonly CheckRow[], now: number): void {
    const seen = new Set<string>();
    for (const row of rows) {
      const key = keyOf(row.node, row.ns, row.check_id);
      seen.add(key);
      const version = `${row.definition}\u0000${row.thresholds}`;
      const existing = this.runners.get(key);
      if (existing && existing.version === version) {
        // Someone else (a registration, another server) may have written it: what it holds now.
        if (!this.pending.has(key)) {
          existing.status = row.status;
          existing.output = row.output;
        }
        continue;
      }
      if (existing) this.stopRunner(existing);
      const definition = JSON.parse(row.definition) as CheckDefinition;
      const runner: Runner = {
        key,
        node: row.node,
        ns: row.ns,
        checkId: row.check_id,
        type: checkTypeOf(definition),
        definition,
        version,
        handler: new StatusHandler(JSON.parse(row.thresholds) as CheckThresholds),
        status: row.status,
        output: row.output,
        writtenAt: now,
        stopped: false,
      };
      this.runners.set(key, runner);
      const probe = PROBES[runner.type];
      if (!probe) continue; // alias: evaluated on refresh
      const intervalMs = Math.max(definition.Interval ?? 0, MIN_INTERVAL_NS) / 1e6;
      // The first run at a random point of the first interval, as the public service staggers them.
      this.schedule(runner, Math.random() * intervalMs, intervalMs);
    }
    for (const [key, runner] of this.runners) {
      if (seen.has(key)) continue;
      this.stopRunner(runner);
      this.runners.delete(key);
    }
  }

  private schedule(runner: Runner, delayMs: number, intervalMs: number): void {
    if (runner.stopped) return;
    runner.timer = setTimeout(() => {
      void this.runOnce(runner).finally(() => this.schedule(runner, intervalMs, intervalMs));
    }, delayMs);
    runner.timer.unref();
  }

  private async runOnce(runner: Runner): Promise<void> {
    const d = runner.definition;
    const timeoutMs = d.Timeout ? d.Timeout / 1e6 : DEFAULT_TIMEOUT_MS;
    // The agent's check_output_max_size (4 KiB) caps OutputMaxSize; a smaller one lowers it.
    const outputMax = d.OutputMaxSize && d.OutputMaxSize < OUTPUT_MAX_SIZE ? d.OutputMaxSize : OUTPUT_MAX_SIZE;
    let result: ProbeResult;
    try {
      result = await PROBES[runner.type]({ definition: d, timeoutMs, outputMax });
    } catch (err) {
      result = { status: 'critical', output: (err as Error).message };
    }
    if (runner.stopped) return;
    const recorded = runner.handler.next(result);
    if (recorded) this.record(runner, recorded);
  }

  private stopRunner(runner: Runner): void {
    runner.stopped = true;
    clearTimeout(runner.timer);
    this.pending.delete(runner.key);
  }

  /** Queues a result for writing if it changes the check: its status at once, its output alone at most every OUTPUT_UPDATE_MS. */
  private record(runner: Runner, result: ProbeResult): void {
    if (result.status === runner.status) {
      if (result.output === runner.output) {
        this.pending.delete(runner.key);
        return;
      }
      if (this.engine.clock.now() - runner.writtenAt < OUTPUT_UPDATE_MS) return;
    }
    this.pending.set(runner.key, { runner, result });
    this.flushing ??= this.flush().finally(() => (this.flushing = undefined));
  }

  /** Writes queued results, a batch per transaction, through the catalog's write path (blocking queries wake). */
  private async flush(): Promise<void> {
    // Results of the same turn go together.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.pending.size > 0) {
      const batch = [...this.pending.values()].slice(0, BATCH);
      for (const { runner } of batch) this.pending.delete(runner.key);
      const now = this.engine.clock.now();
      try {
        await writeAndNotify(this.engine, async (writes) => {
          for (const { runner, result } of batch) {
            const row = await getCheck(writes.db, runner.node, runner.ns, runner.checkId);
            // Changed or removed since it was probed: its new runner decides.
            if (!row || `${row.definition}\u0000${row.thresholds}` !== runner.version) continue;
            await setCheckStatus(writes, row, result.status, result.output, row.ttl_deadline, now);
          }
        });
        for (const { runner, result } of batch) {
          runner.status = result.status;
          runner.output = result.output;
          runner.writtenAt = now;
        }
      } catch (err) {
        this.engine.logger.warn({ err, checks: batch.length }, 'catalog: check results could not be written; the next run retries');
      }
    }
  }

  /**
   * DeregisterCriticalServiceAfter (the agent's reapServices): a service whose check of this server's
   * nodes stayed critical that long is removed with its checks. Checks of external nodes are not
   * reaped (the public service ignores it on catalog registrations).
   */
  private async reap(now: number): Promise<void> {
    const { own, failed } = ownedNodes(this.engine, await this.engine.storage.tx(listServers, { readOnly: true }), now);
    const nodes = [own, ...failed];
    const rows = await this.engine.storage.tx((db) => db.all<CheckRow>(
      `SELECT * FROM catalog_checks WHERE status = 'critical' AND service_id <> '' AND definition LIKE '%DeregisterCriticalServiceAfter%'
         AND node IN (${nodes.map(() => '?').join(', ')})`,
      nodes,
    ), { readOnly: true });
    const afterMs = (row: CheckRow) =>
      Math.max((JSON.parse(row.definition) as CheckDefinition).DeregisterCriticalServiceAfter ?? 0, this.deregisterMin * 1e6) / 1e6;
    const due = rows.filter((row) => row.critical_since === null || now - Number(row.critical_since) >= afterMs(row));
    if (due.length === 0) return;
    await writeAndNotify(this.engine, async (writes) => {
      for (const { node, ns, check_id: checkId } of due) {
        // Read again in the transaction: it may have passed or gone meanwhile.
        const row = await getCheck(writes.db, node, ns, checkId);
        if (!row || row.status !== 'critical') continue;
        if (row.critical_since === null) {
          // Critical since before its time was kept (an upgrade): counted from now on.
          await writes.db.run('UPDATE catalog_checks SET critical_since = ? WHERE node = ? AND ns = ? AND check_id = ?', [now, node, ns, checkId]);
        } else if (now - Number(row.critical_since) >= afterMs(row)) {
          this.engine.logger.info({ node, service: row.service_id, check: checkId }, 'catalog: removed a service critical for longer than its DeregisterCriticalServiceAfter');
          await deregister(writes, node, { ns, serviceId: row.service_id }, now);
        }
      }
    });
  }
}

const checkers = new WeakMap<Engine, Checker>();

/** Starts this server's checker (`hangar server`, its main thread only); stopped when the catalog API closes. */
export async function startChecker(engine: Engine): Promise<Checker> {
  let checker = checkers.get(engine);
  if (!checker) {
    checker = new Checker(engine);
    checkers.set(engine, checker);
    await checker.start();
    engine.logger.info({ checks: checker.size }, 'catalog: the health checker runs on this thread');
  }
  return checker;
}

/** Stops the checker of an engine, if it has one. */
export async function stopChecker(engine: Engine): Promise<void> {
  const checker = checkers.get(engine);
  checkers.delete(engine);
  await checker?.stop();
}
