import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Engine } from '../engine';
import type { Db } from '../storage';

export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a handler knows about the request beyond its validated input. */
export interface RequestContext<Actor> {
  readonly engine: Engine;
  /** The request's transaction: every write of one request commits or rolls back together. */
  readonly db: Db;
  /** The authenticated caller, or undefined for an anonymous request. */
  readonly actor: Actor | undefined;
  readonly requestId: string;
  /** Scheme, host and port the client used, for URLs in responses. */
  readonly baseUrl: string;
  /** The engine clock's current time in epoch milliseconds. */
  readonly now: number;
  /** The raw request, for the few handlers that read headers (Range) or the method (HEAD). */
  readonly request: FastifyRequest;
}

/** The `db` where no transaction is open: code that opens its own transactions gets this. */
export const NO_TRANSACTION: Db = {
  all: () => Promise.reject(new Error('this route opens its own transactions')),
  get: () => Promise.reject(new Error('this route opens its own transactions')),
  run: () => Promise.reject(new Error('this route opens its own transactions')),
};

/** A handler may return a body (sent as 200 JSON) or a Reply for another status or no body. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body?: unknown,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}

/**
 * A handler's answer to finish after its transaction committed, for what must not hold the
 * transaction open (a blocking query's wait): the API awaits `next` outside the transaction and
 * sends what it resolves to.
 */
export class AfterCommit {
  constructor(readonly next: () => Promise<unknown>) {}
}

export interface Route<Actor, Permission, P = unknown, Q = unknown, B = unknown> {
  readonly method: Method | readonly Method[];
  /** Fastify path syntax (`/api/v1/box/:username/:name`). */
  readonly path: string;
  readonly params?: z.ZodType<P>;
  readonly query?: z.ZodType<Q>;
  readonly body?: z.ZodType<B>;
  /** Who may call it; each API decides what its permissions mean. */
  readonly permission: Permission;
  /**
   * The request's transaction: 'write' (the default), 'read' (read-only), or 'none' for handlers
   * that do slow work (password hashing, streaming) and open short transactions themselves through
   * `ctx.engine.storage`; their `ctx.db` is then a short read-only transaction used for authentication.
   * A handler in a transaction may return an `AfterCommit` to go on once it ended.
   */
  readonly transaction?: 'write' | 'read' | 'none';
  /**
   * `false`: the caller is not resolved, so a token sent is not even looked up, and no transaction
   * is opened (the handler reads nothing): for what the public service answers without any ACL
   * check (the catalog's status endpoints).
   */
  readonly authenticate?: false;
  /**
   * The body is not parsed: the handler receives the request stream as `body`, whatever its
   * Content-Type (except JSON) and without the JSON size limit (box image uploads).
   */
  readonly stream?: boolean;
  readonly handler: (input: { params: P; query: Q; body: B }, ctx: RequestContext<Actor>) => Promise<unknown>;
}

/** Identity function that lets TypeScript infer a route's input types from its schemas. */
export function route<Actor, Permission>() {
  return <P = unknown, Q = unknown, B = unknown>(
    r: Route<Actor, Permission, P, Q, B>,
  ): Route<Actor, Permission, unknown, unknown, unknown> => r as Route<Actor, Permission, unknown, unknown, unknown>;
}
