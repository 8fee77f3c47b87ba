import { RE2JS } from 're2js';
import { MAX_JSON_DEPTH } from '../../http/json-body';

/**
 * The public service's boolean expression language (go-bexpr): binding rule selectors, over the
 * variables an auth method projects from an identity (`value.<name>` strings, `list.<name>` lists
 * of strings), and the `?filter=` of list endpoints, over the objects they answer (`Meta.env`,
 * `Tags`, `Node`, `Port`...).
 *
 *   expr     := or
 *   or       := and ("or" and)*
 *   and      := unary ("and" unary)*
 *   unary    := "not" unary | "(" expr ")" | match
 *   match    := selector ("==" | "!=") value
 *             | selector "is" ["not"] "empty"
 *             | value ["not"] "in" selector
 *             | selector ["not"] ("contains" | "matches") value
 *   selector := name ("." name | "[" quoted "]")*
 *   value    := "double quoted" | `raw` | bare
 *
 * A selector is parsed once into a tree; evaluating it never parses again.
 */

export interface Variables {
  readonly values: Readonly<Record<string, string>>;
  readonly lists: Readonly<Record<string, readonly string[]>>;
  /** Variables named in full (`serviceaccount.name` of a kubernetes identity). */
  readonly fields?: Readonly<Record<string, string>>;
}

/** The names a selector may use: `value.<v>` for each value, `list.<l>` for each list, and each field in full. */
export interface SelectableNames {
  readonly values: readonly string[];
  readonly lists: readonly string[];
  readonly fields?: readonly string[];
}

type Node =
  | { op: 'and' | 'or'; left: Node; right: Node }
  | { op: 'not'; inner: Node }
  | { op: '==' | '!=' | 'contains' | 'matches' | 'in'; negate: boolean; selector: string[]; value: string; regex?: { test(text: string): boolean } }
  | { op: 'empty'; negate: boolean; selector: string[] };

export class SelectorError extends Error {}

type Token = { kind: 'word' | 'string' | 'op'; text: string; pos: number };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"' || c === '`') {
      const start = i++;
      let text = '';
      while (i < source.length && source[i] !== c) {
        if (c === '"' && source[i] === '\\' && i + 1 < source.length) {
          const next = source[i + 1];
          text += next === 'n' ? '\n' : next === 't' ? '\t' : next;
          i += 2;
        } else {
          text += source[i++];
        }
      }
      if (i >= source.length) throw new SelectorError(`unterminated string starting at position ${start + 1}`);
      i++;
      tokens.push({ kind: 'string', text, pos: start });
    } else if (c === '(' || c === ')' || c === '[' || c === ']' || c === '.') {
      tokens.push({ kind: 'op', text: c, pos: i++ });
    } else if ((c === '=' || c === '!') && source[i + 1] === '=') {
      tokens.push({ kind: 'op', text: `${c}=`, pos: i });
      i += 2;
    } else {
      const m = /^[^\s()[\]."`=!]+/.exec(source.slice(i));
      if (!m) throw new SelectorError(`unexpected ${JSON.stringify(c)} at position ${i + 1}`);
      tokens.push({ kind: 'word', text: m[0], pos: i });
      i += m[0].length;
    }
  }
  return tokens;
}

class Parser {
  private pos = 0;
  /** Parentheses and `not`s open at this point: the parser recurses once per level, so their depth is bounded. */
  private depth = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly check: SelectorCheck,
  ) {}

  parse(): Node {
    const node = this.or();
    if (this.pos < this.tokens.length) this.fail(`unexpected ${JSON.stringify(this.tokens[this.pos].text)}`);
    return node;
  }

  private peek(offset = 0): Token | undefined {
    return this.tokens[this.pos + offset];
  }

  private isWord(text: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t?.kind === 'word' && t.text === text;
  }

  private fail(message: string): never {
    const t = this.peek();
    throw new SelectorError(t ? `${message} at position ${t.pos + 1}` : `${message} at the end of the selector`);
  }

  private or(): Node {
    let left = this.and();
    while (this.isWord('or')) {
      this.pos++;
      left = { op: 'or', left, right: this.and() };
    }
    return left;
  }

  private and(): Node {
    let left = this.unary();
    while (this.isWord('and')) {
      this.pos++;
      left = { op: 'and', left, right: this.unary() };
    }
    return left;
  }

  private unary(): Node {
    if (this.isWord('not') && !(this.isWord('in', 1) || this.isWord('contains', 1) || this.isWord('matches', 1))) {
      this.enter();
      this.pos++;
      const inner = this.unary();
      this.depth--;
      return { op: 'not', inner };
    }
    const t = this.peek();
    if (t?.kind === 'op' && t.text === '(') {
      this.enter();
      this.pos++;
      const inner = this.or();
      const close = this.peek();
      if (close?.kind !== 'op' || close.text !== ')') this.fail('expected ")"');
      this.pos++;
      this.depth--;
      return inner;
    }
    return this.match();
  }

  private enter(): void {
    if (++this.depth > MAX_JSON_DEPTH) this.fail(`nested deeper than ${MAX_JSON_DEPTH} levels`);
  }

  private match(): Node {
    // `value in selector` starts with a value; everything else with a selector.
    const inAt = this.isWord('in', 1) ? 1 : this.isWord('not', 1) && this.isWord('in', 2) ? 2 : 0;
    if (inAt && this.peek()?.kind !== 'op') {
      const value = this.value();
      const negate = this.isWord('not');
      this.pos += negate ? 2 : 1;
      return { op: 'in', negate, selector: this.selector(), value };
    }
    const selector = this.selector();
    const t = this.peek();
    if (t?.kind === 'op' && (t.text === '==' || t.text === '!=')) {
      this.pos++;
      return { op: t.text, negate: false, selector, value: this.value() };
    }
    if (this.isWord('is')) {
      this.pos++;
      const negate = this.isWord('not');
      if (negate) this.pos++;
      if (!this.isWord('empty')) this.fail('expected "empty"');
      this.pos++;
      return { op: 'empty', negate, selector };
    }
    const negate = this.isWord('not');
    if (negate) this.pos++;
    if (this.isWord('contains') || this.isWord('matches')) {
      const op = this.tokens[this.pos++].text as 'contains' | 'matches';
      const value = this.value();
      let regex: { test(text: string): boolean } | undefined;
      if (op === 'matches') {
        try {
          // RE2 (linear time, Go's syntax, as the public service's): a filter is caller input.
          const re2 = RE2JS.compile(value);
          regex = { test: (text) => re2.matcher(text).find() };
        } catch (err) {
          throw new SelectorError(`invalid regular expression ${JSON.stringify(value)}: ${(err as Error).message}`);
        }
      }
      return { op, negate, selector, value, regex };
    }
    return this.fail('expected an operator (==, !=, is empty, is not empty, in, not in, contains, not contains, matches, not matches)');
  }

  private selector(): string[] {
    const first = this.peek();
    if (first?.kind !== 'word') this.fail('expected a selector such as Meta.name');
    this.pos++;
    const parts = [first!.text];
    for (;;) {
      const t = this.peek();
      if (t?.kind === 'op' && t.text === '.') {
        this.pos++;
        const name = this.peek();
        if (name?.kind !== 'word') this.fail('expected a name after "."');
        parts.push(name!.text);
        this.pos++;
      } else if (t?.kind === 'op' && t.text === '[') {
        this.pos++;
        const key = this.peek();
        if (key?.kind !== 'string') this.fail('expected a quoted name inside "[...]"');
        parts.push(key!.text);
        this.pos++;
        const close = this.peek();
        if (close?.kind !== 'op' || close.text !== ']') this.fail('expected "]"');
        this.pos++;
      } else {
        break;
      }
    }
    if (!this.check(parts)) throw new SelectorError(`Selector ${JSON.stringify(parts.join('.'))} is not valid`);
    return parts;
  }

  private value(): string {
    const t = this.peek();
    if (t?.kind === 'string' || t?.kind === 'word') {
      this.pos++;
      return t.text;
    }
    return this.fail('expected a value');
  }
}

/** Whether a selector path is one the expression may use. */
export type SelectorCheck = (path: readonly string[]) => boolean;

/**
 * A parsed expression; `matches` evaluates it against an object, looking selectors up as paths
 * (through a list, a path collects the field of every element). An empty expression matches all.
 */
export class Expression {
  static parse(source: string, check: SelectorCheck = () => true): Expression {
    if (source.trim() === '') return new Expression(undefined);
    return new Expression(new Parser(tokenize(source), check).parse());
  }

  private constructor(private readonly root: Node | undefined) {}

  matches(subject: unknown): boolean {
    return this.root === undefined || evaluate(this.root, subject);
  }
}

/** A binding rule selector over an identity's variables: `value.<name>` and `list.<name>` of the method's mappings. */
export class Selector {
  static parse(source: string, names: SelectableNames): Selector {
    return new Selector(
      Expression.parse(source, (path) => {
        if (names.fields?.includes(path.join('.'))) return true;
        const [kind, name, ...rest] = path;
        const known = kind === 'value' ? names.values : kind === 'list' ? names.lists : [];
        return name !== undefined && rest.length === 0 && known.includes(name);
      }),
    );
  }

  private constructor(private readonly expression: Expression) {}

  matches(vars: Variables): boolean {
    const subject: Record<string, unknown> = { value: vars.values, list: vars.lists };
    // `serviceaccount.name` becomes {serviceaccount: {name}} for the path lookup.
    for (const [name, value] of Object.entries(vars.fields ?? {})) {
      const [head, ...rest] = name.split('.');
      let at = (subject[head] ??= {}) as Record<string, unknown>;
      for (const part of rest.slice(0, -1)) at = (at[part] ??= {}) as Record<string, unknown>;
      at[rest[rest.length - 1]] = value;
    }
    return this.expression.matches(subject);
  }
}

type Found = string | readonly string[] | Readonly<Record<string, unknown>> | undefined;

/** The value at a path: scalars as their text (80 is "80"), lists of scalars, maps; missing is undefined. */
function lookup(path: readonly string[], subject: unknown): Found {
  let current: unknown[] = [subject];
  let list = false;
  for (const part of path) {
    const next: unknown[] = [];
    for (const value of current) {
      const item = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[part] : undefined;
      if (Array.isArray(item)) {
        list = true;
        next.push(...item);
      } else if (item !== undefined && item !== null) {
        next.push(item);
      }
    }
    current = next;
  }
  if (list) return current.filter((v) => typeof v !== 'object').map(String);
  const [value] = current;
  if (value === undefined) return undefined;
  return typeof value === 'object' ? (value as Record<string, unknown>) : String(value);
}

function evaluate(node: Node, subject: unknown): boolean {
  switch (node.op) {
    case 'and':
    case 'or': {
      // `a and b and c …` parses into a tree as deep as the chain is long: its left spine is walked, not
      // recursed into (a selector of 100,000 terms). `or` is true at the first true term, `and` false at the first false one.
      const rights: Node[] = [];
      let left: Node = node;
      while (left.op === node.op) {
        rights.push(left.right);
        left = left.left;
      }
      const decisive = node.op === 'or';
      if (evaluate(left, subject) === decisive) return decisive;
      for (let i = rights.length - 1; i >= 0; i--) if (evaluate(rights[i], subject) === decisive) return decisive;
      return !decisive;
    }
    case 'not':
      return !evaluate(node.inner, subject);
    case 'empty': {
      const v = lookup(node.selector, subject);
      const empty = v === undefined || (typeof v === 'string' || Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0);
      return empty !== node.negate;
    }
    default: {
      const v = lookup(node.selector, subject) ?? '';
      let result: boolean;
      if (typeof v === 'string') {
        if (node.op === '==' || node.op === '!=') result = (v === node.value) === (node.op === '==');
        else if (node.op === 'matches') result = node.regex!.test(v);
        else result = v.includes(node.value);
      } else if (Array.isArray(v)) {
        const items = v as readonly string[];
        const one = items.length === 1 && items[0] === node.value;
        if (node.op === '==' || node.op === '!=') result = one === (node.op === '==');
        else if (node.op === 'matches') result = items.some((x) => node.regex!.test(x));
        else result = items.includes(node.value);
      } else {
        // A map: `in` and `contains` ask for a key; it equals nothing.
        const keys = Object.keys(v);
        if (node.op === '==' || node.op === '!=') result = node.op === '!=';
        else if (node.op === 'matches') result = keys.some((k) => node.regex!.test(k));
        else result = keys.includes(node.value);
      }
      return result !== node.negate;
    }
  }
}
