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

/**
 * Applies `transform` to the characters the template's capture groups select (concatenated, as
 * code points) and puts its output back in their places; the rest of the value is kept. The
 * first match counts, as in the public service (anchor the pattern to require a whole match).
 */
export function applyTemplate(template: Template, value: string, transform: (chars: string[]) => string[]): string {
  const m = compileTemplate(template.pattern).matcher(value);
  if (!m.find()) throw badInput('value does not match the template pattern');
  const spans: Array<[number, number]> = [];
  for (let g = 1; g <= m.groupCount(); g++) {
    const start = m.start(g);
    if (start < 0) continue;
    // A group inside another (a named one the pattern check cannot see) would be transformed twice.
    if (spans.length && start < spans[spans.length - 1][1]) throw badInput('pattern: nested capture groups are not supported');
    spans.push([start, m.end(g)]);
  }
  const pieces = spans.map(([s, e]) => Array.from(value.slice(s, e)));
  const out = transform(pieces.flat());
  let result = '';
  let at = 0;
  let used = 0;
  spans.forEach(([s, e], i) => {
    result += value.slice(at, s) + out.slice(used, used + pieces[i].length).join('');
    used += pieces[i].length;
    at = e;
  });
  return result + value.slice(at);
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
