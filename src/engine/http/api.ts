import { randomUUID } from 'node:crypto';
import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Engine } from '../engine';
import type { Db } from '../storage';
import { HangarError, ValidationError } from './errors';
import { encodeJsonAnswer, isJsonAnswer, isUnlabelledJson, JSON_TYPE, readJsonStream, registerJsonParser } from './json-body';
import { lazyChildLogger, RequestObserver } from './observe';
import { AfterCommit, NO_TRANSACTION, Reply, RequestContext, Route } from './routes';
import { serverOptions } from './tls';
import { redactUrl } from './tokens';
import { assertWellFormed } from './unicode';

export type ApiName = 'registry' | 'secrets' | 'catalog';

/** What makes one of the three APIs: its routes, how it authenticates, how it renders errors. */
export interface ApiDefinition<Actor, Permission> {
  readonly name: ApiName;
  readonly routes: readonly Route<Actor, Permission>[];
  /** The storage lane of this API's write transactions (TxOptions.lane), when they all contend for one lock. */
  readonly writeLane?: string;
  /**
   * Resolves the caller from the request (token headers), inside the request's transaction. An API
   * without it (the secrets API, whose pipeline authenticates in its own transaction) has no actor,
   * and its `transaction: 'none'` routes open no transaction before their handler.
   */
  authenticate?(req: FastifyRequest, db: Db, engine: Engine): Promise<Actor | undefined>;
  /** Throws (401/403/404) when the actor may not call a route with this permission. */
  authorize(permission: Permission, actor: Actor | undefined): void;
  /** The error envelope of this API. */
  renderError(error: HangarError): { status: number; contentType: string; body: string };
  /** Hooks of this API's own (rate limits, maintenance mode), added before the routes. */
  setup?(app: FastifyInstance, engine: Engine): void;
}

const MAX_BODY_BYTES = 1024 * 1024;

const ANYWHERE = /^/;
/**
 * `text` as one flat string. V8 keeps a concatenation as a tree of its pieces: Node's randomUUID()
 * is one of 20-odd pieces, 480 bytes of heap for a 36-character id that every request in flight
 * holds (10,000 blocking watchers: 4 MiB). A regular expression reads a flat string, so V8
 * flattens its subject in place, and the pieces become garbage.
 */
function flat(text: string): string {
  ANYWHERE.test(text);
  return text;
}

/** Builds the Fastify app of one API; `listen` is the caller's business (or `inject`, in-process). */
export function buildApi<Actor, Permission>(engine: Engine, api: ApiDefinition<Actor, Permission>): FastifyInstance {
  const logger = engine.logger.child({ api: api.name }) as FastifyBaseLogger;
  const tls = engine.tls[api.name];
  const app = Fastify({
    // A listener with TLS is an https server (HTTP/1.1); its context is replaced on SIGHUP (tls.ts).
    ...(tls ? { https: serverOptions(tls) } : {}),
    loggerInstance: logger,
    genReqId: () => flat(randomUUID()),
    // One line per request instead of Fastify's two, at debug, and the request metrics.
    logController: new RequestObserver(engine, api.name, logger),
    childLoggerFactory: lazyChildLogger,
    bodyLimit: MAX_BODY_BYTES,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1024 },
    clientErrorHandler: (err, socket) => answerClientError(api, err as Error & { code?: string; rawPacket?: unknown }, socket),
  });
  registerJsonParser(app);
  // Other media types reach only streaming routes, as the raw request stream (no size limit);
  // elsewhere a body without a type (or text/plain) is JSON, as to the public services.
  app.addContentTypeParser('*', (req, payload, done) => {
    if ((req.routeOptions.config as { stream?: boolean }).stream) return done(null, payload);
    if (isUnlabelledJson(req.headers['content-type'])) return readJsonStream(payload, MAX_BODY_BYTES, done);
    done(new HangarError(415, ['Unsupported Content-Type: send application/json']), undefined);
  });
  api.setup?.(app, engine);

  // A response finished while the server drains on close() also closes its connection; kept
  // alive, it would hold close() up until the client drops it or keepAliveTimeout (72 s) ends it.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // A callback hook, not an async one: it runs for every response.
  app.addHook('onSend', (req, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    // Fastify closes the connection after any body-parser error, in case more body is coming. When
    // the request was read to its end (a 400 for bad JSON), nothing is: the client's pooled
    // connection stays open, as with the public services. A 413 (body not read) still closes.
    else if (req.raw.complete && reply.getHeader('connection') === 'close') reply.removeHeader('connection');
    done(null, payload);
  });

  for (const r of api.routes) {
    const route = { method: r.method as never, config: { stream: r.stream === true } };
    app.route({ ...route, url: r.path, handler: async (req, reply) => send(reply, await handle(engine, api, r, req)) });
    // The router ignores trailing slashes, so "/v1/kv/" arrives as "/v1/kv", which "/v1/kv/*" never
    // matches: the bare prefix is that route with an empty wildcard (a listing of the whole store).
    if (r.path.endsWith('/*')) {
      app.route({
        ...route,
        url: r.path.slice(0, -2),
        handler: async (req, reply) => {
          (req.params as Record<string, string>)['*'] = '';
          return send(reply, await handle(engine, api, r, req));
        },
      });
    }
  }

  app.setNotFoundHandler((req, reply) => {
    const err = new HangarError(404, [`No such endpoint: ${req.method} ${redactUrl(req.url).split('?')[0]}`]);
    sendError(reply, api, err);
  });

  app.setErrorHandler((error: FastifyError | HangarError, req, reply) => {
    if (error instanceof HangarError) return sendError(reply, api, error);
    const status = (error as FastifyError).statusCode;
    if (status && status >= 400 && status < 500) {
      return sendError(reply, api, new HangarError(status, [clientErrorMessage(error as FastifyError)]));
    }
    req.log.error({ err: error }, 'request failed');
    sendError(reply, api, new HangarError(500, [`Internal error (request id ${req.id})`]));
  });

  return app;
}

async function handle<Actor, Permission>(
  engine: Engine,
  api: ApiDefinition<Actor, Permission>,
  r: Route<Actor, Permission>,
  req: FastifyRequest,
): Promise<unknown> {
  // Lone surrogates (JSON's "\ud800") are refused here, once for all three APIs, before any handler sees them.
  assertWellFormed(req.params, 'path');
  assertWellFormed(req.query, 'query');
  assertWellFormed(req.body, 'body');
  const params = parse('path', r.params, req.params);
  const query = parse('query', r.query, req.query);
  const body = parse('body', r.body, req.body);
  const context = async (db: Db, resolveCaller = true): Promise<RequestContext<Actor>> => {
    const actor = resolveCaller && api.authenticate ? await api.authenticate(req, db, engine) : undefined;
    api.authorize(r.permission, actor);
    return { engine, db, actor, requestId: req.id, baseUrl: flat(`${req.protocol}://${req.host}`), now: engine.clock.now(), request: req };
  };
  if (r.authenticate === false) return r.handler({ params, query, body }, await context(NO_TRANSACTION, false));
  if (r.transaction === 'none') {
    const ctx = api.authenticate ? await engine.storage.tx(context, { readOnly: true }) : await context(NO_TRANSACTION);
    return r.handler({ params, query, body }, ctx);
  }
  const result = await engine.storage.tx(async (db) => r.handler({ params, query, body }, await context(db)), {
    readOnly: r.transaction === 'read',
    lane: api.writeLane,
  });
  return result instanceof AfterCommit ? result.next() : result;
}

function parse<T>(where: string, schema: z.ZodType<T> | undefined, value: unknown): T {
  if (!schema) return value as T;
  const result = schema.safeParse(value ?? (where === 'body' ? {} : value));
  if (result.success) return result.data;
  throw new ValidationError(result.error.issues.map((issue) => describeIssue(where, issue)));
}

/** "box.name: must be a string" — the field path first, so a client knows what to fix. */
function describeIssue(where: string, issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join('.');
  const field = path || where;
  if (issue.code === 'invalid_type') {
    return /received undefined/.test(issue.message) ? `${field} is required` : `${field}: must be ${article(issue.expected)}`;
  }
  return `${field}: ${issue.message}`;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function clientErrorMessage(error: FastifyError): string {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `Request body is larger than ${MAX_BODY_BYTES} bytes`;
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported Content-Type: send application/json';
    default:
      return error.message;
  }
}

/** Requests Node's HTTP parser refuses before Fastify sees them: their status and message. */
const PARSER_ERRORS: Readonly<Record<string, readonly [number, string]>> = {
  HPE_HEADER_OVERFLOW: [431, `Request line and headers are larger than ${maxHeaderSize} bytes`],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request timeout'],
};

/**
 * The answer to a request Node's HTTP parser refused (an oversized URL or header, a malformed request
 * line, a timeout), in the API's envelope; the connection closes, as Node's own answer does. A
 * response to HEAD has no body (a client reads none, and takes the body for the next response):
 * the method is known only when the refused packet starts the request, and any other case gets no
 * body either (Fastify's default answer always had one).
 */
function answerClientError<A, P>(api: ApiDefinition<A, P>, err: Error & { code?: string; rawPacket?: unknown }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] = PARSER_ERRORS[err.code ?? ''] ?? [400, 'Malformed HTTP request'];
  const method = Buffer.isBuffer(err.rawPacket) ? /^([A-Z]+) /.exec(err.rawPacket.toString('latin1', 0, 16))?.[1] : undefined;
  const rendered = api.renderError(new HangarError(status, [message]));
  const body = method && method !== 'HEAD' ? rendered.body : '';
  const type = body ? `Content-Type: ${rendered.contentType}\r\n` : '';
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n${type}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }
  socket.destroy(err);
}

function send(reply: FastifyReply, result: unknown): FastifyReply {
  if (result instanceof Reply) {
    reply.code(result.status).headers(result.headers);
    return result.body === undefined ? reply.send() : sendBody(reply, result.body);
  }
  return sendBody(reply.code(200), result);
}

/** A plain object or array that Fastify would serialize as JSON is serialized here (`encodeJsonAnswer`). */
function sendBody(reply: FastifyReply, body: unknown): FastifyReply {
  if (!isJsonAnswer(body, reply.getHeader('content-type'))) return reply.send(body);
  return reply.type(JSON_TYPE).send(encodeJsonAnswer(body));
}

function sendError<A, P>(reply: FastifyReply, api: ApiDefinition<A, P>, error: HangarError): void {
  const rendered = api.renderError(error);
  reply.code(rendered.status).headers(error.headers).type(rendered.contentType).send(rendered.body);
}
