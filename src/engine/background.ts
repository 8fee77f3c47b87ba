import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Engine } from './engine';
import { getSetting } from './settings';

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

/** How long a process that gives its leases back waits for one held by another process. */
const RELEASE_WAIT_MS = 2000;
/** Marks a lease taken by such a process. */
const SHORT_LIVED = 'once';

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

  /**
   * One round of every job whose lease this process gets (tests drive time with a manual clock).
   * With `releaseLeases`, each lease is given back after its round, so that the next short-lived
   * process (the CLI's embedded mode runs one round per command) need not wait for it to lapse.
   */
  async runOnce(options: { readonly releaseLeases?: boolean } = {}): Promise<void> {
    for (const job of this.jobs) await this.runIfLeader(job, options.releaseLeases === true);
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

  private async runIfLeader(job: BackgroundJob, release = false): Promise<void> {
    if (this.stopped) return;
    let lease: string | undefined;
    try {
      let attempt = await this.takeLease(job, release);
      // A short-lived process (release mode) whose lease is held by another such process waits a
      // little for it to be given back rather than skip work its command may depend on; a lease
      // held by a server is left to the server.
      for (let waited = 0; release && !attempt.taken && attempt.heldByShortLived && waited < RELEASE_WAIT_MS; waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        attempt = await this.takeLease(job, release);
      }
      lease = attempt.taken;
      if (!lease) return;
      await job.run(this.engine);
      this.engine.metrics?.observeJob(job.name, true);
    } catch (err) {
      this.engine.metrics?.observeJob(job.name, false);
      this.engine.logger.error({ err, job: job.name }, 'background job failed; it runs again next round');
    } finally {
      if (release && lease) await this.releaseLease(job, lease);
    }
  }

  /** Gives a lease back (if still held as taken): the next process may run the job at once. */
  private async releaseLease(job: BackgroundJob, taken: string): Promise<void> {
    await this.engine.storage.tx((db) => db.run('UPDATE settings SET value = ? WHERE name = ? AND value = ?', [`${this.holder} 0`, `lease:${job.name}`, taken]));
  }

  /**
   * A compare-and-set on the lease row: under PostgreSQL's READ COMMITTED two servers may both read
   * an expired (or missing) lease, but only one of them changes the row from what it read.
   */
  /**
   * `taken`: the lease's new value when this process got it. `heldByShortLived`: the lease is held
   * by a process that gives it back after one round (its value ends with SHORT_LIVED).
   */
  private takeLease(job: BackgroundJob, shortLived: boolean): Promise<{ taken?: string; heldByShortLived?: boolean }> {
    const key = `lease:${job.name}`;
    return this.engine.storage.tx(async (db) => {
      const now = this.engine.clock.now();
      const current = await getSetting(db, key);
      const value = `${this.holder} ${now + 2 * job.intervalMs}${shortLived ? ` ${SHORT_LIVED}` : ''}`;
      const won = (changed: number) => (changed === 1 ? { taken: value } : {});
      if (current === undefined) {
        return won(await db.run('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', [key, value]));
      }
      const [holder, until, mark] = current.split(' ');
      if (holder !== this.holder && Number(until) > now) return { heldByShortLived: mark === SHORT_LIVED };
      return won(await db.run('UPDATE settings SET value = ? WHERE name = ? AND value = ?', [value, key, current]));
    });
  }
}
