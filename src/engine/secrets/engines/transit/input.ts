import { z } from 'zod';
import { HangarError } from '../../../http/errors';
import { flexibleInt } from '../../core/durations';
import { badInput } from '../../core/request';
import { SecretsResponse } from '../../core/types';

/**
 * Whether `text` matches `/^[A-Za-z0-9+/_-]*={0,2}$/` (base64 or base64url, padded or not), told from
 * `decoded`, Node.js's lenient decoding of it, which skips characters that are not base64, stops at
 * padding and drops the high byte of characters above U+00FF: each shows as a missing byte once
 * non-ASCII text is refused. Several times cheaper than the regular expression over a batch's items.
 * Where the unpadded length leaves one character over (no byte is missing then) the regular
 * expression decides; that length is never valid base64, so it is rare.
 */
export function isVersionedBase64(text: string, decoded: Buffer): boolean {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const length = text.length - padding;
  if (length % 4 === 1) return /^[A-Za-z0-9+/_-]*={0,2}$/.test(text);
  if (Buffer.byteLength(text, 'utf8') !== text.length) return false;
  return decoded.length === Math.floor((length * 3) / 4);
}

/** Whether `text` is standard padded base64 (`/^[A-Za-z0-9+/]*={0,2}$/`, a multiple of 4 long); see above. */
export function isStandardBase64(text: string, decoded: Buffer): boolean {
  return text.length % 4 === 0 && !text.includes('-') && !text.includes('_') && isVersionedBase64(text, decoded);
}

/** zod: standard base64 (what Vault's clients send for plaintext, input and context), decoded. */
export const b64 = z.string().transform((text, ctx) => {
  const decoded = Buffer.from(text, 'base64');
  if (isStandardBase64(text, decoded)) return decoded;
  ctx.addIssue({ code: 'custom', message: 'must be base64', input: text });
  return z.NEVER;
});

/**
 * A batch item's base64 field, decoded when the item runs: Vault reports an item that does not decode
 * in its place (`{error}`) and goes on with the others, so the body's schema keeps it as text.
 */
export function fromB64(field: string, text: string): Buffer;
export function fromB64(field: string, text: string | undefined): Buffer | undefined;
export function fromB64(field: string, text: string | undefined): Buffer | undefined {
  if (text === undefined) return undefined;
  const decoded = Buffer.from(text, 'base64');
  if (!isStandardBase64(text, decoded)) throw badInput(`${field}: must be base64`);
  return decoded;
}

export const keyVersion = flexibleInt.pipe(z.number().int().min(0, 'must be 0 (the latest) or more'));

/** `partial_failure_response_code` of `encrypt/` and `decrypt/`. */
export const partialFailureCode = { partial_failure_response_code: flexibleInt.optional() };

/**
 * How an answer whose batch has failed items is coded. Vault's `encrypt/` and `decrypt/` answer 400
 * (the results in the body), or the request's `partial_failure_response_code` when some items
 * succeeded; `rewrap/`, `sign/`, `verify/` and `hmac/` answer 200, the errors in their items.
 */
export type BatchFailure = { readonly kind: 'ok' } | { readonly kind: 'fail'; readonly partialCode?: number };
export const ITEM_ERRORS_OK: BatchFailure = { kind: 'ok' };
export const itemErrorsFail = (partialCode: number | undefined): BatchFailure => ({ kind: 'fail', partialCode });

/**
 * Vault's batch form: with `batch_input`, each item runs on its own and its error is reported in
 * its place (`{error}`), the answer's status as `failure` says; without it, the single item's error
 * is the request's.
 */
export function batched<T extends { reference?: string }>(
  batch: readonly T[] | undefined,
  single: T,
  run: (item: T) => Record<string, unknown>,
  failure: BatchFailure,
): SecretsResponse {
  if (!batch) return { data: run(single) };
  if (batch.length === 0) throw badInput('batch_input: missing batch input to process');
  let failed = false;
  let succeeded = false;
  const results = batch.map((item) => {
    let result: Record<string, unknown>;
    try {
      result = run(item);
      succeeded = true;
    } catch (e) {
      if (!(e instanceof HangarError) || e.status >= 500) throw e;
      failed = true;
      result = { error: e.messages.join('; ') };
    }
    if (item.reference !== undefined) result.reference = item.reference;
    return result;
  });
  const data = { batch_results: results };
  if (!failed || failure.kind === 'ok') return { data };
  const code = failure.partialCode;
  if (code === undefined || !succeeded) return { status: 400, data };
  // Vault takes 1 to 599; Node.js cannot answer an informational (1xx) status as a final one.
  if (code < 200 || code > 599) {
    return { status: 400, data, warnings: ['invalid HTTP response code override from partial_failure_response_code, reverting to 400'] };
  }
  return { status: code, data };
}
