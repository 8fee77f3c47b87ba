/**
 * One error model for the three APIs. Handlers throw these; each API renders them in its own
 * envelope (registry `{errors, success: false}`, secrets `{errors}`, catalog plain text).
 */
export class HangarError extends Error {
  constructor(
    readonly status: number,
    readonly messages: readonly string[],
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    // An answer to the client, not a fault in Hangar: no stack trace is captured. Capturing one
    // through Fastify's frames cost more than the rest of a 404 or 403 (profiled).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(messages.join('; '));
    Error.stackTraceLimit = limit;
    this.name = 'HangarError';
  }
}

/** The request is malformed; the registry answers 422 for these, the other APIs 400. */
export class ValidationError extends HangarError {
  constructor(messages: readonly string[]) {
    super(422, messages);
    this.name = 'ValidationError';
  }
}

export const badRequest = (message: string) => new HangarError(400, [message]);
export const unauthorized = (message = 'Authentication required') => new HangarError(401, [message]);
export const forbidden = (message = 'Permission denied') => new HangarError(403, [message]);
export const notFound = (message = 'Resource not found!') => new HangarError(404, [message]);
export const conflict = (message: string) => new HangarError(409, [message]);
export const invalid = (...messages: string[]) => new ValidationError(messages);
