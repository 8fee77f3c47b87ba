import { z } from 'zod';
import { HangarError } from '../../../http/errors';
import { flexibleInt } from '../../core/durations';
import { SecretsResponse } from '../../core/types';

/** zod: standard base64 (what Vault's clients send for plaintext, input and context), decoded. */
export const b64 = z
  .string()
  .refine((s) => s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s), 'must be base64')
  .transform((s) => Buffer.from(s, 'base64'));

export const keyVersion = flexibleInt.pipe(z.number().int().min(0, 'must be 0 (the latest) or more'));

/**
 * Vault's batch form: with `batch_input`, each item runs on its own and its error is reported in
 * its place (`{error}`), the whole answer a 400 when any item failed; without it, the single
 * item's error is the request's.
 */
export function batched<T extends { reference?: string }>(
  batch: readonly T[] | undefined,
  single: T,
  run: (item: T) => Record<string, unknown>,
): SecretsResponse {
  if (!batch) return { data: run(single) };
  let failed = false;
  const results = batch.map((item) => {
    const reference = item.reference !== undefined ? { reference: item.reference } : {};
    try {
      return { ...run(item), ...reference };
    } catch (e) {
      if (!(e instanceof HangarError) || e.status >= 500) throw e;
      failed = true;
      return { error: e.messages.join('; '), ...reference };
    }
  });
  return { status: failed ? 400 : 200, data: { batch_results: results } };
}
