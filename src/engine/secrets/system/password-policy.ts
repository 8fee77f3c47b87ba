import { randomInt } from 'node:crypto';
import { parseHcl } from '../../hcl';
import { recordSecret } from '../../leak-watch';
import type { Db } from '../../storage';
import type { SecretsCore } from '../core/core';

/** One `rule "charset"` of a password policy. */
export interface CharsetRule {
  readonly charset: string;
  readonly minChars: number;
}

/** A parsed password policy (Vault's `sys/policies/password`): a length and charset rules. */
export interface PasswordPolicy {
  readonly length: number;
  readonly rules: readonly CharsetRule[];
}

/** Vault's limits: at least 4 characters, at most 100. */
const MIN_LENGTH = 4;
const MAX_LENGTH = 100;

/**
 * The spec's default policy of the database engine: 20 characters with at least one uppercase,
 * lowercase, number and dash (Vault's built-in database password generator).
 */
export const DEFAULT_DATABASE_POLICY: PasswordPolicy = {
  length: 20,
  rules: [
    { charset: 'abcdefghijklmnopqrstuvwxyz', minChars: 1 },
    { charset: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', minChars: 1 },
    { charset: '0123456789', minChars: 1 },
    { charset: '-', minChars: 1 },
  ],
};

const hclOptions = { dialect: 'lenient' as const, document: 'the password policy', error: (line: number, message: string) => new Error(`line ${line}: ${message}`) };

/**
 * Cuts the top-level `rule "<type>" { ... }` blocks out of the text: the shared HCL parser maps
 * blocks by label, so several `rule "charset"` blocks would merge into one. Strings (with escapes)
 * and comments are skipped so that a `}` inside a charset does not end the block.
 */
function splitRules(text: string): { rest: string; rules: Array<{ type: string; body: string }> } {
  const rules: Array<{ type: string; body: string }> = [];
  let rest = '';
  let i = 0;
  const skipString = (j: number) => {
    for (j++; j < text.length && text[j] !== '"'; j++) if (text[j] === '\\') j++;
    return j + 1;
  };
  const skipComment = (j: number) => {
    if (text.startsWith('/*', j)) return text.indexOf('*/', j + 2) < 0 ? text.length : text.indexOf('*/', j + 2) + 2;
    const end = text.indexOf('\n', j);
    return end < 0 ? text.length : end;
  };
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      const end = skipString(i);
      rest += text.slice(i, end);
      i = end;
    } else if (c === '#' || text.startsWith('//', i) || text.startsWith('/*', i)) {
      i = skipComment(i);
    } else {
      const head = /^rule\s*"([^"]*)"\s*\{/.exec(text.slice(i));
      if (head && (i === 0 || /[\s,;]/.test(text[i - 1]))) {
        let j = i + head[0].length;
        let depth = 1;
        while (j < text.length && depth > 0) {
          if (text[j] === '"') {j = skipString(j);} else if (text[j] === '#' || text.startsWith('//', j) || text.startsWith('/*', j)) {j = skipComment(j);} else {
            if (text[j] === '{') depth++;
            if (text[j] === '}') depth--;
            j++;
          }
        }
        if (depth > 0) throw new Error(`rule "${head[1]}" has no closing brace`);
        rules.push({ type: head[1], body: text.slice(i + head[0].length, j - 1) });
        rest += '\n';
        i = j;
      } else {
        rest += c;
        i++;
      }
    }
  }
  return { rest, rules };
}

/** Parses a policy's HCL (or its JSON form); throws a message that names the bad part. */
export function parsePasswordPolicy(text: string): PasswordPolicy {
  const { rest, rules: blocks } = splitRules(text);
  const top = parseHcl(rest, hclOptions);
  const length = top.length;
  if (typeof length !== 'number' || !Number.isInteger(length)) throw new Error('length is required: an integer number of characters');
  if (length < MIN_LENGTH || length > MAX_LENGTH) throw new Error(`length must be between ${MIN_LENGTH} and ${MAX_LENGTH}, not ${length}`);
  const unknown = Object.keys(top).filter((k) => k !== 'length');
  if (unknown.length) throw new Error(`unknown fields: ${unknown.join(', ')}`);
  const rules: CharsetRule[] = blocks.map(({ type, body }) => {
    if (type !== 'charset') throw new Error(`rule "${type}" is not supported: use rule "charset"`);
    const fields = parseHcl(body, hclOptions);
    const charset = fields.charset;
    const minChars = fields['min-chars'] ?? 0;
    if (typeof charset !== 'string' || charset === '') throw new Error('rule "charset": charset is required: the characters it allows');
    if (typeof minChars !== 'number' || !Number.isInteger(minChars) || minChars < 0) throw new Error('rule "charset": min-chars must be an integer of 0 or more');
    return { charset: [...new Set(charset)].join(''), minChars };
  });
  if (rules.length === 0) throw new Error('at least one rule "charset" is required');
  const minimum = rules.reduce((sum, r) => sum + r.minChars, 0);
  if (minimum > length) throw new Error(`the rules need ${minimum} characters but length is ${length}`);
  return { length, rules };
}

// The characters of a policy's rules, split once per policy object (the default policy is one).
const charsets = new WeakMap<PasswordPolicy, { all: readonly string[]; sets: ReadonlyArray<readonly string[]> }>();

function charsetsOf(policy: PasswordPolicy) {
  let split = charsets.get(policy);
  if (!split) {
    split = { all: [...new Set(policy.rules.flatMap((r) => [...r.charset]))], sets: policy.rules.map((r) => [...r.charset]) };
    charsets.set(policy, split);
  }
  return split;
}

/**
 * A password under a policy: each rule's minimum first, the rest from the union of the charsets,
 * then shuffled (Fisher-Yates), all from node:crypto's uniform randomInt.
 */
export function generatePassword(policy: PasswordPolicy): string {
  const { all, sets } = charsetsOf(policy);
  const chars: string[] = [];
  policy.rules.forEach((rule, r) => {
    for (let n = 0; n < rule.minChars; n++) chars.push(sets[r][randomInt(sets[r].length)]);
  });
  while (chars.length < policy.length) chars.push(all[randomInt(all.length)]);
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j], chars[i]];
  }
  const password = chars.join('');
  recordSecret('password', password);
  return password;
}

const key = (name: string) => `password-policy/${name}`;

/** Stored policies live sealed in the `sys/` mount's storage. */
async function sysStore(core: SecretsCore, db: Db) {
  const sys = await core.mounts.get(db, 'sys/');
  if (!sys) throw new Error('the sys/ mount is missing');
  return core.store(db, sys);
}

export async function readPasswordPolicy(core: SecretsCore, db: Db, name: string): Promise<string | undefined> {
  return (await sysStore(core, db)).get<string>(key(name));
}

export async function writePasswordPolicy(core: SecretsCore, db: Db, name: string, text: string): Promise<void> {
  await (await sysStore(core, db)).put(key(name), text);
}

export async function deletePasswordPolicy(core: SecretsCore, db: Db, name: string): Promise<void> {
  await (await sysStore(core, db)).delete(key(name));
}

export async function passwordPolicyNames(core: SecretsCore, db: Db): Promise<string[]> {
  return (await sysStore(core, db)).list('password-policy/');
}

/**
 * A password from the named policy (engines' `password_policy`), else from `fallback`.
 * A named policy that does not exist is an error, as in Vault.
 */
export async function passwordFor(core: SecretsCore, db: Db, name: string | undefined, fallback: PasswordPolicy): Promise<string> {
  if (!name) return generatePassword(fallback);
  const text = await readPasswordPolicy(core, db, name);
  // Vault's message (GeneratePasswordFromPolicy), and which policy.
  if (text === undefined) throw new Error(`no password policy found (password policy "${name}" does not exist)`);
  return generatePassword(parsePasswordPolicy(text));
}
