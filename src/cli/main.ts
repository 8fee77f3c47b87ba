import { diffCommand, runDiff } from './commands/diff';
import { backupCommand, restoreCommand, runBackup, runRestore } from './commands/operator-backup';
import { migrateCommand, runMigrate } from './commands/operator-migrate';
import { createOrgCommand, createUserCommand, runCreateOrg, runCreateUser } from './commands/registry';
import {
  addMemberCommand, maintenanceCommand, removeMemberCommand, runAddMember, runMaintenance, runRemoveMember, runSetDelinquent,
  runTwoFactor, setDelinquentCommand, twoFactorCommand,
} from './commands/registry-admin';
import { applyCommand, destroyCommand, pruneCommand, runApply, runDestroy, runPrune } from './commands/resources';
import { runServer, serverCommand } from './commands/server';
import { runStatus, statusCommand } from './commands/status';
import { locateUsageError } from './config-file';
import { CommandSpec, helpText, ParsedOptions, parseCommand } from './options';
import { UsageError } from './usage';
import { versionOutput } from './version-request';
import { ApiError } from '../client/errors';

interface Command {
  readonly spec: CommandSpec;
  readonly run: (options: ParsedOptions, positionals: string[]) => Promise<number>;
}

const COMMANDS: readonly Command[] = [
  { spec: serverCommand, run: runServer },
  { spec: statusCommand, run: runStatus },
  { spec: createUserCommand, run: runCreateUser },
  { spec: createOrgCommand, run: runCreateOrg },
  { spec: setDelinquentCommand, run: runSetDelinquent },
  { spec: maintenanceCommand, run: runMaintenance },
  { spec: twoFactorCommand, run: runTwoFactor },
  { spec: addMemberCommand, run: runAddMember },
  { spec: removeMemberCommand, run: runRemoveMember },
  { spec: applyCommand, run: runApply },
  { spec: destroyCommand, run: runDestroy },
  { spec: pruneCommand, run: runPrune },
  { spec: diffCommand, run: runDiff },
  { spec: backupCommand, run: runBackup },
  { spec: restoreCommand, run: runRestore },
  { spec: migrateCommand, run: runMigrate },
];

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.spec.name.length));
  return [
    'Usage: hangar COMMAND [options]',
    '',
    'Hangar: a box registry, a secrets service and a service catalog in one engine.',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.spec.name.padEnd(width)}  ${c.spec.summary}`),
    '',
    'Run "hangar COMMAND --help" for the options of a command. Exit codes: 0 ok, 1 failure, 2 usage error.',
    '',
  ].join('\n');
}

/** Runs the CLI; resolves to the exit code. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    process.stdout.write(overview());
    return argv.length === 0 ? 2 : 0;
  }
  const version = versionOutput(argv);
  if (version) {
    process.stdout.write(version);
    return 0;
  }
  // Commands have one word or two ("registry create-user").
  const command =
    COMMANDS.find((c) => c.spec.name === `${argv[0]} ${argv[1]}`) ?? COMMANDS.find((c) => c.spec.name === argv[0]);
  try {
    if (!command) {
      const group = COMMANDS.filter((c) => c.spec.name.startsWith(`${argv[0]} `));
      if (group.length > 0 && (argv.length === 1 || argv[1] === '--help')) {
        process.stdout.write(`Commands:\n${group.map((c) => `  ${c.spec.name}  ${c.spec.summary}`).join('\n')}\n`);
        return argv.length === 1 ? 2 : 0;
      }
      throw new UsageError(`unknown command "${argv.slice(0, group.length > 0 ? 2 : 1).join(' ')}"`);
    }
    const rest = argv.slice(command.spec.name.split(' ').length);
    const { options, positionals, help, fromFile, warnings } = parseCommand(command.spec, rest, env);
    if (help) {
      process.stdout.write(helpText(command.spec));
      return 0;
    }
    for (const warning of warnings) process.stderr.write(`hangar: warning: ${warning}\n`);
    try {
      return await command.run(options, positionals);
    } catch (err) {
      // A bad value a configuration file gave: the message names the file, the line and the key.
      throw err instanceof UsageError ? locateUsageError(err, fromFile) : err;
    }
  } catch (err) {
    return report(err, command?.spec);
  }
}

function report(err: unknown, spec: CommandSpec | undefined): number {
  if (err instanceof UsageError) {
    process.stderr.write(`hangar: ${err.message} (see "hangar ${spec?.name ?? ''}${spec ? ' ' : ''}--help")\n`);
    return 2;
  }
  if (err instanceof ApiError) {
    process.stderr.write(`hangar: error: the server answered ${err.status}: ${err.messages.join('; ') || 'no message'}\n`);
    return 1;
  }
  const e = err as NodeJS.ErrnoException;
  const detail = e?.code === 'ECONNREFUSED' ? `cannot connect (${e.message}); is the server running?` : (e?.message ?? String(err));
  process.stderr.write(`hangar: error: ${detail.split('\n')[0]}\n`);
  if (process.env.HANGAR_DEBUG) process.stderr.write(`${e?.stack}\n`);
  return 1;
}
