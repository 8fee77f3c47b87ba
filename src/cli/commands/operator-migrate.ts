import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Migration } from '../../engine/storage';
import { CommandSpec, ParsedOptions } from '../options';
import { dataDirOption, storageConfig, storageOptions } from '../storage-options';
import { serverCommand } from './server';

const server = serverCommand.options;

export const migrateCommand: CommandSpec = {
  name: 'operator migrate',
  summary: 'Applies the pending schema migrations of a data directory or PostgreSQL database and exits (--dry-run: lists them)',
  usage: 'hangar operator migrate [--dry-run] [options]',
  configFileOf: serverCommand,
  options: {
    'dry-run': { type: 'boolean', help: 'List the pending migrations (number and name) without applying them' },
    'config': { ...server.config, help: 'The server\'s configuration file: its storage options apply here' },
    ...storageOptions,
  },
};

export async function runMigrate(options: ParsedOptions): Promise<number> {
  const dataDir = dataDirOption(options);
  const config = storageConfig(options, dataDir);
  const kind = config.kind;
  const where = kind === 'postgres' ? 'the PostgreSQL database' : join(dataDir, 'hangar.db');
  const { MIGRATIONS, openStorage, pendingMigrations } = require('../../engine/storage') as typeof import('../../engine/storage');
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const list = (migrations: readonly Migration[]) => migrations.forEach((m) => out(`  ${m.version}  ${m.name}`));

  // A dry run creates nothing: a data directory without a database would get every migration.
  if (options['dry-run'] === true && kind === 'sqlite' && !existsSync(join(dataDir, 'hangar.db'))) {
    out(`${MIGRATIONS.length} pending migration(s): ${where} does not exist yet (a new data directory)`);
    list(MIGRATIONS);
    return 0;
  }
  const storage = await openStorage(config, { migrate: false });
  try {
    const pending = await storage.tx((db) => pendingMigrations(db, MIGRATIONS, storage.dialect), { readOnly: true });
    if (pending.length === 0) {
      out(`${where} is up to date (migration ${MIGRATIONS[MIGRATIONS.length - 1].version}): nothing to apply`);
      return 0;
    }
    if (options['dry-run'] === true) {
      out(`${pending.length} pending migration(s) in ${where}:`);
      list(pending);
      return 0;
    }
    // Another process may have applied some meanwhile: migrate() applies what is still missing, under its lock.
    const applied = await storage.migrate();
    out(`applied ${applied} migration(s) to ${where}${applied === pending.length ? ':' : ' (another process applied the others)'}`);
    if (applied === pending.length) list(pending);
    return 0;
  } finally {
    await storage.close();
  }
}
