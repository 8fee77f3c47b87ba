import { FastifyReply, FastifyRequest, LogController } from 'fastify';
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
  constructor(
    private readonly engine: Engine,
    private readonly api: ApiName,
  ) {
    super();
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
      reply.log.debug({ method: req.method, url: redactUrl(req.url), status, ms: Math.round(ms * 100) / 100 }, 'request');
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
