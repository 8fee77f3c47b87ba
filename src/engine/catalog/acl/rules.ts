/**
 * The public ACL rule language, in HCL and in JSON, for the resources the catalog uses. Both forms
 * become the same generic object first (`key_prefix "a/" { policy = "read" }` and
 * `{"key_prefix": {"a/": {"policy": "read"}}}` are one thing), which `interpretRules` then checks.
 *
 * The HCL subset: attributes (`operator = "read"`), labelled blocks (`key "a" { ... }`), nested
 * blocks (`namespace "team" { key_prefix "" { ... } }`), strings with escapes, numbers, booleans,
 * lists, `#`, `//` and block comments, optional commas.
 */

export type Access = 'read' | 'write' | 'deny' | 'list';

/** Resources whose rule is a single value (`acl = "write"`). */
export const FLAT_RESOURCES = ['acl', 'operator', 'keyring', 'mesh', 'peering'] as const;
export type FlatResource = (typeof FLAT_RESOURCES)[number];

/** Resources whose rules name a segment, exactly (`key "a"`) or by prefix (`key_prefix "a/"`). */
export const SEGMENTED_RESOURCES = ['agent', 'event', 'key', 'node', 'query', 'service', 'session', 'namespace'] as const;
export type SegmentedResource = (typeof SEGMENTED_RESOURCES)[number];

export interface SegmentRule {
  readonly resource: SegmentedResource;
  readonly segment: string;
  readonly prefix: boolean;
  readonly access: Access;
}

/** Rules of one scope: the policy's own namespace, or one `namespace`/`namespace_prefix` block. */
export interface RuleSet {
  readonly flat: Partial<Record<FlatResource, Access>>;
  readonly segments: readonly SegmentRule[];
}

export interface ParsedRules extends RuleSet {
  /** `namespace "x" { ... }` (prefix false) and `namespace_prefix "x" { ... }` blocks. */
  readonly namespaces: readonly { readonly name: string; readonly prefix: boolean; readonly rules: RuleSet }[];
}

export class RulesError extends Error {}

/** Parses rules written in HCL or JSON; throws RulesError with a message a user can act on. */
export function parseRules(source: string): ParsedRules {
  const text = source.trim();
  if (text === '') return { flat: {}, segments: [], namespaces: [] };
  let generic: Record<string, unknown>;
  if (text.startsWith('{')) {
    try {
      generic = JSON.parse(text) as Record<string, unknown>;
    } catch (err) {
      throw new RulesError(`Failed to parse ACL rules: invalid JSON: ${(err as Error).message}`);
    }
    if (!isObject(generic)) throw new RulesError('Failed to parse ACL rules: JSON rules must be an object');
  } else {
    generic = new HclParser(text).parseBody(true);
  }
  return interpretRules(generic);
}

// ---------------------------------------------------------------------------------------------
// HCL to a generic object

type Token =
  | { kind: 'ident'; value: string; line: number }
  | { kind: 'string'; value: string; line: number }
  | { kind: 'number'; value: number; line: number }
  | { kind: 'punct'; value: string; line: number }
  | { kind: 'eof'; value: ''; line: number };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  const fail = (message: string): never => {
    throw new RulesError(`Failed to parse ACL rules: line ${line}: ${message}`);
  };
  while (i < text.length) {
    const c = text[i];
    if (c === '\n') {
      line++;
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else if (c === '#' || (c === '/' && text[i + 1] === '/')) {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) fail('unterminated comment');
      for (let j = i; j < end; j++) if (text[j] === '\n') line++;
      i = end + 2;
    } else if (c === '"') {
      let value = '';
      i++;
      for (;;) {
        if (i >= text.length || text[i] === '\n') fail('unterminated string');
        const ch = text[i];
        if (ch === '"') break;
        if (ch === '\\') {
          const next = text[i + 1];
          const escapes: Record<string, string> = { 'n': '\n', 't': '\t', 'r': '\r', '"': '"', '\\': '\\', '/': '/' };
          if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
            value += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
            i += 6;
            continue;
          }
          if (!(next in escapes)) fail(`invalid escape \\${next ?? ''} in string`);
          value += escapes[next];
          i += 2;
          continue;
        }
        value += ch;
        i++;
      }
      i++;
      tokens.push({ kind: 'string', value, line });
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_.-]*/.exec(text.slice(i))!;
      tokens.push({ kind: 'ident', value: m[0], line });
      i += m[0].length;
    } else if (/[-0-9]/.test(c)) {
      const m = /^-?[0-9]+(\.[0-9]+)?/.exec(text.slice(i));
      if (!m) fail(`unexpected "${c}"`);
      tokens.push({ kind: 'number', value: Number(m![0]), line });
      i += m![0].length;
    } else if ('{}[]=,:'.includes(c)) {
      tokens.push({ kind: 'punct', value: c, line });
      i++;
    } else {
      fail(`unexpected "${c}"`);
    }
  }
  tokens.push({ kind: 'eof', value: '', line });
  return tokens;
}

class HclParser {
  private readonly tokens: Token[];
  private pos = 0;

  constructor(text: string) {
    this.tokens = tokenize(text);
  }

  private peek(): Token {
    return this.tokens[this.pos];
  }

  private next(): Token {
    return this.tokens[this.pos++];
  }

  private fail(token: Token, message: string): never {
    throw new RulesError(`Failed to parse ACL rules: line ${token.line}: ${message}`);
  }

  private expect(value: string): void {
    const t = this.next();
    if (t.kind !== 'punct' || t.value !== value) this.fail(t, `expected "${value}", found ${describe(t)}`);
  }

  /** Items until "}" (or the end at top level). */
  parseBody(top: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (;;) {
      const t = this.peek();
      if (t.kind === 'eof') {
        if (!top) this.fail(t, 'missing "}"');
        return out;
      }
      if (t.kind === 'punct' && t.value === '}') {
        if (top) this.fail(t, 'unexpected "}"');
        return out;
      }
      if (t.kind === 'punct' && t.value === ',') {
        this.next();
        continue;
      }
      if (t.kind !== 'ident' && t.kind !== 'string') this.fail(t, `expected a name, found ${describe(t)}`);
      this.next();
      const name = t.value as string;
      const after = this.peek();
      if (after.kind === 'punct' && (after.value === '=' || after.value === ':')) {
        this.next();
        merge(out, name, this.parseValue(), t.line);
        continue;
      }
      // A block: zero or more labels, then a body.
      const labels: string[] = [];
      while (this.peek().kind === 'string') labels.push(this.next().value as string);
      this.expect('{');
      const body = this.parseBody(false);
      this.expect('}');
      let value: unknown = body;
      for (let k = labels.length - 1; k >= 0; k--) value = { [labels[k]]: value };
      merge(out, name, value, t.line);
    }
  }

  private parseValue(): unknown {
    const t = this.next();
    if (t.kind === 'string' || t.kind === 'number') return t.value;
    if (t.kind === 'ident' && (t.value === 'true' || t.value === 'false')) return t.value === 'true';
    if (t.kind === 'punct' && t.value === '{') {
      const body = this.parseBody(false);
      this.expect('}');
      return body;
    }
    if (t.kind === 'punct' && t.value === '[') {
      const items: unknown[] = [];
      for (;;) {
        const p = this.peek();
        if (p.kind === 'punct' && p.value === ']') {
          this.next();
          return items;
        }
        if (p.kind === 'punct' && p.value === ',') {
          this.next();
          continue;
        }
        items.push(this.parseValue());
      }
    }
    return this.fail(t, `expected a value, found ${describe(t)}`);
  }
}

function describe(t: Token): string {
  if (t.kind === 'eof') return 'the end of the rules';
  if (t.kind === 'string') return `the string "${t.value}"`;
  return `"${t.value}"`;
}

/** Repeated blocks (`key "a" {}` twice, or `key "a" {}` and `key "b" {}`) merge into one object. */
function merge(target: Record<string, unknown>, name: string, value: unknown, line: number): void {
  const existing = target[name];
  if (existing === undefined) {
    target[name] = value;
  } else if (isObject(existing) && isObject(value)) {
    for (const [k, v] of Object.entries(value)) merge(existing, k, v, line);
  } else {
    throw new RulesError(`Failed to parse ACL rules: line ${line}: "${name}" is set twice`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// The generic object to rules

const ACCESS_VALUES: Record<string, readonly Access[]> = {
  key: ['read', 'write', 'deny', 'list'],
};
const DEFAULT_ACCESS: readonly Access[] = ['read', 'write', 'deny'];
/** Attributes that segment rules may carry besides `policy` (accepted, not enforced here). */
const EXTRA_ATTRIBUTES: Record<string, readonly string[]> = { service: ['intentions'] };

function interpretRules(generic: Record<string, unknown>): ParsedRules {
  const namespaces: { name: string; prefix: boolean; rules: RuleSet }[] = [];
  const own = interpretScope(generic, true, namespaces);
  return { ...own, namespaces };
}

function interpretScope(
  generic: Record<string, unknown>,
  top: boolean,
  namespaces: { name: string; prefix: boolean; rules: RuleSet }[],
): RuleSet & { policy?: Access } {
  const flat: Partial<Record<FlatResource, Access>> = {};
  const segments: SegmentRule[] = [];
  let policy: Access | undefined;
  for (const [key, value] of Object.entries(generic)) {
    if ((FLAT_RESOURCES as readonly string[]).includes(key)) {
      flat[key as FlatResource] = accessOf(key, value, DEFAULT_ACCESS);
      continue;
    }
    if (!top && key === 'policy') {
      policy = accessOf('namespace', value, DEFAULT_ACCESS);
      continue;
    }
    const prefix = key.endsWith('_prefix');
    const resource = prefix ? key.slice(0, -'_prefix'.length) : key;
    if (resource === 'namespace') {
      if (!top) throw new RulesError(`Failed to parse ACL rules: "${key}" blocks cannot be nested in a namespace block`);
      for (const [name, body] of entries(key, value)) {
        const scope = interpretScope(body, false, namespaces);
        namespaces.push({ name, prefix, rules: { flat: scope.flat, segments: scope.segments } });
        if (scope.policy) segments.push({ resource: 'namespace', segment: name, prefix, access: scope.policy });
      }
      continue;
    }
    if (!(SEGMENTED_RESOURCES as readonly string[]).includes(resource)) {
      throw new RulesError(`Failed to parse ACL rules: unknown resource "${key}"`);
    }
    for (const [segment, body] of entries(key, value)) {
      const allowed = ['policy', ...(EXTRA_ATTRIBUTES[resource] ?? [])];
      for (const attr of Object.keys(body)) {
        if (!allowed.includes(attr)) throw new RulesError(`Failed to parse ACL rules: ${key} "${segment}": unknown attribute "${attr}"`);
      }
      if (body.policy === undefined) throw new RulesError(`Failed to parse ACL rules: ${key} "${segment}": missing policy`);
      const access = accessOf(key, body.policy, ACCESS_VALUES[resource] ?? DEFAULT_ACCESS);
      segments.push({ resource: resource as SegmentedResource, segment, prefix, access });
    }
  }
  return { flat, segments, policy };
}

/** `key "a" {...}` as [["a", {...}], ...]; JSON may also give a list of such objects. */
function entries(key: string, value: unknown): [string, Record<string, unknown>][] {
  const objects = Array.isArray(value) ? value : [value];
  const out: [string, Record<string, unknown>][] = [];
  for (const object of objects) {
    if (!isObject(object)) throw new RulesError(`Failed to parse ACL rules: "${key}" must be a block with a name, e.g. ${key} "name" { policy = "read" }`);
    for (const [name, body] of Object.entries(object)) {
      if (!isObject(body)) throw new RulesError(`Failed to parse ACL rules: ${key} "${name}" must be a block, e.g. ${key} "${name}" { policy = "read" }`);
      out.push([name, body]);
    }
  }
  return out;
}

function accessOf(key: string, value: unknown, allowed: readonly Access[]): Access {
  if (typeof value !== 'string' || !allowed.includes(value as Access)) {
    throw new RulesError(`Invalid ${key} policy: ${JSON.stringify(value)}; use one of ${allowed.map((a) => `"${a}"`).join(', ')}`);
  }
  return value as Access;
}
