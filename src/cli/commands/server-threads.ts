import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { Logger } from '../../engine/logger';
import { ThreadLock } from '../../engine/storage/sqlite/thread-lock';
import { isSingleExecutable } from '../runtime-flags';
import { UsageError } from '../usage';

/**
 * `hangar server --workers N`: the main thread and N - 1 worker threads each run an engine of their
 * own (connections, caches, listeners on the same ports with SO_REUSEPORT) on the same data; the
 * kernel spreads connections among them. What they share is passed here: the data directory, the
 * dev root token, the listen addresses as the main thread bound them (port 0 resolved), the SQLite
 * write lock and the name of the channel on which they tell each other things (engine/peers.ts).
 * Background jobs and start-up chores run in the main thread only.
 */
export interface ThreadShared {
  readonly count: number;
  readonly channel: string;
  readonly writeLock: SharedArrayBuffer;
}

export interface ThreadData extends ThreadShared {
  readonly index: number;
  readonly dataDir: string;
  readonly devRootToken?: string;
  readonly addresses: Readonly<Record<'registry' | 'secrets' | 'catalog', string>>;
}

const MAX_WORKERS = 64;
/** How long a worker thread that died waits before it starts again, so that a crash loop does not spin. */
const RESTART_DELAY_MS = 1000;

/** `--workers`: a count, or `auto` for one per core the process may use. */
export function workerCount(value: string | undefined): number {
  if (value === undefined) return 1;
  if (value === 'auto') return Math.min(availableParallelism(), MAX_WORKERS);
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > MAX_WORKERS) throw new UsageError(`--workers must be auto or a number from 1 to ${MAX_WORKERS}, not "${value}"`);
  return n;
}

export function newThreadShared(count: number): ThreadShared | undefined {
  return count > 1 ? { count, channel: `hangar-${randomUUID()}`, writeLock: new SharedArrayBuffer(4) } : undefined;
}

/** What the main thread gave this worker thread; undefined in the main thread (and in any other thread). */
export function threadData(): ThreadData | undefined {
  if (isMainThread) return undefined;
  return (workerData as { hangarServerThread?: ThreadData } | null)?.hangarServerThread;
}

/**
 * In a worker thread: tells the main thread it is listening, runs `reload` when the main thread
 * passes on a SIGHUP, and resolves when told to stop.
 */
export function serveInThread(reload: () => void): Promise<void> {
  parentPort!.postMessage({ ready: true });
  return new Promise((done) => {
    const onMessage = (message: { stop?: boolean; reload?: boolean }) => {
      if (message.reload) return reload();
      parentPort!.off('message', onMessage);
      done();
    };
    parentPort!.on('message', onMessage);
  });
}

/**
 * What a worker thread runs: by default the same script and command as this thread (the bundled
 * CLI, or the sources under ts-node, whose loader the thread inherits with execArgv).
 */
export interface ThreadScript {
  readonly path: string;
  readonly argv: readonly string[];
  /** The script's source, run instead of the file at `path` (the single executable's CLI has no file). */
  readonly source?: string;
}

/**
 * This CLI. In the single-file `hangar` (scripts/build-executable) the script is inside the executable,
 * which also carries it as an asset for the worker threads to run.
 */
function thisCli(): ThreadScript {
  const argv = process.argv.slice(2);
  if (!isSingleExecutable()) return { path: resolve(process.argv[1]), argv };
  const sea = require('node:sea') as { getAsset(key: string, encoding: string): string };
  return { path: process.execPath, argv, source: sea.getAsset('hangar-cli.cjs', 'utf8') };
}

/** The worker threads of a server, started by its main thread once it listens. */
export class ServerThreads {
  /** Starts threads 1..count-1 and resolves when all listen; rejects (and stops those started) if one fails to. */
  static async start(data: Omit<ThreadData, 'index'>, logger: Logger, script: ThreadScript = thisCli()): Promise<ServerThreads> {
    const threads = new ServerThreads(data, logger, script);
    try {
      await Promise.all(Array.from({ length: data.count - 1 }, (_, i) => threads.spawn(i + 1)));
    } catch (err) {
      await threads.stop();
      throw err;
    }
    return threads;
  }

  private readonly workers = new Map<number, Worker>();
  /** The threads' SQLite write lock, to free if a thread dies holding it. */
  private readonly writeLock: ThreadLock;
  private stopping = false;

  private constructor(
    private readonly data: Omit<ThreadData, 'index'>,
    private readonly logger: Logger,
    private readonly script: ThreadScript,
  ) {
    this.writeLock = new ThreadLock(data.writeLock);
  }

  /** Tells every worker thread to finish its requests and close; resolves when all exited. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      [...this.workers.values()].map((worker) => {
        const exited = new Promise((done) => worker.once('exit', done));
        worker.postMessage({ stop: true });
        return exited;
      }),
    );
  }

  /** Passes a SIGHUP on: each worker thread reloads what the main thread reloads (its listeners' certificates). */
  reload(): void {
    for (const worker of this.workers.values()) worker.postMessage({ reload: true });
  }

  private spawn(index: number): Promise<void> {
    const worker = new Worker(this.script.source ?? this.script.path, {
      eval: this.script.source !== undefined,
      argv: [...this.script.argv],
      workerData: { hangarServerThread: { ...this.data, index } satisfies ThreadData },
    });
    this.workers.set(index, worker);
    // Read now: once the thread has exited, worker.threadId is -1.
    const threadId = worker.threadId;
    return new Promise((ready, failed) => {
      let listening = false;
      worker.on('message', (message: { ready?: boolean }) => {
        if (message.ready && !listening) {
          listening = true;
          ready();
        }
      });
      worker.on('error', (err) => {
        if (listening) this.logger.error({ err, thread: index }, 'a worker thread failed');
        else failed(err);
      });
      worker.on('exit', (code) => {
        if (this.workers.get(index) === worker) this.workers.delete(index);
        this.writeLock.releaseHeldBy(threadId);
        if (!listening) {
          failed(new Error(`worker thread ${index} exited with code ${code} before it listened`));
          return;
        }
        if (this.stopping) return;
        this.logger.error({ thread: index, code }, 'a worker thread exited; starting it again');
        setTimeout(() => {
          if (this.stopping) return;
          this.spawn(index).catch((err: unknown) => this.logger.error({ err, thread: index }, 'a worker thread did not start again'));
        }, RESTART_DELAY_MS).unref();
      });
    });
  }
}
