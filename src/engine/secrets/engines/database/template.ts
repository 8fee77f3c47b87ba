import { createHash, randomInt, randomUUID } from 'node:crypto';
import { badInput } from '../../core/request';
import type { SecretsRequest } from '../../core/types';

/**
 * Vault's username templates (sdk/helper/template): Go text/template with the functions Vault
 * adds. Supported here: `{{ .Field }}`, pipelines with `|`, parentheses, string and number
 * literals, and the functions printf (%s %d %v), truncate, truncate_sha256, uppercase, lowercase,
 * replace, sha256, base64, random, uuid, unix_time, unix_time_millis. Callers may add functions
 * (the `ldap` engine's LDIF templates add `utf16le`).
 */

/** Text, a number, or bytes (what `utf16le` makes, for `base64` to encode). */
type Value = string | number | Buffer;
/** A template function: its arguments (a piped value last) and the render's time. */
export type Fn = (args: Value[], now: number) => Value;
const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

const FUNCTIONS: Record<string, Fn> = {
  printf: ([format, ...args]) => {
    let i = 0;
    return String(format).replace(/%([sdvq%])/g, (_m, verb: string) => {
      if (verb === '%') return '%';
      const arg = args[i++];
      if (arg === undefined) return `%!${verb}(MISSING)`;
      // %q: a double-quoted string with Go's escapes (JSON's for the characters a password holds).
      return verb === 'q' ? JSON.stringify(String(arg)) : String(arg);
    });
  },
  truncate: ([n, s]) => String(s).slice(0, Number(n)),
  truncate_sha256: ([n, s]) => {
    const text = String(s);
    const max = Number(n);
    if (text.length <= max) return text;
    return text.slice(0, max - 8) + createHash('sha256').update(text.slice(max - 8)).digest('hex').slice(0, 8);
  },
  uppercase: ([s]) => String(s).toUpperCase(),
  lowercase: ([s]) => String(s).toLowerCase(),
  replace: ([from, to, s]) => String(s).split(String(from)).join(String(to)),
  sha256: ([s]) => createHash('sha256').update(String(s)).digest('hex'),
  base64: ([s]) => (Buffer.isBuffer(s) ? s : Buffer.from(String(s))).toString('base64'),
  random: ([n]) => {
    let out = '';
    for (let i = 0; i < Number(n); i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
    return out;
  },
  uuid: () => randomUUID(),
  unix_time: (_a, now) => Math.floor(now / 1000),
  unix_time_millis: (_a, now) => now,
};

type Token = { kind: 'field' | 'ident' | 'string' | 'number' | '(' | ')' | '|'; value: string };

function tokenize(action: string): Token[] {
  const tokens: Token[] = [];
  const re = /\s*(?:(\.[A-Za-z_][A-Za-z0-9_]*)|([A-Za-z_][A-Za-z0-9_]*)|"((?:[^"\\]|\\.)*)"|`([^`]*)`|(-?\d+)|([()|]))/y;
  let pos = 0;
  while (pos < action.length) {
    if (/^\s*$/.test(action.slice(pos))) break;
    re.lastIndex = pos;
    const m = re.exec(action);
    if (!m) throw new Error(`cannot read "${action.slice(pos).trim()}"`);
    pos = re.lastIndex;
    if (m[1]) tokens.push({ kind: 'field', value: m[1].slice(1) });
    else if (m[2]) tokens.push({ kind: 'ident', value: m[2] });
    else if (m[3] !== undefined) tokens.push({ kind: 'string', value: JSON.parse(`"${m[3]}"`) as string });
    else if (m[4] !== undefined) tokens.push({ kind: 'string', value: m[4] });
    else if (m[5]) tokens.push({ kind: 'number', value: m[5] });
    else tokens.push({ kind: m[6] as '(' | ')' | '|', value: m[6] });
  }
  return tokens;
}

// Tokens by action: a connection renders the same template for every credential it issues.
const tokenized = new Map<string, Token[]>();

function tokensOf(action: string): Token[] {
  let tokens = tokenized.get(action);
  if (!tokens) {
    tokens = tokenize(action);
    if (tokenized.size >= 256) tokenized.clear();
    tokenized.set(action, tokens);
  }
  return tokens;
}

function evaluate(action: string, fields: Readonly<Record<string, string>>, now: number, extra: Readonly<Record<string, Fn>>): Value {
  const tokens = tokensOf(action);
  let pos = 0;
  const operand = (): Value => {
    const t = tokens[pos++];
    if (!t) throw new Error('an operand is missing');
    if (t.kind === 'field') {
      if (!(t.value in fields)) throw new Error(`unknown field .${t.value}: use ${Object.keys(fields).map((f) => `.${f}`).join(', ')}`);
      return fields[t.value];
    }
    if (t.kind === 'string') return t.value;
    if (t.kind === 'number') return Number(t.value);
    if (t.kind === '(') {
      const v = pipeline();
      if (tokens[pos++]?.kind !== ')') throw new Error('missing ")"');
      return v;
    }
    if (t.kind === 'ident') return call(t.value, [], undefined);
    throw new Error(`unexpected "${t.value}"`);
  };
  const call = (name: string, args: Value[], piped: Value | undefined): Value => {
    const fn = extra[name] ?? FUNCTIONS[name];
    if (!fn) throw new Error(`function "${name}" is not defined`);
    return fn(piped === undefined ? args : [...args, piped], now);
  };
  const command = (piped: Value | undefined): Value => {
    const head = tokens[pos];
    if (head?.kind === 'ident') {
      pos++;
      const args: Value[] = [];
      while (pos < tokens.length && tokens[pos].kind !== '|' && tokens[pos].kind !== ')') args.push(operand());
      return call(head.value, args, piped);
    }
    if (piped !== undefined) throw new Error('a value cannot follow "|": use a function');
    return operand();
  };
  const pipeline = (): Value => {
    let value = command(undefined);
    while (tokens[pos]?.kind === '|') {
      pos++;
      value = command(value);
    }
    return value;
  };
  const result = pipeline();
  if (pos < tokens.length) throw new Error(`unexpected "${tokens[pos].value}"`);
  return result;
}

/** Renders a template; throws `username_template: ...` style messages (without the field name). */
export function renderTemplate(
  template: string,
  fields: Readonly<Record<string, string>>,
  now: number,
  extra: Readonly<Record<string, Fn>> = {},
): string {
  let out = '';
  let rest = template;
  for (;;) {
    const open = rest.indexOf('{{');
    if (open < 0) return out + rest;
    const close = rest.indexOf('}}', open);
    if (close < 0) throw new Error('an action has no closing "}}"');
    out += rest.slice(0, open);
    const action = rest.slice(open + 2, close).replace(/^-\s|\s-$/g, '');
    out += String(evaluate(action, fields, now, extra));
    rest = rest.slice(close + 2);
  }
}

/** Checks that a template renders (with sample fields), for validation at write time. */
export function checkTemplate(template: string, fields: readonly string[]): string | undefined {
  try {
    renderTemplate(template, Object.fromEntries(fields.map((f) => [f, 'sample'])), Date.now());
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The fields Vault's engines give a username template: the caller's token display name and the role. */
export const USERNAME_FIELDS = ['DisplayName', 'RoleName'];

/**
 * A new username from a `username_template` (the database and RabbitMQ engines'), with the caller's
 * display name and the role's name; a failing or empty rendering is a 400 naming the field.
 */
export function renderUsername(template: string, req: SecretsRequest, roleName: string): string {
  let username: string;
  try {
    username = renderTemplate(template, { DisplayName: req.caller?.entry.displayName ?? 'root', RoleName: roleName }, req.now);
  } catch (err) {
    throw badInput(`username_template: ${(err as Error).message}`);
  }
  if (!username) throw badInput('username_template: the template gives an empty username');
  return username;
}
