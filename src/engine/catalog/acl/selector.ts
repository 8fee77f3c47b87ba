/**
 * Binding rule selectors: the public service's boolean expression language, over the variables an
 * auth method projects from an identity (`value.<name>` strings, `list.<name>` lists of strings).
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
}

/** The names a selector may use: `value.<v>` for each value, `list.<l>` for each list. */
export interface SelectableNames {
  readonly values: readonly string[];
  readonly lists: readonly string[];
}

type Node =
  | { op: 'and' | 'or'; left: Node; right: Node }
  | { op: 'not'; inner: Node }
  | { op: '==' | '!=' | 'contains' | 'matches' | 'in'; negate: boolean; selector: string[]; value: string; regex?: RegExp }
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

  constructor(
    private readonly tokens: Token[],
    private readonly names: SelectableNames,
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
      this.pos++;
      return { op: 'not', inner: this.unary() };
    }
    const t = this.peek();
    if (t?.kind === 'op' && t.text === '(') {
      this.pos++;
      const inner = this.or();
      const close = this.peek();
      if (close?.kind !== 'op' || close.text !== ')') this.fail('expected ")"');
      this.pos++;
      return inner;
    }
    return this.match();
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
      let regex: RegExp | undefined;
      if (op === 'matches') {
        try {
          regex = new RegExp(value);
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
    if (first?.kind !== 'word') this.fail('expected a selector such as value.name');
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
    const [kind, name, ...rest] = parts;
    const known = kind === 'value' ? this.names.values : kind === 'list' ? this.names.lists : [];
    if (name === undefined || rest.length > 0 || !known.includes(name)) {
      throw new SelectorError(`Selector ${JSON.stringify(parts.join('.'))} is not valid`);
    }
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

/** A parsed selector; `matches` evaluates it. An empty selector matches every identity. */
export class Selector {
  static parse(source: string, names: SelectableNames): Selector {
    if (source.trim() === '') return new Selector(undefined);
    return new Selector(new Parser(tokenize(source), names).parse());
  }

  private constructor(private readonly root: Node | undefined) {}

  matches(vars: Variables): boolean {
    return this.root === undefined || evaluate(this.root, vars);
  }
}

function lookup(selector: string[], vars: Variables): string | readonly string[] {
  const [kind, name] = selector;
  return kind === 'value' ? (vars.values[name] ?? '') : (vars.lists[name] ?? []);
}

function evaluate(node: Node, vars: Variables): boolean {
  switch (node.op) {
    case 'and':
      return evaluate(node.left, vars) && evaluate(node.right, vars);
    case 'or':
      return evaluate(node.left, vars) || evaluate(node.right, vars);
    case 'not':
      return !evaluate(node.inner, vars);
    case 'empty': {
      const v = lookup(node.selector, vars);
      return (v.length === 0) !== node.negate;
    }
    default: {
      const v = lookup(node.selector, vars);
      let result: boolean;
      if (node.op === '==') result = typeof v === 'string' ? v === node.value : v.length === 1 && v[0] === node.value;
      else if (node.op === '!=') result = typeof v === 'string' ? v !== node.value : !(v.length === 1 && v[0] === node.value);
      else if (node.op === 'matches') result = typeof v === 'string' ? node.regex!.test(v) : v.some((x) => node.regex!.test(x));
      else result = typeof v === 'string' ? v.includes(node.value) : v.includes(node.value);
      return result !== node.negate;
    }
  }
}
