import { parseArgs } from 'node:util';
import { FileSetting, readConfigFile } from './config-file';
import { UsageError } from './usage';

export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  /** Environment variable that supplies the value when the flag is absent. */
  readonly env?: string;
  readonly help: string;
  readonly placeholder?: string;
  /** This option names a configuration file whose keys set the command's other options (see config-file.ts). */
  readonly configFile?: boolean;
  /** Set on the command line (or in the environment) only, never by a configuration file. */
  readonly commandLineOnly?: boolean;
  /** Given twice with two values, refused (where the last one winning would hide a mistake, as with certificate files). */
  readonly once?: boolean;
}

export interface CommandSpec {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Names of the positional arguments (all required). */
  readonly positionals?: readonly string[];
  /**
   * The command whose configuration file the `configFile` option reads, when it is another's (the
   * server's): the file is checked against that command, and the keys this command has apply.
   */
  readonly configFileOf?: CommandSpec;
}

export type ParsedOptions = Record<string, string | boolean | undefined>;

export interface ParsedCommand {
  readonly options: ParsedOptions;
  readonly positionals: string[];
  readonly help: boolean;
  /** The options a configuration file supplied, and where (for messages about their values). */
  readonly fromFile: Readonly<Record<string, FileSetting>>;
  /** What the user should hear about before the command runs (a configuration file's permissions). */
  readonly warnings: readonly string[];
}

/**
 * Parses flags strictly (`--name` or, as the public services' users type them, `-name`). An option
 * takes its value from the command line, else from its environment variable, else from the
 * configuration file that the command's `configFile` option names.
 */
export function parseCommand(spec: CommandSpec, argv: readonly string[], env: NodeJS.ProcessEnv): ParsedCommand {
  let parsed;
  try {
    parsed = parseArgs({
      args: longFlags(spec, argv),
      allowPositionals: true,
      strict: true,
      tokens: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        ...Object.fromEntries(Object.entries(spec.options).map(([name, o]) => [name, { type: o.type }])),
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify.*$/s, ''));
  }
  // Otherwise the last value of a flag given twice wins, as commands that add flags to a given line expect.
  const seen = new Map<string, string | undefined>();
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== 'option' || !spec.options[token.name]?.once) continue;
    if (seen.has(token.name) && seen.get(token.name) !== token.value) {
      throw new UsageError(`--${token.name} given twice ("${seen.get(token.name)}" and "${token.value}"): give it once`);
    }
    seen.set(token.name, token.value);
  }
  const options: ParsedOptions = {};
  for (const [name, o] of Object.entries(spec.options)) {
    let value = (parsed.values as Record<string, string | boolean | undefined>)[name];
    const fromEnv = o.env ? env[o.env] : undefined;
    if (value === undefined && fromEnv !== undefined && fromEnv !== '') {
      value = o.type === 'boolean' ? /^(1|true|yes|on)$/i.test(fromEnv) : fromEnv;
    }
    options[name] = value;
  }
  const help = parsed.values.help === true;
  const fromFile: Record<string, FileSetting> = {};
  let warnings: string[] = [];
  const configOption = Object.keys(spec.options).find((name) => spec.options[name].configFile);
  const configFile = configOption && !help ? options[configOption] : undefined;
  if (typeof configFile === 'string') {
    const config = readConfigFile(configFile, spec.configFileOf ?? spec);
    warnings = config.warnings;
    for (const [name, setting] of Object.entries(config.settings)) {
      if (options[name] !== undefined || !Object.hasOwn(spec.options, name)) continue;
      options[name] = setting.value;
      fromFile[name] = setting;
    }
  }
  const expected = spec.positionals ?? [];
  if (!help && parsed.positionals.length !== expected.length) {
    throw new UsageError(
      expected.length === 0
        ? `unexpected argument "${parsed.positionals[0]}"`
        : `expected ${expected.map((p) => p.toUpperCase()).join(' ')}, got ${parsed.positionals.length} argument(s)`,
    );
  }
  return { options, positionals: parsed.positionals, help, fromFile, warnings };
}

/**
 * `-name` (one dash, the public services' style) as `--name`, for the command's own long options only:
 * anything else keeps its meaning (a short option, a value, what follows `--`).
 */
function longFlags(spec: CommandSpec, argv: readonly string[]): string[] {
  const out: string[] = [];
  let takesValue = false;
  for (const [i, arg] of argv.entries()) {
    if (arg === '--' && !takesValue) {
      out.push(...argv.slice(i));
      break;
    }
    const single = /^-([a-z][a-z0-9-]+)(=.*)?$/.exec(arg);
    const name = single?.[1] ?? /^--([a-z0-9-]+)$/.exec(arg)?.[1];
    const option = name !== undefined && Object.hasOwn(spec.options, name) ? spec.options[name] : undefined;
    if (takesValue) {
      out.push(arg);
      takesValue = false;
      continue;
    }
    out.push(single && (option || name === 'help') ? `-${arg}` : arg);
    takesValue = option?.type === 'string' && !arg.includes('=');
  }
  return out;
}

export function helpText(spec: CommandSpec): string {
  const lines = [`Usage: ${spec.usage}`, '', spec.summary, '', 'Options:'];
  const rows = Object.entries(spec.options).map(([name, o]) => {
    const flag = `--${name}${o.type === 'string' ? ` ${o.placeholder ?? 'VALUE'}` : ''}`;
    return [flag, `${o.help}${o.env ? ` [env ${o.env}]` : ''}`];
  });
  rows.push(['-h, --help', 'Show this help']);
  const width = Math.max(...rows.map(([f]) => f.length));
  for (const [flag, text] of rows) lines.push(`  ${flag.padEnd(width)}  ${text}`);
  return `${lines.join('\n')}\n`;
}
