import type { ApiResponse } from './transport';

/** A non-success answer of a Hangar API, with the messages of its error envelope. */
export class ApiError extends Error {
  public static from(res: ApiResponse): ApiError {
    const body = res.body as { errors?: unknown } | string | undefined;
    let messages: string[] = [];
    if (typeof body === 'string') messages = [body];
    else if (body && Array.isArray(body.errors)) messages = body.errors.map(String);
    return new ApiError(res.status, messages);
  }

  constructor(
    readonly status: number,
    readonly messages: readonly string[],
  ) {
    super(`HTTP ${status}: ${messages.join('; ') || 'no message'}`);
    this.name = 'ApiError';
  }
}
