import type { FastifyInstance } from 'fastify';
import { badRequest } from './errors';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses JSON bodies strictly: invalid UTF-8 is refused rather than silently replaced, and an
 * empty body counts as no body (clients send `Content-Type: application/json` on bodiless PUTs).
 */
export function registerJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json']);
  app.addContentTypeParser(/^application\/(.+\+)?json$/, { parseAs: 'buffer' }, (_req, body: Buffer, done) => {
    if (body.length === 0) return done(null, undefined);
    let text: string;
    try {
      text = utf8.decode(body);
    } catch {
      return done(badRequest('Request body is not valid UTF-8'), undefined);
    }
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      // V8's message may quote the body (a password, say): only the position goes back.
      const position = /position (\d+)/.exec((err as Error).message)?.[1];
      done(badRequest(`Request body is not valid JSON${position ? ` (error at position ${position})` : ''}`), undefined);
    }
  });
}
