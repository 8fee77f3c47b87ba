import { FastifyBaseLogger, FastifyReply, FastifyRequest, LogController } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger';
import type { Engine } from '../engine';
import type { ApiName } from './api';
import { redactUrl } from './tokens';

/**
 * Fastify's per-request log lines, replaced: one line per request (at `debug`, as the public
 * catalog logs its HTTP requests; the public secrets service logs none outside its audit devices)
 * instead of two at `info`, and the request metrics, both where Fastify finishes a response (no
 * extra hook on the hot path).
 */
export class RequestObserver extends LogController {
  /**
   * The API's logger without redaction, for the request line alone: its fields are known (the URL
   * with its secret parameters blanked, no headers, no body), and pino's path redaction cost
   * several times the rest of the line. The line carries the request id itself, so no per-request
   * child logger is made for it.
   */
  private readonly requestLine: FastifyBaseLogger;

  constructor(
    private readonly engine: Engine,
    private readonly api: ApiName,
    logger: FastifyBaseLogger,
  ) {
    super();
    this.requestLine = logger.child({}, { redact: { paths: [] } } as ChildLoggerOptions);
  }

  /** A request's start, only at trace: there one may follow a request that never ends. */
  override incomingRequest(req: FastifyRequest): void {
    if (this.engine.logger.isLevelEnabled('trace')) req.log.trace({ method: req.method, url: redactUrl(req.url) }, 'request received');
  }

  override requestCompleted(error: Error | null | undefined, req: FastifyRequest, reply: FastifyReply): void {
    const ms = reply.elapsedTime;
    const status = reply.statusCode;
    this.engine.metrics?.observeRequest(this.api, req.method, routeLabel(this.api, req.routeOptions.url, req.url, status), status, ms);
    if (error) reply.log.error({ err: error }, 'response failed');
    if (this.engine.logger.isLevelEnabled('debug')) {
      this.requestLine.debug({ reqId: req.id, method: req.method, url: redactUrl(req.url), status, ms: Math.round(ms * 100) / 100 }, 'request');
    }
  }
}

/**
 * The route pattern a request matched, never its raw path (bounded label values). The secrets API
 * has one catch-all route: its requests are labelled by the path's first segment (the mount, or
 * `sys`/`auth`/`identity` and the next segment) when the path was found (a success or a 403); its
 * other errors stay under the catch-all, so unknown paths cannot grow the label set.
 */
export function routeLabel(api: ApiName, pattern: string | undefined, url: string, status: number): string {
  if (pattern === undefined) return 'unmatched';
  if (api !== 'secrets' || (status >= 400 && status !== 403)) return pattern;
  const segments = url.split('?', 1)[0].split('/', 4);
  const top = segments[2] ?? '';
  if (!/^[\w.-]{1,64}$/.test(top)) return pattern;
  const second = segments[3] ?? '';
  return ['sys', 'auth', 'identity'].includes(top) && /^[\w.-]{1,64}$/.test(second) ? `/v1/${top}/${second}` : `/v1/${top}`;
}

/**
 * Fastify's per-request child logger (`req.log`, bound to the request id), made only when something
 * logs through it: pino's `child` costs more than a cheap request's own work, and most requests log
 * nothing but the request line, which RequestObserver writes with the request id as a field.
 */
class LazyChildLogger {
  private made?: FastifyBaseLogger;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  fatal(...args: Parameters<FastifyBaseLogger['fatal']>): void {
    this.logger.fatal(...args);
  }

  error(...args: Parameters<FastifyBaseLogger['error']>): void {
    this.logger.error(...args);
  }

  warn(...args: Parameters<FastifyBaseLogger['warn']>): void {
    this.logger.warn(...args);
  }

  info(...args: Parameters<FastifyBaseLogger['info']>): void {
    this.logger.info(...args);
  }

  debug(...args: Parameters<FastifyBaseLogger['debug']>): void {
    this.logger.debug(...args);
  }

  trace(...args: Parameters<FastifyBaseLogger['trace']>): void {
    this.logger.trace(...args);
  }

  silent(...args: Parameters<FastifyBaseLogger['silent']>): void {
    this.logger.silent(...args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: see LazyChildLogger. */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}
