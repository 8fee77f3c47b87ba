import { v8Collector } from '../collector';

/**
 * Box files stream through the server in chunks, and each chunk is a buffer outside V8's heap (a
 * copy of the socket's bytes on upload, a file read on download) held by a small object inside it.
 * V8 schedules its collections by what it allocates inside the heap, so a transfer's spent buffers
 * waited for the full collection V8 starts once 64 MiB of memory outside the heap has piled up: RSS
 * rose by that much during every transfer, and those full collections cost more CPU than the
 * transfer's own work. A minor collection (a scavenge of the young generation, where the chunks'
 * objects still are) every RELEASE_STEP bytes frees the buffers of the chunks already passed on.
 * docs/performance.md has the measurements.
 */
export const RELEASE_STEP = 8 * 1024 * 1024;

let requested = 0;

/**
 * How many collections the counters have run so far. The tests read it: V8's own reports of its
 * collections (PerformanceObserver) may merge or lose one on a busy machine.
 */
export const releasesRun = (): number => requested;

/**
 * A counter for one stream's chunks: each time the bytes counted pass a multiple of RELEASE_STEP
 * it runs a minor collection (about half a millisecond with the server's young generation).
 */
export function releaseAsStreamed(): (bytes: number) => void {
  let streamed = 0;
  return (bytes) => {
    const step = Math.floor(streamed / RELEASE_STEP);
    streamed += bytes;
    if (Math.floor(streamed / RELEASE_STEP) !== step) {
      requested++;
      v8Collector()?.({ type: 'minor' });
    }
  };
}
