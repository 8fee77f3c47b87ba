import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Engine } from './engine';
import { getSetting } from './root-token';

/** Periodic work of the server: expiry, revocation, rotation, removal. */
export interface BackgroundJob {
  /** Unique name; also the name of its lease. */
  readonly name: string;
  readonly intervalMs: number;
  /**
   * Does one round of work. It must find its work in storage (rows due by `engine.clock`), so a
   * restart resumes where the last process stopped, and do each piece in its own transaction.
   */
  run(engine: Engine): Promise<void>;
}

/**
 * Runs each job on one server at a time: before a round, a server takes the job's lease (a row in
 * `settings`, held for twice the interval); the others skip the round while it is held. With
 * several servers on one PostgreSQL, or several processes on one SQLite file, a job runs once.
 */
export class Scheduler {
  /** Who holds a lease, as `settings` shows it: the host and process id tell an operator which server runs a job. */
  readonly holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly engine: Engine,
    private readonly jobs: readonly BackgroundJob[],
  ) {}

  start(): void {
    for (const job of this.jobs) {
      const timer = setInterval(() => this.track(this.runIfLeader(job)), job.intervalMs);
      timer.unref();
      this.timers.push(timer);
    }
  }

  /** One round of every job whose lease this process gets (tests drive time with a manual clock). */
  async runOnce(): Promise<void> {
    for (const job of this.jobs) await this.runIfLeader(job);
  }

  /** Stops scheduling and waits for rounds in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    await Promise.all([...this.running]);
  }

  private track(round: Promise<void>): void {
    this.running.add(round);
    void round.finally(() => this.running.delete(round));
  }

  private async runIfLeader(job: BackgroundJob): Promise<void> {
    if (this.stopped) return;
    try {
      if (!(await this.takeLease(job))) return;
      await job.run(this.engine);
      this.engine.metrics?.observeJob(job.name, true);
    } catch (err) {
      this.engine.metrics?.observeJob(job.name, false);
      this.engine.logger.error({ err, job: job.name }, 'background job failed; it runs again next round');
    }
  }

  /**
   * A compare-and-set on the lease row: under PostgreSQL's READ COMMITTED two servers may both read
   * an expired (or missing) lease, but only one of them changes the row from what it read.
   */
  private takeLease(job: BackgroundJob): Promise<boolean> {
    const key = `lease:${job.name}`;
    return this.engine.storage.tx(async (db) => {
      const now = this.engine.clock.now();
      const current = await getSetting(db, key);
      const value = `${this.holder} ${now + 2 * job.intervalMs}`;
      if (current === undefined) {
        return (await db.run('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', [key, value])) === 1;
      }
      const [holder, until] = current.split(' ');
      if (holder !== this.holder && Number(until) > now) return false;
      return (await db.run('UPDATE settings SET value = ? WHERE name = ? AND value = ?', [value, key, current])) === 1;
    });
  }
}
