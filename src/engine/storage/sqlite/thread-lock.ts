import { threadId } from 'node:worker_threads';

/** Atomics.waitAsync (ES2024; the project's lib is ES2022). */
type WaitAsync = (cell: Int32Array, index: number, value: number) => { async: false } | { async: true; value: Promise<unknown> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

/**
 * The SQLite write lock of the threads of one server (`hangar server --workers N`), in shared
 * memory. SQLite itself would make a second thread's BEGIN IMMEDIATE wait in its busy handler,
 * which sleeps (1 ms, 2 ms, 5 ms…) and blocks that thread's event loop meanwhile; waiting here is
 * a promise, so the thread goes on serving reads, and the holder's release wakes the next at once.
 *
 * The cell holds 0 when free, else the holder's thread id + 1, so that the thread that sees a
 * sibling die can take back a lock it held (`releaseHeldBy`).
 */
export class ThreadLock {
  private readonly cell: Int32Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(4)) {
    this.cell = new Int32Array(buffer, 0, 1);
  }

  async acquire(): Promise<void> {
    const mine = threadId + 1;
    for (;;) {
      const holder = Atomics.compareExchange(this.cell, 0, 0, mine);
      if (holder === 0) return;
      const wait = waitAsync(this.cell, 0, holder);
      if (wait.async) await wait.value;
    }
  }

  release(): void {
    Atomics.store(this.cell, 0, 0);
    Atomics.notify(this.cell, 0, 1);
  }

  /** Frees the lock if the thread `id` (gone) held it. */
  releaseHeldBy(id: number): void {
    if (Atomics.compareExchange(this.cell, 0, id + 1, 0) === id + 1) Atomics.notify(this.cell, 0, 1);
  }
}
