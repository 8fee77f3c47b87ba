import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import { CommandSpec, ParsedOptions } from '../options';
import { dataDirOption, secretsKeyFileOption, storageConfig, storageOptions } from '../storage-options';
import { UsageError } from '../usage';

const dataOption = {
  data: { ...storageOptions.data, help: 'Data directory: the SQLite database (--storage sqlite), the box files, the secrets key (default ~/.local/share/hangar)' },
};

export const backupCommand: CommandSpec = {
  name: 'operator backup',
  summary: 'Writes a consistent backup of everything the server stores (rows, box files) while it serves, to FILE or - (stdout).',
  usage: 'hangar operator backup --to FILE|- [--include-secrets-key] [--data DIR] [--storage sqlite|postgres --postgres-url URL]',
  options: {
    'to': { type: 'string', placeholder: 'FILE', help: 'The backup file to write (mode 0600; - writes to stdout)' },
    'include-secrets-key': {
      type: 'boolean',
      help: 'Also put the secrets master key into the backup: whoever has the file then reads every secret (default: only its fingerprint)',
    },
    ...storageOptions,
    ...dataOption,
    ...secretsKeyFileOption,
  },
};

export const restoreCommand: CommandSpec = {
  name: 'operator restore',
  summary: 'Restores a backup into an empty data directory (and empty PostgreSQL database); refuses anything else, changing nothing.',
  usage: 'hangar operator restore --from FILE [--data DIR] [--storage sqlite|postgres --postgres-url URL]',
  options: {
    from: { type: 'string', placeholder: 'FILE', help: 'The backup file to restore' },
    ...storageOptions,
    ...dataOption,
    ...secretsKeyFileOption,
  },
};

export async function runBackup(options: ParsedOptions): Promise<number> {
  const to = options.to as string | undefined;
  if (!to) throw new UsageError('--to FILE is required (- for stdout)');
  const dataDir = dataDirOption(options);
  const { IO_AHEAD, writeBackup } = require('../../engine/backup/backup') as typeof import('../../engine/backup/backup');
  const backup = {
    storage: storageConfig(options, dataDir),
    dataDir,
    secretsKeyFile: options['secrets-key-file'] as string | undefined,
    includeSecretsKey: options['include-secrets-key'] === true,
  };
  if (to === '-') {
    await writeBackup(backup, process.stdout);
    return 0;
  }
  // Written beside its name and renamed once complete: a file by that name is always a whole backup.
  const file = resolve(to);
  const partial = `${file}.partial`;
  const out = createWriteStream(partial, { mode: 0o600, flush: true, highWaterMark: IO_AHEAD });
  try {
    const manifest = await writeBackup(backup, out);
    out.end();
    await finished(out);
    await rename(partial, file);
    const rows = manifest.tables.reduce((n, t) => n + t.rows, 0);
    process.stderr.write(
      `Backup written to ${file}: ${rows} rows of ${manifest.tables.length} tables, ${manifest.blobs.count} box files (${manifest.blobs.bytes} bytes), schema ${manifest.schemaVersion}.\n` +
        (manifest.secretsKey.included
          ? 'It holds the secrets master key: keep it as safe as the key itself.\n'
          : `Secrets key not included (fingerprint ${manifest.secretsKey.fingerprint ?? 'none'}): a restore needs that key.\n`),
    );
    return 0;
  } catch (err) {
    out.destroy();
    await rm(partial, { force: true });
    throw err;
  }
}

export async function runRestore(options: ParsedOptions): Promise<number> {
  const from = options.from as string | undefined;
  if (!from) throw new UsageError('--from FILE is required');
  const dataDir = dataDirOption(options);
  const { restoreBackup } = require('../../engine/backup/restore') as typeof import('../../engine/backup/restore');
  const { prepareDataDir } = require('../../engine/data-dir') as typeof import('../../engine/data-dir');
  prepareDataDir(dataDir);
  const manifest = await restoreBackup(resolve(from), {
    storage: storageConfig(options, dataDir),
    dataDir,
    secretsKeyFile: options['secrets-key-file'] as string | undefined,
  });
  process.stderr.write(
    `Restored the backup of ${manifest.createdAt} (Hangar ${manifest.hangarVersion}, ${manifest.storage}) into ${dataDir}` +
      `${options.storage === 'postgres' ? ' and the PostgreSQL database' : ''}: ${manifest.tables.reduce((n, t) => n + t.rows, 0)} rows, ${manifest.blobs.count} box files.\n`,
  );
  return 0;
}
