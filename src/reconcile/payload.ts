import { inflateRawSync } from 'node:zlib';
import { z } from 'zod';
import { DEFLATED, ResourcePayload } from './payload-format';

/** The most a deflated payload may inflate to (a stack's inventory is a few MB at most). */
const INFLATED_MAX = 64 * 1024 * 1024;

const Connection = z.object({
  endpoints: z
    .object({ registry: z.url().optional(), secrets: z.url().optional(), catalog: z.url().optional() })
    .optional(),
  dataDir: z.string().min(1).optional(),
  tokenEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name').optional(),
});

const PayloadV1 = z.object({
  v: z.literal(1),
  kind: z.string().min(1),
  key: z.string().min(1),
  connection: Connection,
  desired: z.record(z.string(), z.unknown()).optional(),
});

/** Decodes a payload of any version the library ever wrote. */
export function decodePayload(encoded: string, what = 'payload'): ResourcePayload {
  return decode(encoded, what, PayloadV1);
}

/** An inventory: the managed objects of one stack (the list the prune step compares). */
export function decodeInventory(encoded: string, what = 'inventory'): ResourcePayload[] {
  return decode(encoded, what, z.array(PayloadV1));
}

function decode<T>(encoded: string, what: string, schema: z.ZodType<T>): T {
  let json: unknown;
  const text = encoded.trim();
  try {
    const bytes = text.startsWith(DEFLATED)
      ? inflateRawSync(Buffer.from(text.slice(DEFLATED.length), 'base64url'), { maxOutputLength: INFLATED_MAX })
      : Buffer.from(text, 'base64url');
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new Error(`${what} is not base64url-encoded JSON`);
  }
  const result = schema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(`${what} is not understood (${issue.path.join('.') || 'value'}: ${issue.message}); is this CLI older than the library that wrote it?`);
  }
  return result.data;
}
