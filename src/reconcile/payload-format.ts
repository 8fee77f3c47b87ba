/**
 * What a custom resource hands the CLI: written by the constructs at synth time (into Terraform
 * triggers, base64url-encoded JSON so that no `${` in a description is read as an interpolation),
 * read by `hangar apply | destroy | prune` at deploy time.
 *
 * Never remove a version here: a destroy provisioner runs with triggers that an older version of
 * the library wrote, so the CLI must keep reading every payload version it ever wrote.
 * This module is imported by the constructs, so it has no dependencies.
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

export function encodePayload(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}
