import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's `gc()`: a minor collection (a scavenge of the young generation) or a full one. */
export type Collector = (options: { type: 'minor' | 'major' }) => void;
let collector: Collector | null | undefined;

/**
 * V8's collector, exposed with `--expose-gc` set at run time to a context of this module's own (the
 * server's global scope gets no `gc`); null where V8 refuses the flag. For the few places where
 * Hangar knows better than V8's heuristics when memory became garbage: box file streams
 * (blobs/release.ts) and the server's start (cli/commands/server.ts).
 */
export function v8Collector(): Collector | null {
  if (collector === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      collector = runInNewContext('gc') as Collector;
    } catch {
      collector = null;
    }
  }
  return collector;
}
