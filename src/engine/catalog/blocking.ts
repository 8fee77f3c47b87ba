import type { Engine } from '../engine';
import { HangarError } from '../http/errors';
import { encodedReply } from '../http/json-body';
import { AfterCommit, Reply } from '../http/routes';
import type { Db } from '../storage';
import { allTableIndexes, Table, TABLES, TABLES_CHANNEL, tablesIndex } from './index-state';

/** What a blocking endpoint computes: its status and body at one moment. */
export interface QueryResult {
  readonly status: number;
  readonly body: unknown;
}

interface Snapshot extends QueryResult {
  readonly index: number;
}

/** A result as compared between two moments (the index is not part of it); only waits need it. */
const comparable = (result: QueryResult): string => JSON.stringify([result.status, result.body]);

type Compute = (db: Db) => Promise<QueryResult>;

/**
 * What a waiting client is known by: the request's socket, which emits 'close' when it goes away
 * (`destroyed` once it has: a client may leave before its request starts waiting).
 */
export type WaitingClient = Pick<NodeJS.EventEmitter, 'on' | 'removeListener'> & { readonly destroyed?: boolean };

/** The waiters of one client (a socket carries one request at a time, or a few pipelined). */
const WAITERS = Symbol('hangar.blockingWaiters');
type Client = WaitingClient & { [WAITERS]?: Waiter };

/** A client gone gets the group's last result: nobody reads it, and the waiter is freed. */
function onClientClose(this: Client): void {
  for (let waiter = this[WAITERS]; waiter; ) {
    const next = waiter.nextOfClient;
    waiter.done(waiter.group.last);
    waiter = next;
  }
}

function onWaitTimeout(waiter: Waiter): void {
  waiter.done();
}

type Render = (reply: Reply) => Reply;
type Headers = Readonly<Record<string, string>> | undefined;

/**
 * One waiting request. Ten thousand watchers of a key cost ten thousand of these, so it is one
 * object whose methods are shared, not a set of closures. It keeps its group, the comparable form of
 * its first result (its group's string while they agree), how to answer (the promise's functions,
 * and the render function and headers shared by all requests of its kind), its timer and its
 * client; not the request's transaction, context or input.
 */
class Waiter {
  private readonly timer: NodeJS.Timeout;
  private finished = false;
  /** The next waiter of the same client. */
  nextOfClient?: Waiter;

  constructor(
    private readonly owner: BlockingQueries,
    readonly group: Group,
    readonly seen: string,
    waitMs: number,
    private readonly client: Client | undefined,
    private readonly resolve: (reply: Reply) => void,
    private readonly reject: (err: unknown) => void,
    readonly render: Render,
    readonly headers: Headers,
  ) {
    // Consul adds up to wait/16 so that many clients do not all come back at the same moment; in
    // 64 steps, since Node keeps a list of timers for each distinct duration.
    this.timer = setTimeout(onWaitTimeout, waitMs + Math.floor((Math.floor(Math.random() * 64) / 64) * (waitMs / 16)), this);
    if (client) {
      this.nextOfClient = client[WAITERS];
      if (!this.nextOfClient) client.on('close', onClientClose);
      client[WAITERS] = this;
    }
    group.waiters.add(this);
    // Gone already (between the first read and the commit): its 'close' has been emitted.
    if (client?.destroyed) this.done(group.last);
  }

  /** Answers the waiter: with a changed result, with what the group read last (the client went away), or with a fresh read (time out). */
  done(snapshot?: Snapshot): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    this.forgetClient();
    this.owner.leave(this.group, this);
    if (snapshot) this.send(snapshot);
    else this.group.compute().then((fresh) => this.send(fresh), this.reject);
  }

  private send(snapshot: Snapshot): void {
    try {
      this.resolve(this.group.replyTo(snapshot, this));
    } catch (err) {
      this.reject(err);
    }
  }

  private forgetClient(): void {
    const client = this.client;
    if (!client) return;
    if (client[WAITERS] === this) {
      client[WAITERS] = this.nextOfClient;
    } else {
      let before = client[WAITERS];
      while (before && before.nextOfClient !== this) before = before.nextOfClient;
      if (before) before.nextOfClient = this.nextOfClient;
    }
    this.nextOfClient = undefined;
    if (!client[WAITERS]) client.removeListener('close', onClientClose);
  }
}

const unchanged: Render = (r) => r;

/**
 * Waiters of one query (same endpoint, input and caller): they share one recomputation per change,
 * so ten thousand clients watching one key cost one read per write, not ten thousand. They share
 * memory too: a waiter keeps only the comparable form of its first result, the same string as its
 * group's while they agree, and nothing of the request's transaction.
 */
class Group {
  readonly waiters = new Set<Waiter>();
  private running = false;
  private again = false;
  /** The group's latest result and its comparable form. */
  private latest: Snapshot;
  private latestSeen: string;
  /** The last reply made for the group's waiters, and what it was made of. */
  private answered?: { snapshot: Snapshot; render: Render; headers: Headers; reply: Reply };

  constructor(
    readonly key: string,
    readonly tables: readonly Table[],
    readonly compute: () => Promise<Snapshot>,
    private readonly onError: (err: unknown) => void,
    first: Snapshot,
  ) {
    this.latest = first;
    this.latestSeen = comparable(first);
  }

  /** The last result read for this group. */
  get last(): Snapshot {
    return this.latest;
  }

  /**
   * The reply to `snapshot` as `waiter` renders it, encoded once for all the waiters it wakes
   * together (a group's waiters share their render function and headers: both follow from the
   * query, which is part of the group's key).
   */
  replyTo(snapshot: Snapshot, waiter: { readonly render: Render; readonly headers: Headers }): Reply {
    const last = this.answered;
    if (last?.snapshot === snapshot && last.render === waiter.render && last.headers === waiter.headers) return last.reply;
    const rendered = encodedReply(waiter.render(reply(snapshot, waiter.headers)));
    this.answered = { snapshot, render: waiter.render, headers: waiter.headers, reply: rendered };
    return rendered;
  }

  /** `snapshot`'s comparable form: the group's own string when it is the same result. */
  seenOf(snapshot: Snapshot): string {
    const seen = comparable(snapshot);
    return seen === this.latestSeen ? this.latestSeen : seen;
  }

  /** Recomputes and wakes the waiters whose result changed; coalesces notifications meanwhile. */
  refresh(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.compute()
      .then((snapshot) => {
        const seen = comparable(snapshot);
        this.latest = snapshot;
        this.latestSeen = seen;
        for (const waiter of [...this.waiters]) if (waiter.seen !== seen) waiter.done(snapshot);
      }, this.onError)
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          this.refresh();
        }
      });
  }
}

const POLL_MS = 250;
/** The Peers topic on which a thread tells the others which tables its writes changed. */
const TABLES_TOPIC = 'catalog-tables';

/**
 * Blocking queries of one engine: an in-process index of waiting requests by table. A write of
 * this process notifies the tables it touched once its transaction committed. Writes of other
 * processes: on PostgreSQL (several servers on one database) each committed index bump sends a
 * NOTIFY that one listening connection per server turns into the same notification (its own writes
 * come back too: one more recomputation, which finds nothing new); the threads of one server
 * (`--workers`) tell each other at once (Peers); on SQLite, writes of other processes (the CLI on
 * the same file) are noticed by polling the small catalog_tables row set while anyone waits.
 */
export class BlockingQueries {
  private readonly groups = new Map<string, Group>();
  private readonly byTable = new Map<Table, Set<Group>>();
  private epoch = 0;
  private poller?: NodeJS.Timeout;
  private lastSeen?: Map<Table, number>;
  /** Stops listening (PostgreSQL); listening starts with the first waiter and lasts until close. */
  private unlisten?: () => void;
  private closing = false;
  /** Tables this thread's writes changed that the server's other threads have not been told of yet. */
  private untold?: Set<Table>;

  constructor(private readonly engine: Engine) {
    engine.peers?.on(TABLES_TOPIC, (tables) => this.wake(tables as Table[]));
  }

  /** Tables changed (committed by this engine): the waiters on them, here and in the server's other threads, recompute. */
  notify(tables: Iterable<Table>): void {
    const list = [...tables];
    // On PostgreSQL every thread hears the NOTIFY already.
    if (!this.engine.storage.listen && this.engine.peers) this.tellPeers(list);
    this.wake(list);
  }

  /**
   * The other threads hear of a turn's writes in one message, sent once the event loop moves on: a
   * group commit ends up to 32 writes in one turn, each of which sent a message of its own (a
   * structured clone, and a wake-up of every other thread).
   */
  private tellPeers(tables: readonly Table[]): void {
    if (!this.untold) {
      const untold = (this.untold = new Set());
      setImmediate(() => {
        this.untold = undefined;
        this.engine.peers?.publish(TABLES_TOPIC, [...untold]);
      });
    }
    for (const table of tables) this.untold.add(table);
  }

  private wake(tables: Iterable<Table>): void {
    this.epoch++;
    const seen = new Set<Group>();
    for (const table of tables) for (const group of this.byTable.get(table) ?? []) seen.add(group);
    for (const group of seen) group.refresh();
  }

  /** Number of requests waiting (for tests and benchmarks). */
  get waiting(): number {
    let n = 0;
    for (const group of this.groups.values()) n += group.waiters.size;
    return n;
  }

  /**
   * Answers a blocking query: at once without `index`, when the index moved past it, or when the
   * result differs from what it was when the wait began; otherwise when `waitMs` ran out. The first
   * result is read in `db`, the request's transaction (the one that authenticated the caller); a
   * wait goes on after that transaction ended (an AfterCommit), each recomputation in its own.
   */
  async run(options: {
    db: Db;
    /** Which waiters share recomputations (made only when the query waits). */
    key: () => string;
    tables: readonly Table[];
    minIndex: number;
    waitMs: number;
    compute: Compute;
    /** The client's socket: a client gone stops waiting. */
    client?: WaitingClient;
    /** Headers of every answer (one object for all requests of a kind: a waiter keeps it). */
    headers?: Readonly<Record<string, string>>;
    /** Turns the answer into the reply sent (the KV store's raw values). */
    render?: (reply: Reply) => Reply;
  }): Promise<Reply | AfterCommit> {
    const { tables, waitMs, compute, client, headers } = options;
    const render = options.render ?? unchanged;
    // Taken before the first read: a write announced after it makes the waiters look again.
    const epoch = this.epoch;
    const first = await snapshotIn(options.db, tables, compute);
    if (options.minIndex === 0 || first.index > options.minIndex || this.closing) return render(reply(first, headers));
    // What the wait keeps is named here, not `options`, and nothing of this scope outlives the
    // AfterCommit: the waiter holds neither the request's transaction nor its context, and of its
    // first result only the comparable form. It joins its group once the transaction committed, as
    // a failed one never waits.
    const key = options.key();
    let pending: Snapshot | undefined = first;
    return new AfterCommit(() => {
      const start = pending!;
      pending = undefined;
      const group = this.join(key, tables, compute, start);
      return new Promise<Reply>((resolve, reject) => {
        new Waiter(this, group, group.seenOf(start), waitMs, client as Client | undefined, resolve, reject, render, headers);
        // A write that committed while the first snapshot was taken would otherwise go unnoticed.
        if (this.epoch !== epoch) group.refresh();
      });
    });
  }

  /** Wakes every waiter (the server is shutting down) and stops polling or listening. */
  close(): void {
    this.closing = true;
    for (const group of [...this.groups.values()]) for (const waiter of [...group.waiters]) waiter.done();
    this.stopPolling();
    this.unlisten?.();
    this.unlisten = undefined;
  }

  private snapshot(tables: readonly Table[], compute: Compute): Promise<Snapshot> {
    return this.engine.storage.tx((db) => snapshotIn(db, tables, compute), { readOnly: true });
  }

  /** The group of `key`, made for its first waiter (whose `compute` it keeps, in a scope of its own). */
  private join(key: string, tables: readonly Table[], compute: Compute, first: Snapshot): Group {
    let group = this.groups.get(key);
    if (!group) {
      group = new Group(key, tables, () => this.snapshot(tables, compute), (err) => this.engine.logger.error({ err }, 'blocking query refresh failed'), first);
      this.groups.set(key, group);
      for (const table of tables) {
        let set = this.byTable.get(table);
        if (!set) this.byTable.set(table, (set = new Set()));
        set.add(group);
      }
      this.watchOtherProcesses();
    }
    return group;
  }

  /** A waiter answered: out of its group, and the group out of the index once empty. */
  leave(group: Group, waiter: Waiter): void {
    group.waiters.delete(waiter);
    if (group.waiters.size > 0 || this.groups.get(group.key) !== group) return;
    this.groups.delete(group.key);
    for (const table of group.tables) this.byTable.get(table)?.delete(group);
    if (this.groups.size === 0) this.stopPolling();
  }

  /** Notices writes of other processes while anyone waits: LISTEN where the storage can, else polling. */
  private watchOtherProcesses(): void {
    if (this.poller || this.unlisten || this.closing) return;
    const { storage } = this.engine;
    if (storage.listen) {
      // After a gap (the first LISTEN included) every group looks again: a write committed
      // meanwhile sent a message that nobody received.
      this.unlisten = storage.listen(
        TABLES_CHANNEL,
        (table) => {
          if ((TABLES as readonly string[]).includes(table)) this.wake([table as Table]);
        },
        () => this.wake(TABLES),
      );
      return;
    }
    this.poller = setInterval(() => void this.poll(), POLL_MS);
    this.poller.unref();
  }

  private stopPolling(): void {
    if (this.poller) clearInterval(this.poller);
    this.poller = undefined;
    this.lastSeen = undefined;
  }

  private async poll(): Promise<void> {
    try {
      const now = await this.engine.storage.tx(allTableIndexes, { readOnly: true });
      const before = this.lastSeen;
      this.lastSeen = now;
      // The first round has nothing to compare with: every group looks once, so that a write of
      // another process between a waiter's first snapshot and this round is not missed.
      const changed = [...now].filter(([table, idx]) => before?.get(table) !== idx).map(([table]) => table);
      if (changed.length > 0) this.wake(changed);
    } catch (err) {
      if (!this.closing) this.engine.logger.warn({ err }, 'blocking query poll failed');
    }
  }
}

/** A query's result and the index of its tables, read in one transaction. */
async function snapshotIn(db: Db, tables: readonly Table[], compute: Compute): Promise<Snapshot> {
  // An error (the object is gone, access was lost) is a result too: it answers the waiter.
  const result = await compute(db).catch((err: unknown) => {
    if (err instanceof HangarError) return { status: err.status, body: err.messages.join('\n') };
    throw err;
  });
  const index = await tablesIndex(db, tables);
  return { ...result, index };
}

/** The index headers a blocking endpoint sends: the spec's name and the one Consul clients read. */
export function indexHeaders(index: number): Record<string, string> {
  const value = String(Math.max(1, index));
  return { 'x-catalog-index': value, 'x-consul-index': value, 'x-consul-knownleader': 'true', 'x-consul-lastcontact': '0' };
}

function reply(snapshot: Snapshot, headers: Readonly<Record<string, string>> = {}): Reply {
  const type: Record<string, string> = snapshot.status >= 400 ? { 'content-type': 'text/plain; charset=utf-8' } : {};
  return new Reply(snapshot.status, snapshot.body, { ...headers, ...type, ...indexHeaders(snapshot.index) });
}
