import type { Socket } from 'node:net';
import { z } from 'zod';
import { Expression, SelectorError } from './acl/selector';
import type { QueryResult } from './blocking';
import type { Table } from './index-state';
import { actorOf, badRequest, CatalogContext, CommonQuery, parseDuration } from './route';
import { AfterCommit, Reply } from '../http/routes';
import type { Db } from '../storage';
import { runtimeOf } from './runtime';

const DEFAULT_WAIT_MS = 5 * 60_000;
const MAX_WAIT_MS = 10 * 60_000;

/** The consistency header of each mode: one object per mode, shared by the waiting requests that keep it. */
const CONSISTENCY = {
  stale: Object.freeze({ 'x-consul-effective-consistency': 'stale' }),
  consistent: Object.freeze({ 'x-consul-effective-consistency': 'consistent' }),
  leader: Object.freeze({ 'x-consul-effective-consistency': 'leader' }),
};

/**
 * A blocking endpoint's answer (`?index=`, `?wait=`): see BlockingQueries.run. The first result is
 * read in the request's transaction (`ctx.db`: the route's transaction is 'read'); waiters of the
 * same endpoint, input and token share their recomputations. `render` shapes the reply sent.
 */
export function blockingQuery(
  ctx: CatalogContext,
  query: CommonQuery,
  tables: readonly Table[],
  compute: (db: Db) => Promise<QueryResult>,
  render?: (reply: Reply) => Reply,
): Promise<Reply | AfterCommit> {
  let waitMs = DEFAULT_WAIT_MS;
  if (query.wait !== undefined) {
    const ns = parseDuration(query.wait);
    if (ns === undefined || ns < 0) throw badRequest('Invalid wait time');
    waitMs = Math.min(MAX_WAIT_MS, Math.max(1, Math.round(ns / 1e6)));
  }
  const req = ctx.request;
  return runtimeOf(ctx.engine).blocking.run({
    db: ctx.db,
    key: () => {
      const { index: _index, wait: _wait, ...rest } = req.query as Record<string, unknown>;
      return JSON.stringify([req.method, req.routeOptions.url, req.params, rest, actorOf(ctx).accessorId]);
    },
    tables,
    minIndex: query.index ?? 0,
    waitMs,
    compute,
    render,
    headers: CONSISTENCY[query.stale !== undefined ? 'stale' : query.consistent !== undefined ? 'consistent' : 'leader'],
    client: (req.raw.socket as Socket | null) ?? undefined,
  });
}

/**
 * The `?filter=` of a list endpoint (the public service's bexpr language), parsed once per request:
 * a function keeping the items it matches. A malformed expression is a 400 with its reason.
 */
export function listFilter(filter: string | undefined): <T>(items: readonly T[]) => T[] {
  if (filter === undefined || filter.trim() === '') return (items) => [...items];
  let expression: Expression;
  try {
    expression = Expression.parse(filter);
  } catch (err) {
    if (err instanceof SelectorError) throw badRequest(`Failed to create boolean expression evaluator: ${err.message}`);
    throw err;
  }
  return (items) => items.filter((item) => expression.matches(item));
}

/** `?node-meta=key:value` (repeatable): pairs a node's Meta must all have. */
export const NodeMetaQuery = z
  .union([z.string(), z.array(z.string())])
  .transform((value) => (Array.isArray(value) ? value : [value]).map((pair) => {
    const at = pair.indexOf(':');
    return at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
  }))
  .optional();

/** Whether a node's meta (JSON text) has every `node-meta` pair. */
export function nodeMetaMatches(metaJson: string, pairs: readonly string[][] | undefined): boolean {
  if (!pairs?.length) return true;
  const meta = JSON.parse(metaJson) as Record<string, string>;
  return pairs.every(([k, v]) => meta[k] === v);
}

/** A 200 JSON result. */
export const ok = (body: unknown): QueryResult => ({ status: 200, body });
