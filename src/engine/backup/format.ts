import type { SqlValue } from '../storage';

/**
 * Hangar's backup format, the same whatever the storage (so that a backup of SQLite restores into
 * PostgreSQL and back): an uncompressed tar of
 *
 * - `tables/<table>/<n>.jsonl.gz`: the table's rows, one JSON array per line in the manifest's column
 *   order, gzip-compressed in chunks of at most CHUNK_BYTES (bytes as `{"base64": "..."}`, integers
 *   beyond 2^53 as their digits);
 * - `blobs/<id>`: the box files the rows name, as stored (box files are compressed already);
 * - `secrets.key`: the secrets master key, only when asked for (`--include-secrets-key`);
 * - `manifest.json`, last: versions, the schema's migration number, each table's columns and rows,
 *   the SHA-256 of every other entry, and the master key's fingerprint.
 */
export const BACKUP_FORMAT = 'hangar-backup';
export const FORMAT_VERSION = 1;
export const MANIFEST_ENTRY = 'manifest.json';
export const KEY_ENTRY = 'secrets.key';
export const TABLES_PREFIX = 'tables/';
export const BLOBS_PREFIX = 'blobs/';
/** Uncompressed bytes of rows per table chunk, at most (one chunk is in memory at a time). */
export const CHUNK_BYTES = 4 * 1024 * 1024;

export interface ManifestTable {
  readonly name: string;
  readonly columns: readonly string[];
  readonly rows: number;
  /** Its chunks, in order. */
  readonly files: readonly string[];
}

export interface ManifestFile {
  readonly path: string;
  readonly size: number;
  readonly sha256: string;
}

export interface Manifest {
  readonly format: typeof BACKUP_FORMAT;
  readonly formatVersion: number;
  readonly hangarVersion: string;
  readonly createdAt: string;
  /** The storage it was taken from: informative, a backup restores into either. */
  readonly storage: 'sqlite' | 'postgres';
  /** The newest migration applied when the snapshot was taken. */
  readonly schemaVersion: number;
  readonly tables: readonly ManifestTable[];
  readonly blobs: { readonly count: number; readonly bytes: number };
  readonly secretsKey: { readonly fingerprint: string | null; readonly included: boolean };
  /** Every entry but the manifest, in the tar's order. */
  readonly files: readonly ManifestFile[];
}

/** One row as a line of its chunk. */
export function encodeRow(values: readonly SqlValue[]): string {
  return JSON.stringify(values.map((v) => (v instanceof Uint8Array ? { base64: Buffer.from(v).toString('base64') } : v)));
}

/** A line of a chunk back to its row's values. */
export function decodeRow(line: string): SqlValue[] {
  const values = JSON.parse(line) as unknown[];
  if (!Array.isArray(values)) throw new Error('a row is not a JSON array');
  return values.map((v) => (v !== null && typeof v === 'object' ? Buffer.from((v as { base64: string }).base64, 'base64') : (v as SqlValue)));
}

/** Checks what a manifest must hold before anything is read by it. */
export function parseManifest(text: string): Manifest {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(text) as Manifest;
  } catch {
    throw new Error(`${MANIFEST_ENTRY} is not valid JSON: the backup is damaged`);
  }
  if (manifest?.format !== BACKUP_FORMAT) throw new Error(`${MANIFEST_ENTRY} does not describe a Hangar backup`);
  if (manifest.formatVersion !== FORMAT_VERSION) {
    throw new Error(`the backup's format version is ${manifest.formatVersion}; this Hangar reads version ${FORMAT_VERSION}`);
  }
  if (!Array.isArray(manifest.tables) || !Array.isArray(manifest.files) || !Number.isInteger(manifest.schemaVersion)) {
    throw new Error(`${MANIFEST_ENTRY} is incomplete: the backup is damaged`);
  }
  return manifest;
}
