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
}

/** The public service's built-in templates (`builtin/any` serves tokenization, which ignores templates). */
export const TEMPLATES: Readonly<Record<string, Template>> = {
  'builtin/creditcardnumber': { type: 'regex', pattern: '(\\d{4})[- ]?(\\d{4})[- ]?(\\d{4})[- ]?(\\d{4})', alphabet: 'builtin/numeric' },
  'builtin/socialsecuritynumber': { type: 'regex', pattern: '(\\d{3})[- ]?(\\d{2})[- ]?(\\d{4})', alphabet: 'builtin/numeric' },
  'builtin/any': { type: 'regex', pattern: '(.*)', alphabet: '' },
};

/** Where a template's capture groups matched a value: [start, end) per group that took part. */
type Spans = Array<[number, number]>;
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
      if (start >= 0) spans.push([start, m.end(g)]);
    }
    return spans;
  };
}

/**
 * The built-in templates' fixed patterns through the native engine, several times faster than
 * RE2JS: they hold no construct where it and RE2 differ (ASCII \\d, classes, optional separators,
 * leftmost-first), and they cannot backtrack badly. Users' patterns always go through RE2JS.
 */
function nativeMatcher(pattern: string): Matcher {
  const re = new RegExp(pattern, 'd');
  return (value) => {
    const m = re.exec(value);
    if (!m) return undefined;
    const spans: Spans = [];
    for (let g = 1; g < m.length; g++) if (m.indices![g]) spans.push(m.indices![g]!);
    return spans;
  };
}

// Not builtin/any: RE2's "." stops only at \n, JavaScript's also at \r, U+2028 and U+2029.
const BUILTIN_MATCHERS = new Map(['builtin/creditcardnumber', 'builtin/socialsecuritynumber'].map((n) => [TEMPLATES[n].pattern, nativeMatcher(TEMPLATES[n].pattern)]));
const matcherFor = (pattern: string) => BUILTIN_MATCHERS.get(pattern) ?? re2Matcher(pattern);

/** The characters a template's capture groups select in a value, and where they are. */
export interface TemplateMatch {
  readonly spans: Spans;
  /** The selected characters (code points), concatenated in order. */
  readonly chars: string[];
  /** How many of them each span holds. */
  readonly counts: number[];
}

/**
 * The first match counts, as in the public service (anchor the pattern to require a whole match).
 * Throws the API's error when the value does not match.
 */
export function matchTemplate(template: Template, value: string): TemplateMatch {
  const spans = matcherFor(template.pattern)(value);
  if (!spans) throw badInput('value does not match the template pattern');
  const chars: string[] = [];
  const counts: number[] = [];
  let end = 0;
  for (const [s, e] of spans) {
    // A group inside another (a named one the pattern check cannot see) would be transformed twice.
    if (s < end) throw badInput('pattern: nested capture groups are not supported');
    const before = chars.length;
    for (const c of value.slice(s, e)) chars.push(c);
    counts.push(chars.length - before);
    end = e;
  }
  return { spans, chars, counts };
}

/** The value with the matched characters replaced by `out` (as many code points, in order); the rest kept. */
export function fillTemplate(value: string, match: TemplateMatch, out: readonly string[]): string {
  let result = '';
  let at = 0;
  let used = 0;
  match.spans.forEach(([s, e], i) => {
    result += value.slice(at, s) + out.slice(used, used + match.counts[i]).join('');
    used += match.counts[i];
    at = e;
  });
  return result + value.slice(at);
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
  encode_format: z.unknown().optional(),
  decode_formats: z.unknown().optional(),
});

export const templateRoutes: EngineRoute[] = [
  listRoute('template'),
  objectRoute<Template>({
    kind: 'template',
    body: TemplateBody,
    builtins: TEMPLATES,
    show: (t) => ({ type: t.type, pattern: t.pattern, alphabet: t.alphabet }),
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
      await req.store.put(`template/${name}`, { type, pattern, alphabet } satisfies Template);
      return undefined;
    },
    inUse: async (req, name) => {
      const users = (await allObjects<{ template?: string }>(req.store, 'transformation')).filter(([, t]) => t.template === name);
      return users.length ? `transformation ${users.map(([n]) => `"${n}"`).join(', ')}` : undefined;
    },
  }),
];
