import type { BackgroundJob } from '../background';
import { markedNamespaces, removeNamespace } from './namespaces';
import { writeAndNotify } from './runtime';
import { expireSessions } from './sessions';

/** The catalog service's periodic work, run by `hangar server` (see engine/background.ts). */
export const CATALOG_JOBS: readonly BackgroundJob[] = [
  {
    // Sessions whose TTL ran out without a renewal are invalidated within a second of their
    // deadline (the spec allows up to twice the TTL), by the engine clock.
    name: 'catalog.session-expiry',
    intervalMs: 1000,
    async run(engine) {
      while ((await writeAndNotify(engine, (writes) => expireSessions(writes, engine.clock.now()))) === 500);
    },
  },
  {
    // A deleted namespace is only marked by the request; its contents and then itself go here.
    name: 'catalog.namespace-removal',
    intervalMs: 5000,
    async run(engine) {
      const names = await engine.storage.tx(markedNamespaces, { readOnly: true });
      for (const name of names) await writeAndNotify(engine, (writes) => removeNamespace(writes, name, engine.clock.now()));
    },
  },
];
