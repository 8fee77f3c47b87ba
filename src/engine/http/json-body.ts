import { isAscii } from 'node:buffer';
import type { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { badRequest, HangarError } from './errors';
import { Reply } from './routes';
import { isContainer, markWellFormed } from './unicode';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * How deep arrays and objects may nest in a request body: Vault's default `max_json_depth` (500). No
 * client of the three APIs sends more than a dozen levels, and every walk of request data (null
 * dropping, Unicode checks, merge patches, audit hashing, JSON.stringify) stays far from the stack's end.
 */
export const MAX_JSON_DEPTH = 500;

/** How many items one array or object of a request body may hold: Vault's `max_json_array_element_count` and `max_json_object_entry_count`. */
export const MAX_JSON_WIDTH = 10_000;

/**
 * Why a JSON text breaks the limits (deeper than `MAX_JSON_DEPTH`, or an array or object of more
 * than `MAX_JSON_WIDTH` items), or undefined. One pass over the bytes before parsing: a 1 MiB body
 * of 500,000 nested arrays would otherwise cost ~100 MB of heap, and 300,000 items ~10 MB.
 */
export function jsonLimitBroken(body: Buffer, depthLimit = MAX_JSON_DEPTH, widthLimit = MAX_JSON_WIDTH): string | undefined {
  // Only a body with more than `depthLimit` opening brackets or `widthLimit` commas can break them:
  // counted natively first (`indexOf`), since the byte loop below costs as much as parsing a large
  // ordinary body (a transit batch, say).
  if (countUpTo(body, [0x5b, 0x7b], depthLimit + 1) <= depthLimit && countUpTo(body, [0x2c], widthLimit) < widthLimit) return undefined;
  // Items per open container (commas seen at that depth); index 0 is the top level.
  const commas = new Int32Array(depthLimit + 2);
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      // A backslash escapes the next byte; a quote ends the string.
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > depthLimit) return `nested deeper than ${depthLimit} levels`;
      commas[depth] = 0;
    } else if (c === 0x5d || c === 0x7d) {
      if (depth > 0) depth--;
    } else if (c === 0x2c && depth > 0 && ++commas[depth] >= widthLimit) {
      return `an array or object holds more than ${widthLimit} items`;
    }
  }
  return undefined;
}

/** How many of `bytes` occur in `body`, counting up to `stop` at most. */
function countUpTo(body: Buffer, bytes: readonly number[], stop: number): number {
  let count = 0;
  for (const byte of bytes) {
    for (let i = body.indexOf(byte); i !== -1 && count < stop; i = body.indexOf(byte, i + 1)) count++;
  }
  return count;
}

/**
 * JSON text that arrives inside a request (ACL rules written as JSON),
 * parsed under the same limits as a body; `fail` builds the error for a text that breaks them.
 */
export function parseJsonText(text: string, fail: (reason: string) => Error): unknown {
  const broken = jsonLimitBroken(Buffer.from(text));
  if (broken) throw fail(broken);
  return JSON.parse(text);
}

/** Decodes a JSON body strictly: invalid UTF-8 is refused rather than silently replaced; empty is no body. */
export function decodeJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  const broken = jsonLimitBroken(body);
  if (broken) throw badRequest(`Request body is not valid JSON (${broken})`);
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw badRequest('Request body is not valid UTF-8');
  }
  try {
    const value: unknown = JSON.parse(text);
    // Strict UTF-8 yields no lone surrogate, only a `\u` escape can: a body without `\u` (an escaped
    // backslash before a `u` counts too) is not walked for them again (api.ts).
    if (body.indexOf('\\u') === -1) markWellFormed(value);
    return value;
  } catch (err) {
    // V8's message may quote the body (a password, say): only the position goes back.
    const position = /position (\d+)/.exec((err as Error).message)?.[1];
    throw badRequest(`Request body is not valid JSON${position ? ` (error at position ${position})` : ''}`);
  }
}

/** Node.js writes a string answer up to this long from the stack; a longer one is worth encoding first. */
const LARGE_ANSWER = 16 * 1024;

/**
 * A JSON answer's text, or for a large one its UTF-8 bytes. Given a long string, Fastify measures
 * its UTF-8 length for Content-Length in one pass and the socket write encodes it into a buffer
 * three times its length in another; an answer that is ASCII, as most are, is its Latin-1 bytes,
 * copied in one native pass (a transit batch's 145 KB: about 150 µs of CPU less per response).
 */
export function encodeJsonAnswer(value: unknown): string | Buffer {
  const text = JSON.stringify(value);
  if (text === undefined || text.length < LARGE_ANSWER) return text;
  const bytes = Buffer.from(text, 'latin1');
  return isAscii(bytes) ? bytes : Buffer.from(text, 'utf8');
}

export const JSON_TYPE = 'application/json; charset=utf-8';

/** Whether a body is sent as JSON text: a plain object or array, unless the reply set another type. */
export const isJsonAnswer = (body: unknown, type: unknown): boolean => isContainer(body) && (type === undefined || type === JSON_TYPE);

/**
 * `reply` with its JSON body encoded already, as it would be sent: for one answer sent to many
 * requests (a blocking query's waiters), encoded once instead of once per request.
 */
export function encodedReply(reply: Reply): Reply {
  if (!isJsonAnswer(reply.body, reply.headers['content-type'])) return reply;
  return new Reply(reply.status, encodeJsonAnswer(reply.body), { ...reply.headers, 'content-type': JSON_TYPE });
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
  // A declared length over the limit is refused before a byte is read (as Fastify does for typed bodies).
  const declared = Number((payload as Readable & { headers?: Record<string, string | undefined> }).headers?.['content-length']);
  if (declared > limit) return finish(new HangarError(413, [`Request body is larger than ${limit} bytes`]));
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
