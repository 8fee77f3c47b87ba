import { BoundedMap } from '../bounded-map';
import type { Engine } from '../engine';
import type { Db } from '../storage';
import type { Authorizer } from './acl/authorizer';
import { BlockingQueries } from './blocking';
import { CATALOG_WRITES, Table, Writes } from './index-state';

/** What the catalog keeps in memory per engine: waiting requests and writes not yet announced. */
export interface CatalogRuntime {
  readonly blocking: BlockingQueries;
  /** Tables written by requests in flight, announced to waiters once the request's transaction committed. */
  readonly pending: Map<string, Set<Table>>;
  /** Authorizers of the tokens of recent requests, by token version and ACL indexes (acl/store.ts). */
  readonly authorizers: Map<string, Authorizer>;
  /** The server's heartbeat (servers.ts), stopped when the catalog API closes. */
  heartbeat?: NodeJS.Timeout;
}

/** Authorizers kept per engine: one per token in use (every ACL change makes new keys, so bounded). */
export const AUTHORIZERS_MAX = 4096;

const runtimes = new WeakMap<Engine, CatalogRuntime>();

export function runtimeOf(engine: Engine): CatalogRuntime {
  let runtime = runtimes.get(engine);
  if (!runtime) {
    runtime = { blocking: new BlockingQueries(engine), pending: new Map(), authorizers: new BoundedMap(AUTHORIZERS_MAX) };
    runtimes.set(engine, runtime);
  }
  return runtime;
}

/** SQLite runs one write transaction at a time (BEGIN IMMEDIATE, and one connection per server); PostgreSQL many. */
const serializesWrites = (engine: Engine): boolean => engine.storage.dialect === 'sqlite';

/** The writes of a request; the API announces the tables they touched after the commit. */
export function requestWrites(ctx: { engine: Engine; db: Db; requestId: string }): Writes {
  const pending = runtimeOf(ctx.engine).pending;
  let touched = pending.get(ctx.requestId);
  if (!touched) pending.set(ctx.requestId, (touched = new Set()));
  return new Writes(ctx.db, touched, serializesWrites(ctx.engine));
}

/** Runs background work in its own transaction and announces what it wrote. */
export async function writeAndNotify<T>(engine: Engine, fn: (writes: Writes) => Promise<T>): Promise<T> {
  const touched = new Set<Table>();
  const result = await engine.storage.tx((db) => fn(new Writes(db, touched, serializesWrites(engine))), { lane: CATALOG_WRITES });
  if (touched.size > 0) runtimeOf(engine).blocking.notify(touched);
  return result;
}
