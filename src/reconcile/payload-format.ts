import { deflateRawSync } from 'node:zlib';

/**
 * What a custom resource hands the CLI: written by the constructs at synth time (into Terraform
 * triggers, base64url-encoded JSON so that no `${` in a description is read as an interpolation),
 * read by `hangar apply | destroy | prune` at deploy time.
 *
 * Never remove a version here: a destroy provisioner runs with triggers that an older version of
 * the library wrote, so the CLI must keep reading every payload version it ever wrote.
 * This module is imported by the constructs, so it has no dependencies beyond Node's.
 */
export const PAYLOAD_VERSION = 1;

export interface ConnectionSpec {
  /** Unset: the bundled engine runs in-process on a data directory. */
  readonly endpoints?: { readonly registry?: string; readonly secrets?: string; readonly catalog?: string };
  /** The data directory of the embedded mode; unset: `HANGAR_DATA` at deploy time, else the default. */
  readonly dataDir?: string;
  /** Name of the environment variable that holds the token (never the token itself). */
  readonly tokenEnv?: string;
}

/** One managed object: what it is (kind), which one (key), where (connection), and how it should be. */
export interface ResourcePayload {
  readonly v: number;
  readonly kind: string;
  readonly key: string;
  readonly connection: ConnectionSpec;
  readonly desired?: Record<string, unknown>;
}

/**
 * JSON longer than this is deflated, and the encoding starts with DEFLATED (not a base64url
 * character). Provisioners get payloads in environment variables, and Linux refuses to start a
 * process with one over 128 KiB: an inventory of 1,000 objects was 140 KB in plain base64url.
 */
const DEFLATE_ABOVE = 32 * 1024;
export const DEFLATED = 'z.';

export function encodePayload(value: unknown): string {
  const json = Buffer.from(JSON.stringify(value), 'utf8');
  return json.length > DEFLATE_ABOVE ? DEFLATED + deflateRawSync(json, { level: 9 }).toString('base64url') : json.toString('base64url');
}
