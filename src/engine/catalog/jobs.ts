import type { BackgroundJob } from '../background';
import { expireTtlChecks } from './agent';
import { markedNamespaces, removeNamespace } from './namespaces';
import { parseDuration } from './route';
import { writeAndNotify } from './runtime';
import { DEAD_AFTER_MS, markDeadServers } from './servers';
import { expireSessions } from './sessions';

/**
 * How often sessions are checked for an expired TTL: HANGAR_CATALOG_SESSION_CHECK_INTERVAL, a
 * duration between 100ms and 1m (default 1s). A session is invalidated at most this long after its
 * deadline, well within the spec's twice the TTL (the minimum TTL is 10s).
 */
export function sessionCheckIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.HANGAR_CATALOG_SESSION_CHECK_INTERVAL;
  if (text === undefined || text === '') return 1000;
  const ns = parseDuration(text);
  if (ns === undefined || ns < 100e6 || ns > 60e9) {
    throw new Error(`HANGAR_CATALOG_SESSION_CHECK_INTERVAL "${text}" is invalid: use a duration between 100ms and 1m, such as "1s" or "500ms"`);
  }
  return Math.round(ns / 1e6);
}

/** The catalog service's periodic work, run by `hangar server` (see engine/background.ts). */
export const CATALOG_JOBS: readonly BackgroundJob[] = [
  {
    // Sessions whose TTL ran out without a renewal are invalidated within one interval of their
    // deadline (the spec allows up to twice the TTL), by the engine clock.
    name: 'catalog.session-expiry',
    intervalMs: sessionCheckIntervalMs(),
    async run(engine) {
      while ((await writeAndNotify(engine, (writes) => expireSessions(writes, engine.clock.now()))) === 500);
    },
  },
  {
    // TTL checks not updated within their TTL turn critical ("TTL expired"), by the engine clock,
    // within one interval of their deadline.
    name: 'catalog.check-ttl',
    intervalMs: sessionCheckIntervalMs(),
    async run(engine) {
      while ((await writeAndNotify(engine, (writes) => expireTtlChecks(writes, engine.clock.now()))) === 500);
    },
  },
  {
    // A server that stopped beating is failed: its serfHealth check turns critical (sessions on it end).
    name: 'catalog.server-health',
    intervalMs: DEAD_AFTER_MS / 3,
    async run(engine) {
      await writeAndNotify(engine, (writes) => markDeadServers(writes, engine.clock.now()));
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
