import { RE2JS } from 're2js';
import { z } from 'zod';
import { ALPHABETS } from './alphabets';
import { allObjects, listRoute, objectRoute, resolve, writableName } from './objects';
import { badInput } from '../../core/request';
import { EngineRoute, SecretsRequest } from '../../core/types';

export interface Template {
  readonly type: 'regex';
  readonly pattern: string;
  readonly alphabet: string;
  /** FPE: how encoded values are written, `$1`… (or `${1}`) standing for the pattern's groups. */
  readonly encode_format?: string;
  /** FPE: named formats a decode may ask for (`decode_format`), written as `encode_format` is. */
  readonly decode_formats?: Readonly<Record<string, string>>;
}

/** The public service's built-in templates (`builtin/any` serves tokenization, which ignores templates). */
export const TEMPLATES: Readonly<Record<string, Template>> = {
  'builtin/creditcardnumber': { type: 'regex', pattern: '(\\d{4})[- ]?(\\d{4})[- ]?(\\d{4})[- ]?(\\d{4})', alphabet: 'builtin/numeric' },
  'builtin/socialsecuritynumber': { type: 'regex', pattern: '(\\d{3})[- ]?(\\d{2})[- ]?(\\d{4})', alphabet: 'builtin/numeric' },
  'builtin/any': { type: 'regex', pattern: '(.*)', alphabet: '' },
};

/** Where a template's capture groups matched a value: start, end (exclusive) of each group that took part, flat. */
type Spans = number[];
type Matcher = (value: string) => Spans | undefined;

const compiled = new Map<string, RE2JS>();

/** Compiles a pattern with RE2 semantics (no backreferences, no lookaround), refusing nested groups. */
export function compileTemplate(pattern: string): RE2JS {
  let re = compiled.get(pattern);
  if (re) return re;
  try {
    re = RE2JS.compile(pattern);
  } catch (e) {
    throw badInput(`pattern: ${(e as Error).message} (RE2 syntax: no backreferences or lookaround)`);
  }
  if (re.groupCount() < 1) throw badInput('pattern: needs at least one capture group: the groups select the characters to transform');
  // Nested groups would transform the same characters twice: every "(" that opens a capture
  // group must close before the next one opens.
  if (/\((?!\?)[^)]*\((?!\?)/.test(pattern.replace(/\\./g, '').replace(/\[[^\]]*\]/g, ''))) throw badInput('pattern: nested capture groups are not supported');
  if (compiled.size > 1000) compiled.clear();
  compiled.set(pattern, re);
  return re;
}

/** A pattern's groups through RE2JS (linear time whatever the pattern: users' templates). */
function re2Matcher(pattern: string): Matcher {
  const re = compileTemplate(pattern);
  return (value) => {
    const m = re.matcher(value);
    if (!m.find()) return undefined;
    const spans: Spans = [];
    for (let g = 1; g <= m.groupCount(); g++) {
      const start = m.start(g);
      if (start >= 0) spans.push(start, m.end(g));
    }
    return spans;
  };
}

/**
 * The built-in templates' fixed patterns through the native engine, several times faster than
 * RE2JS: they hold no construct where it and RE2 differ (ASCII \\d, classes, optional separators,
 * leftmost-first), and they cannot backtrack badly. Users' patterns always go through RE2JS.
 *
 * Their shape (top-level groups, no alternation or quantified group) lets every stretch between
 * the groups become a group too: the groups then tile the match, so each span follows from the
 * lengths before it, without the `d` flag's index arrays (which cost several times the match).
 */
function nativeMatcher(pattern: string): Matcher {
  const pieces = pattern.split(/(\([^()]*\))/);
  const re = new RegExp(pieces.map((piece, i) => (i % 2 ? piece : `(${piece})`)).join(''));
  return (value) => {
    const m = re.exec(value);
    if (!m) return undefined;
    const spans: Spans = [];
    let at = m.index;
    for (let g = 1; g < m.length; g++) {
      const end = at + m[g].length;
      // Groups alternate: stretch between (odd), template group (even).
      if (g % 2 === 0) spans.push(at, end);
      at = end;
    }
    return spans;
  };
}

// Not builtin/any: RE2's "." stops only at \n, JavaScript's also at \r, U+2028 and U+2029.
const BUILTIN_MATCHERS = new Map(['builtin/creditcardnumber', 'builtin/socialsecuritynumber'].map((n) => [TEMPLATES[n].pattern, nativeMatcher(TEMPLATES[n].pattern)]));
const matcherFor = (pattern: string) => BUILTIN_MATCHERS.get(pattern) ?? re2Matcher(pattern);

/**
 * Where the template's capture groups select characters in a value: [start, end) of each, flat.
 * The first match counts, as in the public service (anchor the pattern to require a whole match).
 * Throws the API's error when the value does not match.
 */
export function templateSpans(template: Template, value: string): readonly number[] {
  const spans = matcherFor(template.pattern)(value);
  if (!spans) throw badInput('value does not match the template pattern');
  // A group inside another (a named one the pattern check cannot see) would be transformed twice.
  for (let g = 2; g < spans.length; g += 2) if (spans[g] < spans[g - 1]) throw badInput('pattern: nested capture groups are not supported');
  return spans;
}

/** The characters a template's capture groups select in a value, and where they are. */
interface TemplateMatch {
  readonly spans: readonly number[];
  /** The selected characters (code points), concatenated in order. */
  readonly chars: string[];
  /** How many of them each span holds. */
  readonly counts: number[];
}

/** The selected characters of a value (see `templateSpans`) as code points, with their spans. */
function matchTemplate(template: Template, value: string): TemplateMatch {
  const spans = templateSpans(template, value);
  const chars: string[] = [];
  const counts: number[] = [];
  for (let g = 0; g < spans.length; g += 2) {
    const before = chars.length;
    for (const c of value.slice(spans[g], spans[g + 1])) chars.push(c);
    counts.push(chars.length - before);
  }
  return { spans, chars, counts };
}

/** The value with the matched characters replaced by `out` (as many code points, in order); the rest kept. */
function fillTemplate(value: string, match: TemplateMatch, out: readonly string[]): string {
  let result = '';
  let at = 0;
  let used = 0;
  for (let g = 0; g < match.spans.length; g += 2) {
    const count = match.counts[g / 2];
    result += value.slice(at, match.spans[g]) + out.slice(used, used + count).join('');
    used += count;
    at = match.spans[g + 1];
  }
  return result + value.slice(at);
}

/**
 * A value rewritten by a format (`encode_format`, a `decode_formats` entry): `$N` and `${N}` are the
 * text of the template's group N in the value, `$$` a dollar sign, the rest kept.
 */
export function formatValue(template: Template, value: string, format: string): string {
  const spans = matcherFor(template.pattern)(value);
  if (!spans) throw badInput('value does not match the template pattern');
  const group = (n: number) => (2 * n - 2 < spans.length && n > 0 ? value.slice(spans[2 * n - 2], spans[2 * n - 1]) : '');
  return format.replace(/\$(\$|\{(\d+)\}|(\d+))/g, (_all, what: string, braced?: string, plain?: string) => (what === '$' ? '$' : group(Number(braced ?? plain))));
}

/** Applies `transform` to the characters the template's capture groups select and puts its output back in their places. */
export function applyTemplate(template: Template, value: string, transform: (chars: string[]) => string[]): string {
  const match = matchTemplate(template, value);
  return fillTemplate(value, match, transform(match.chars));
}

const TemplateBody = z.object({
  type: z.string().nullish(),
  pattern: z.string().max(4096).nullish(),
  alphabet: z.string().max(256).nullish(),
  encode_format: z.string().max(4096).nullish(),
  decode_formats: z.record(z.string().max(256), z.string().max(4096)).nullish(),
});

export const templateRoutes: EngineRoute[] = [
  listRoute('template'),
  objectRoute<Template>({
    kind: 'template',
    body: TemplateBody,
    builtins: TEMPLATES,
    show: (t) => ({ type: t.type, pattern: t.pattern, alphabet: t.alphabet, encode_format: t.encode_format ?? '', decode_formats: t.decode_formats ?? {} }),
    write: async (req: SecretsRequest<z.infer<typeof TemplateBody>>) => {
      const name = writableName('template', req.params.name);
      const old = await req.store.get<Template>(`template/${name}`);
      const type = req.body.type ?? old?.type;
      if (!type) throw badInput('type is required: only "regex" is supported');
      if (type !== 'regex') throw badInput(`type: "${type}" is not supported: only "regex"`);
      const pattern = req.body.pattern ?? old?.pattern;
      if (!pattern) throw badInput('pattern is required: a regular expression whose capture groups select what is transformed');
      compileTemplate(pattern);
      const alphabet = req.body.alphabet ?? old?.alphabet ?? '';
      if (alphabet) await resolve(req.store, 'alphabet', alphabet, 'alphabet', ALPHABETS);
      const encode_format = req.body.encode_format ?? old?.encode_format ?? '';
      const decode_formats = req.body.decode_formats ?? old?.decode_formats ?? {};
      await req.store.put(`template/${name}`, { type, pattern, alphabet, encode_format, decode_formats } satisfies Template);
      return undefined;
    },
    inUse: async (req, name) => {
      const users = (await allObjects<{ template?: string }>(req.store, 'transformation')).filter(([, t]) => t.template === name);
      return users.length ? `transformation ${users.map(([n]) => `"${n}"`).join(', ')}` : undefined;
    },
  }),
];
