/**
 * The subset of HCL that the catalog's ACL rules and the secrets service's policies are written in:
 * attributes (`operator = "read"`), labelled and nested blocks (`key "a" { ... }`), strings with
 * escapes, numbers, booleans, lists, objects, `#`, `//` and block comments, optional commas between
 * items. Blocks become objects keyed by their labels (`path "a" { ... }` is `{ path: { a: { ... } } }`),
 * the same shape as the JSON form of a policy; each service interprets that tree itself.
 */
import { MAX_JSON_DEPTH } from './http/json-body';

export type HclValue = string | number | boolean | HclValue[] | HclObject;
export interface HclObject {
  [key: string]: HclValue;
}

/** Where the two services' dialects differ (each kept as it was). */
export interface HclOptions {
  /** Builds the error thrown for a syntax error found at a line. */
  readonly error: (line: number, message: string) => Error;
  /**
   * 'strict': JSON escapes only (`\n \t \r \" \\ \/ \uXXXX`), others are errors; list items may
   * omit commas; a name given twice merges blocks deeply and is an error for other values.
   * 'lenient': `\n` and `\t`, any other escaped character stands for itself; list items need commas;
   * a repeated attribute replaces the earlier one, a repeated block merges over it shallowly.
   */
  readonly dialect: 'strict' | 'lenient';
  /** What the text is, for messages ("found the end of the rules"). */
  readonly document: string;
  /**
   * Told the line of each attribute and block as it is read, with its path in the tree (a block's
   * labels included: `listener "a" { address = "x" }` is `["listener", "a", "address"]` at its line).
   */
  readonly keyLine?: (path: readonly string[], line: number) => void;
  /** Accepts a JSON document too (`{ "key": value }`, an object at the top): the same tree as its HCL form. */
  readonly json?: boolean;
}

type Token =
  | { kind: 'ident' | 'string' | 'punct'; value: string; line: number }
  | { kind: 'number'; value: number; line: number }
  | { kind: 'eof'; value: ''; line: number };

/** Blocks, lists and objects nest at most as deep as a JSON request body may (the parser recurses once per level). */
const MAX_DEPTH = MAX_JSON_DEPTH;

const STRICT_ESCAPES: Record<string, string> = { 'n': '\n', 't': '\t', 'r': '\r', '"': '"', '\\': '\\', '/': '/' };

export function parseHcl(text: string, options: HclOptions): HclObject {
  const strict = options.dialect === 'strict';
  const tokens = tokenize(text, options);
  let pos = 0;
  const peek = () => tokens[pos];
  const next = () => tokens[pos++];
  const fail = (t: Token, message: string): never => {
    throw options.error(t.line, message);
  };
  const isPunct = (t: Token, value: string) => t.kind === 'punct' && t.value === value;
  let depth = 0;
  /** Enters a block, list or object: a text nested deeper than MAX_DEPTH is refused, not parsed to the stack's end. */
  const enter = (t: Token) => {
    if (++depth > MAX_DEPTH) fail(t, `nested deeper than ${MAX_DEPTH} levels`);
  };
  const expect = (value: string) => {
    const t = next();
    if (!isPunct(t, value)) fail(t, `expected "${value}", found ${describe(t, options.document)}`);
  };

  /** Items until "}" (consumed), or the end of the text at top level. */
  function body(top: boolean, prefix: readonly string[]): HclObject {
    const out: HclObject = {};
    for (;;) {
      const t = peek();
      if (t.kind === 'eof') {
        if (!top) fail(t, 'missing "}"');
        return out;
      }
      if (isPunct(t, '}')) {
        if (top) fail(t, 'unexpected "}"');
        next();
        return out;
      }
      if (isPunct(t, ',')) {
        next();
        continue;
      }
      if (t.kind !== 'ident' && t.kind !== 'string') fail(t, `expected a name, found ${describe(t, options.document)}`);
      next();
      const name = t.value as string;
      const after = peek();
      if (isPunct(after, '=') || isPunct(after, ':')) {
        next();
        options.keyLine?.([...prefix, name], t.line);
        const value = parseValue([...prefix, name]);
        if (strict) merge(out, name, value, t.line);
        else out[name] = value;
        continue;
      }
      // A block: zero or more labels, then a body.
      const labels: string[] = [];
      while (peek().kind === 'string') labels.push(next().value as string);
      options.keyLine?.([...prefix, name, ...labels], t.line);
      // Each label is a level of the tree too (`path "a" "b" {}` is `{ path: { a: { b: {} } } }`).
      if (depth + labels.length >= MAX_DEPTH) fail(peek(), `nested deeper than ${MAX_DEPTH} levels`);
      enter(peek());
      expect('{');
      const inner = body(false, [...prefix, name, ...labels]);
      depth--;
      if (strict) {
        let value: HclValue = inner;
        for (let k = labels.length - 1; k >= 0; k--) value = { [labels[k]]: value };
        merge(out, name, value, t.line);
      } else {
        let target = out;
        const path = [name, ...labels];
        for (const label of path.slice(0, -1)) target = (target[label] = isObject(target[label]) ? target[label] : {}) as HclObject;
        const last = path[path.length - 1];
        const existing = target[last];
        target[last] = isObject(existing) ? { ...existing, ...inner } : inner;
      }
    }
  }

  function parseValue(path: readonly string[]): HclValue {
    const t = next();
    if (t.kind === 'string' || t.kind === 'number') return t.value;
    if (t.kind === 'ident') {
      if (t.value === 'true' || t.value === 'false') return t.value === 'true';
      return fail(t, `unexpected "${t.value}": strings need double quotes`);
    }
    if (isPunct(t, '{')) {
      enter(t);
      const inner = body(false, path);
      depth--;
      return inner;
    }
    if (isPunct(t, '[')) {
      enter(t);
      const items: HclValue[] = [];
      for (;;) {
        const p = peek();
        if (isPunct(p, ']')) {
          next();
          depth--;
          return items;
        }
        if (strict && isPunct(p, ',')) {
          next();
          continue;
        }
        items.push(parseValue(path));
        const sep = peek();
        if (!strict && !isPunct(sep, ']')) {
          if (!isPunct(sep, ',')) fail(sep, 'expected "," or "]" in a list');
          next();
        }
      }
    }
    return fail(t, `expected a value, found ${describe(t, options.document)}`);
  }

  /** Repeated blocks (`key "a" {}` twice, or `key "a" {}` and `key "b" {}`) merge into one object. */
  function merge(target: HclObject, name: string, value: HclValue, line: number): void {
    const existing = target[name];
    if (existing === undefined) {
      target[name] = value;
    } else if (isObject(existing) && isObject(value)) {
      for (const [k, v] of Object.entries(value)) merge(existing, k, v, line);
    } else {
      throw options.error(line, `"${name}" is set twice`);
    }
  }

  if (options.json && isPunct(peek(), '{')) {
    const t = next();
    enter(t);
    const tree = body(false, []);
    depth--;
    if (peek().kind !== 'eof') fail(peek(), `expected the end of ${options.document}, found ${describe(peek(), options.document)}`);
    return tree;
  }
  return body(true, []);
}

function describe(t: Token, document: string): string {
  if (t.kind === 'eof') return `the end of ${document}`;
  if (t.kind === 'string') return `the string "${t.value}"`;
  return `"${t.value}"`;
}

function isObject(value: unknown): value is HclObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function tokenize(text: string, options: HclOptions): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  const fail = (message: string): never => {
    throw options.error(line, message);
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
        if (ch !== '\\') {
          value += ch;
          i++;
          continue;
        }
        const esc = text[i + 1];
        if (options.dialect === 'lenient') {
          value += esc === 'n' ? '\n' : esc === 't' ? '\t' : esc;
        } else if (esc === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          value += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
          i += 4;
        } else {
          if (!(esc in STRICT_ESCAPES)) fail(`invalid escape \\${esc ?? ''} in string`);
          value += STRICT_ESCAPES[esc];
        }
        i += 2;
      }
      i++;
      tokens.push({ kind: 'string', value, line });
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_.-]*/.exec(text.slice(i))![0];
      tokens.push({ kind: 'ident', value: m, line });
      i += m.length;
    } else if (/[-0-9]/.test(c)) {
      const m = /^-?[0-9]+(\.[0-9]+)?/.exec(text.slice(i))?.[0] ?? fail(`unexpected "${c}"`);
      tokens.push({ kind: 'number', value: Number(m), line });
      i += m.length;
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
