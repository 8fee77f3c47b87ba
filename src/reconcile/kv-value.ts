import { createHash } from 'node:crypto';

// The KV secret's value helpers shared by the KvSecret construct (at synthesis) and its reconcile
// kind (at deploy). Kept free of the engine's libraries (zod): the published construct library
// depends on none of them at run time.

/** Objects with their keys sorted, so that equal values hash equally however they were written. */
function canonical(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(canonical);
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Record<string, unknown>)[k])]));
}

/** The hash a payload carries for a secret's value (also computed by the KvSecret construct at synthesis). */
export function kvValueHash(value: Record<string, unknown>): string {
  return createHash('sha256').update(JSON.stringify(canonical(value))).digest('hex');
}

/** A KV secret's value from its text: a JSON object; throws naming the source. */
export function kvValue(text: string, source: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${source} does not hold JSON: the secret's value must be a JSON object such as {"password": "..."}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || Object.keys(value).length === 0) {
    throw new Error(`${source} must hold a JSON object with at least one key, such as {"password": "..."}`);
  }
  return value as Record<string, unknown>;
}
