import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { SECRETS_KEY_ENV, secretsKeyLocation } from './secrets/core/barrier';

/**
 * What `hangar server` warns about at start (outside dev mode): a data directory others can enter,
 * a database file others can read, and the secrets master key beside the SQLite database, where one copy of the directory holds
 * both the sealed secrets and the key that opens them.
 */
export function startupWarnings(options: {
  readonly dataDir: string;
  readonly sqlite: boolean;
  readonly secretsKeyFile?: string;
  readonly env?: NodeJS.ProcessEnv;
}): string[] {
  const warnings: string[] = [];
  const dataDir = resolve(options.dataDir);
  // Group and other bits (the low six) must be clear.
  if (statSync(dataDir).mode % 0o100 !== 0) warnings.push(`the data directory ${dataDir} is open to other users: chmod 700 it`);
  const database = join(dataDir, 'hangar.db');
  if (options.sqlite && existsSync(database) && statSync(database).mode % 0o100 !== 0) {
    // Made by an older version; SQLite gives new -wal and -shm files the database file's mode.
    warnings.push(`the database ${database} is readable by other users: chmod 600 ${database}*`);
  }
  const key = secretsKeyLocation(dataDir, options.env ?? process.env, options.secretsKeyFile);
  if (options.sqlite && 'file' in key && dirname(key.file) === dataDir) {
    warnings.push(
      `the secrets key ${key.file} sits beside the database: a copy of the directory opens every secret. ` +
        `Move it elsewhere (--secrets-key-file) or pass it in ${SECRETS_KEY_ENV}.`,
    );
  }
  return warnings;
}
