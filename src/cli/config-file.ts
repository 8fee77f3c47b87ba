import { readFileSync, statSync } from 'node:fs';
import type { CommandSpec } from './options';
import { UsageError } from './usage';
import type { HclObject, HclValue } from '../engine/hcl';

/** One option set by a configuration file, and where. */
export interface FileSetting {
  readonly value: string | boolean;
  readonly file: string;
  readonly line: number;
  /** The key as written, its blocks' names and labels first (`listener.secrets.address`). */
  readonly key: string;
}

/** A value with a password in it (`postgres://user:secret@host/db`): the file then holds a credential. */
const CREDENTIAL = /^[a-z][a-z0-9+.-]*:\/\/[^/@:]*:[^/@]+@/i;

/**
 * Reads a configuration file (HCL, or its JSON form) into the options of `spec` it sets. The keys
 * map to flags by their names, so that every option of the command has a key without a table here:
 *
 * - `a_b = v` at the top is `--a-b`;
 * - `listener "L" { address = "..." }` is `--L-addr`, any other `k = v` in it `--L-k`
 *   (`tls_require_and_verify_client_cert = true`, the public services' name, is `--L-tls-client-auth require`);
 * - `storage "K" { k = v }` is `--storage K` and `--K-k` (`storage "sqlite" { path }` is `--data`);
 * - any other block `X { k = v }` is `--X-k`.
 *
 * A key that names no option (or one the command line alone may set), a value of the wrong type, or an
 * option set twice is a UsageError naming the file, the line and the key. Also answers warnings about
 * the file's permissions.
 */
export function readConfigFile(
  file: string,
  spec: CommandSpec,
): { settings: Record<string, FileSetting>; warnings: string[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read the configuration file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  // Loaded here: commands without a configuration file do not evaluate the parser (and what it imports).
  const { parseHcl } = require('../engine/hcl') as typeof import('../engine/hcl');
  const lines = new Map<string, number>();
  const tree = parseHcl(text, {
    dialect: 'strict',
    json: true,
    document: 'the configuration file',
    error: (line, message) => new UsageError(`${file}:${line}: ${message}`),
    keyLine: (path, line) => lines.set(path.join('.'), line),
  });
  const lineOf = (path: readonly string[]) => lines.get(path.join('.')) ?? 1;
  const settings: Record<string, FileSetting> = {};
  for (const { path, flag, value } of entries(tree, spec)) {
    const key = path.join('.');
    const line = lineOf(path);
    const fail = (message: string): never => {
      throw new UsageError(`${file}:${line}: ${key}: ${message}`);
    };
    const option = Object.hasOwn(spec.options, flag) ? spec.options[flag] : undefined;
    if (!option) {
      const hint = path[0] === 'listener' ? '; a listener is named as its flags are: listener "secrets" sets --secrets-addr' : '';
      fail(`unknown key (it would set --${flag}, which "hangar ${spec.name}" does not have${hint})`);
    }
    if (option!.commandLineOnly) fail(`--${flag} is set on the command line only, not in a configuration file`);
    const typed = option!.type === 'boolean' ? booleanValue(value) : stringValue(value);
    if (typed === undefined) fail(`expected ${option!.type === 'boolean' ? 'true or false' : 'a string or a number'}, not ${describe(value)}`);
    const earlier = settings[flag];
    if (earlier) fail(`--${flag} is already set at line ${earlier.line} (${earlier.key})`);
    settings[flag] = { value: typed!, file, line, key };
  }
  return { settings, warnings: permissionWarnings(file, Object.values(settings)) };
}

interface Entry {
  readonly path: readonly string[];
  readonly flag: string;
  readonly value: HclValue;
}

const flagName = (...parts: string[]) => parts.join('-').replace(/_/g, '-');

function entries(tree: HclObject, spec: CommandSpec): Entry[] {
  const out: Entry[] = [];
  const has = (flag: string) => Object.hasOwn(spec.options, flag);
  for (const [name, value] of Object.entries(tree)) {
    if (!isObject(value)) {
      out.push({ path: [name], flag: flagName(name), value });
      continue;
    }
    if (name === 'listener' || name === 'storage') {
      const labels = Object.entries(value);
      if (name === 'storage') {
        if (labels.length !== 1) out.push({ path: [name], flag: 'storage', value: labels.map(([label]) => label) });
        else out.push({ path: [name, labels[0][0]], flag: 'storage', value: labels[0][0] });
      }
      for (const [label, body] of labels) {
        if (!isObject(body)) {
          out.push({ path: [name, label], flag: flagName(name, label), value: body });
          continue;
        }
        for (const [key, v] of Object.entries(body)) {
          const path = [name, label, key];
          if (name === 'storage') {
            out.push({ path, flag: label === 'sqlite' && key === 'path' ? 'data' : flagName(label, key), value: v });
          } else if (key === 'address') {
            out.push({ path, flag: flagName(label, 'addr'), value: v });
          } else if (key === 'tls_require_and_verify_client_cert' && !has(flagName(label, key)) && has(flagName(label, 'tls-client-auth'))) {
            // The public services' boolean, as the value of Hangar's mode flag (false: the flag's default).
            if (v !== false) out.push({ path, flag: flagName(label, 'tls-client-auth'), value: v === true ? 'require' : v });
          } else {
            out.push({ path, flag: flagName(label, key), value: v });
          }
        }
      }
      continue;
    }
    for (const [key, v] of Object.entries(value)) out.push({ path: [name, key], flag: flagName(name, key), value: v });
  }
  return out;
}

function booleanValue(value: HclValue): boolean | undefined {
  return typeof value === 'boolean' ? value : undefined;
}

function stringValue(value: HclValue): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

function describe(value: HclValue): string {
  if (Array.isArray(value)) return 'a list';
  if (isObject(value)) return 'a block';
  return typeof value === 'string' ? `the string "${value}"` : `${typeof value} ${String(value)}`;
}

function isObject(value: unknown): value is HclObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Anyone who may write the file runs the server as they like; anyone who may read it reads its credentials. */
function permissionWarnings(file: string, settings: readonly FileSetting[]): string[] {
  if (process.platform === 'win32') return [];
  /* eslint-disable no-bitwise -- permission bits */
  const mode = statSync(file).mode;
  const warnings: string[] = [];
  if (mode & 0o022) warnings.push(`the configuration file ${file} may be written by others than its owner (mode ${(mode & 0o777).toString(8)}): chmod go-w`);
  const readable = (mode & 0o004) !== 0;
  /* eslint-enable no-bitwise */
  const secret = settings.find((s) => typeof s.value === 'string' && CREDENTIAL.test(s.value));
  if (secret && readable) {
    warnings.push(
      `the configuration file ${file} holds a password (${secret.key}, line ${secret.line}) and every user may read it: chmod o-r, or pass it in the environment instead`,
    );
  }
  return warnings;
}

/**
 * A UsageError about an option a configuration file set (the command's checks name the flag: "--log-level
 * must be ..."), with the file, line and key in front, so the operator finds what to fix.
 */
export function locateUsageError(err: UsageError, settings: Readonly<Record<string, FileSetting>>): UsageError {
  for (const match of err.message.matchAll(/--([a-z0-9-]+)/g)) {
    const setting = Object.hasOwn(settings, match[1]) ? settings[match[1]] : undefined;
    if (setting) return new UsageError(`${setting.file}:${setting.line}: ${setting.key}: ${err.message}`);
  }
  return err;
}
