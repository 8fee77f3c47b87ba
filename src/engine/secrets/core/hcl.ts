/**
 * The subset of HCL that ACL policies are written in: blocks with string labels, attributes whose
 * values are strings, numbers, booleans, lists and objects, and `#`, `//`, `/* *\/` comments.
 * Blocks become objects keyed by their labels (`path "a" { ... }` is `{ path: { a: { ... } } }`),
 * the same shape as the JSON form of a policy.
 */
export type HclValue = string | number | boolean | HclValue[] | HclObject;
export interface HclObject {
  [key: string]: HclValue;
}

type Token = { kind: 'string' | 'ident' | 'number' | 'punct'; value: string; line: number };

export function parseHcl(text: string): HclObject {
  const tokens = tokenize(text);
  let i = 0;
  const fail = (message: string): never => {
    const line = tokens[Math.min(i, tokens.length - 1)]?.line ?? 1;
    throw new Error(`policy syntax error at line ${line}: ${message}`);
  };
  const peek = () => tokens[i];
  const next = () => tokens[i++] ?? fail('unexpected end of the policy');
  const expect = (value: string) => {
    const t = next();
    if (t.kind !== 'punct' || t.value !== value) fail(`expected "${value}", found "${t.value}"`);
  };

  function body(closing: string | undefined): HclObject {
    const out: HclObject = {};
    for (;;) {
      const t = peek();
      if (!t) {
        if (closing) fail(`missing "${closing}"`);
        return out;
      }
      if (t.kind === 'punct' && t.value === closing) {
        i++;
        return out;
      }
      if (t.kind === 'punct' && t.value === ',') {
        i++;
        continue;
      }
      if (t.kind !== 'ident' && t.kind !== 'string') fail(`unexpected "${t.value}"`);
      const key = next().value;
      const after = peek();
      if (after?.kind === 'punct' && (after.value === '=' || after.value === ':')) {
        i++;
        out[key] = parseValue();
        continue;
      }
      // A block: key "label" ... { body }
      const labels: string[] = [];
      while (peek()?.kind === 'string') labels.push(next().value);
      expect('{');
      let target = out;
      const path = [key, ...labels];
      for (const label of path.slice(0, -1)) {
        const existing = target[label];
        target = (target[label] = existing && typeof existing === 'object' && !Array.isArray(existing) ? existing : {}) as HclObject;
      }
      const last = path[path.length - 1];
      const inner = body('}');
      const existing = target[last];
      target[last] = existing && typeof existing === 'object' && !Array.isArray(existing) ? { ...existing, ...inner } : inner;
    }
  }

  function parseValue(): HclValue {
    const t = next();
    if (t.kind === 'string') return t.value;
    if (t.kind === 'number') return Number(t.value);
    if (t.kind === 'ident') {
      if (t.value === 'true' || t.value === 'false') return t.value === 'true';
      return fail(`unexpected "${t.value}": strings need double quotes`);
    }
    if (t.value === '[') {
      const list: HclValue[] = [];
      for (;;) {
        const p = peek();
        if (p?.kind === 'punct' && p.value === ']') {
          i++;
          return list;
        }
        list.push(parseValue());
        const sep = peek();
        if (sep?.kind === 'punct' && sep.value === ',') i++;
        else if (!(sep?.kind === 'punct' && sep.value === ']')) fail('expected "," or "]" in a list');
      }
    }
    if (t.value === '{') return body('}');
    return fail(`unexpected "${t.value}"`);
  }

  return body(undefined);
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  let i = 0;
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
      if (end < 0) throw new Error(`policy syntax error at line ${line}: unterminated comment`);
      line += text.slice(i, end).split('\n').length - 1;
      i = end + 2;
    } else if (c === '"') {
      let value = '';
      i++;
      for (;;) {
        if (i >= text.length || text[i] === '\n') throw new Error(`policy syntax error at line ${line}: unterminated string`);
        const ch = text[i];
        if (ch === '"') break;
        if (ch === '\\') {
          const esc = text[i + 1];
          value += esc === 'n' ? '\n' : esc === 't' ? '\t' : esc;
          i += 2;
        } else {
          value += ch;
          i++;
        }
      }
      i++;
      tokens.push({ kind: 'string', value, line });
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_.-]*/.exec(text.slice(i))![0];
      tokens.push({ kind: 'ident', value: m, line });
      i += m.length;
    } else if (/[-0-9]/.test(c)) {
      const m = /^-?[0-9]+(\.[0-9]+)?/.exec(text.slice(i))?.[0];
      if (!m) throw new Error(`policy syntax error at line ${line}: unexpected "${c}"`);
      tokens.push({ kind: 'number', value: m, line });
      i += m.length;
    } else if ('={}[],:'.includes(c)) {
      tokens.push({ kind: 'punct', value: c, line });
      i++;
    } else {
      throw new Error(`policy syntax error at line ${line}: unexpected "${c}"`);
    }
  }
  return tokens;
}
