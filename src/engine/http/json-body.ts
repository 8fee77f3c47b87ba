import type { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { badRequest, HangarError } from './errors';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes a JSON body strictly: invalid UTF-8 is refused rather than silently replaced; empty is no body. */
export function decodeJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw badRequest('Request body is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    // V8's message may quote the body (a password, say): only the position goes back.
    const position = /position (\d+)/.exec((err as Error).message)?.[1];
    throw badRequest(`Request body is not valid JSON${position ? ` (error at position ${position})` : ''}`);
  }
}

/**
 * Parses JSON bodies strictly; an empty body counts as no body (clients send
 * `Content-Type: application/json` on bodiless PUTs).
 */
export function registerJsonParser(app: FastifyInstance): void {
  // text/plain (what fetch labels a string body) is JSON to the public services: it falls to the caller's `*` parser.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(/^application\/(.+\+)?json$/, { parseAs: 'buffer' }, (_req, body: Buffer, done) => {
    try {
      done(null, decodeJson(body));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}

/** True when the public services read this body as JSON though it is not labelled so (the Go Vault client sends no type). */
export function isUnlabelledJson(contentType: string | undefined): boolean {
  return contentType === undefined || /^text\/plain\s*(;|$)/i.test(contentType);
}

/** Reads a raw request stream up to `limit` bytes and decodes it as JSON (for bodies without a JSON media type). */
export function readJsonStream(payload: Readable, limit: number, done: (err: Error | null, body?: unknown) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (err: Error | null, body?: unknown): void => {
    if (finished) return;
    finished = true;
    done(err, body);
  };
  payload.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) {
      payload.removeAllListeners('data');
      payload.resume();
      return finish(new HangarError(413, [`Request body is larger than ${limit} bytes`]));
    }
    chunks.push(chunk);
  });
  payload.on('error', (err) => finish(err));
  payload.on('end', () => {
    try {
      finish(null, decodeJson(Buffer.concat(chunks)));
    } catch (err) {
      finish(err as Error);
    }
  });
}
