import { parseArgs } from 'node:util';
import { UsageError } from './usage';

export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  /** Environment variable that supplies the value when the flag is absent. */
  readonly env?: string;
  readonly help: string;
  readonly placeholder?: string;
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
}

export type ParsedOptions = Record<string, string | boolean | undefined>;

/** Parses flags strictly; flags fall back to their environment variables. */
export function parseCommand(
  spec: CommandSpec,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): { options: ParsedOptions; positionals: string[]; help: boolean } {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
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
  const expected = spec.positionals ?? [];
  if (!help && parsed.positionals.length !== expected.length) {
    throw new UsageError(
      expected.length === 0
        ? `unexpected argument "${parsed.positionals[0]}"`
        : `expected ${expected.map((p) => p.toUpperCase()).join(' ')}, got ${parsed.positionals.length} argument(s)`,
    );
  }
  return { options, positionals: parsed.positionals, help };
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
