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

/** --storage and --postgres-url, checked. */
export function storageKind(options: ParsedOptions): 'sqlite' | 'postgres' {
  const kind = (options.storage as string | undefined) ?? 'sqlite';
  if (kind !== 'sqlite' && kind !== 'postgres') throw new UsageError(`--storage must be sqlite or postgres, not "${kind}"`);
  if (kind === 'postgres' && !options['postgres-url']) throw new UsageError('--storage postgres needs --postgres-url (or HANGAR_POSTGRES_URL)');
  return kind;
}

/** The data directory --data names, else the default one. */
export function dataDirOption(options: ParsedOptions): string {
  return resolve((options.data as string | undefined) ?? defaultDataDir());
}

/** The storage the options describe, for the data directory `dataDir`. */
export function storageConfig(options: ParsedOptions, dataDir: string, writeLock?: SharedArrayBuffer): StorageConfig {
  const kind = storageKind(options);
  return kind === 'postgres' ? { kind, url: options['postgres-url'] as string } : { kind, dataDir, writeLock };
}
