import { resolve } from 'node:path';
import { OptionSpec, ParsedOptions } from './options';
import { UsageError } from './usage';
import { defaultDataDir } from '../engine/data-dir';
import type { StorageConfig } from '../engine/storage';

/** Where a command finds the server's data: the options `hangar server` and the operator commands share. */
export const storageOptions = {
  'data': { type: 'string', env: 'HANGAR_DATA', placeholder: 'DIR', help: 'Data directory (default ~/.local/share/hangar; --dev: a temporary one)' },
  'storage': { type: 'string', env: 'HANGAR_STORAGE', placeholder: 'sqlite|postgres', help: 'Storage backend (default sqlite)' },
  'postgres-url': { type: 'string', env: 'HANGAR_POSTGRES_URL', placeholder: 'URL', help: 'PostgreSQL connection URL for --storage postgres' },
} as const satisfies Record<string, OptionSpec>;

/** `--secrets-key-file`, shared likewise. */
export const secretsKeyFileOption = {
  'secrets-key-file': {
    type: 'string',
    env: 'HANGAR_SECRETS_KEY_FILE',
    placeholder: 'FILE',
    help: 'Secrets master key file, away from the database (default <data>/secrets.key; HANGAR_SECRETS_KEY holds the key itself)',
  },
} as const satisfies Record<string, OptionSpec>;

/** --storage and --postgres-url, checked (also for the commands that open the server's storage). */
export function storageSettings(options: ParsedOptions): { kind: 'sqlite' | 'postgres'; postgresUrl?: string } {
  const kind = (options.storage as string | undefined) ?? 'sqlite';
  if (kind !== 'sqlite' && kind !== 'postgres') throw new UsageError(`--storage must be sqlite or postgres, not "${kind}"`);
  const postgresUrl = options['postgres-url'] as string | undefined;
  if (kind === 'postgres' && !postgresUrl) throw new UsageError('--storage postgres needs --postgres-url (or HANGAR_POSTGRES_URL)');
  if (postgresUrl !== undefined) checkPostgresUrl(postgresUrl);
  return { kind, postgresUrl };
}

/** A connection URL that pg understands (postgres://, postgresql://, socket:); its password never appears in the message. */
function checkPostgresUrl(url: string): void {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !['postgres:', 'postgresql:', 'socket:'].includes(parsed.protocol)) {
    throw new UsageError('--postgres-url must be a URL such as postgres://USER:PASSWORD@HOST:5432/DATABASE');
  }
}

/** The data directory --data names, else the default one. */
export function dataDirOption(options: ParsedOptions): string {
  return resolve((options.data as string | undefined) ?? defaultDataDir());
}

/** The storage the options describe, for the data directory `dataDir`. */
export function storageConfig(options: ParsedOptions, dataDir: string, writeLock?: SharedArrayBuffer): StorageConfig {
  const { kind, postgresUrl } = storageSettings(options);
  return kind === 'postgres' ? { kind, url: postgresUrl! } : { kind, dataDir, writeLock };
}
