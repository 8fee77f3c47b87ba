import { z } from 'zod';
import { allObjects, listRoute, objectRoute, writableName } from './objects';
import { badInput } from '../../core/request';
import { EngineRoute, SecretsRequest } from '../../core/types';

export interface Alphabet {
  readonly alphabet: string;
}

const digits = '0123456789';
const lower = 'abcdefghijklmnopqrstuvwxyz';
const upper = lower.toUpperCase();

/** The public service's built-in alphabets. */
export const ALPHABETS: Readonly<Record<string, Alphabet>> = {
  'builtin/numeric': { alphabet: digits },
  'builtin/alphalower': { alphabet: lower },
  'builtin/alphaupper': { alphabet: upper },
  'builtin/alphanumericlower': { alphabet: digits + lower },
  'builtin/alphanumericupper': { alphabet: digits + upper },
  'builtin/alphanumeric': { alphabet: digits + upper + lower },
};

const AlphabetBody = z.object({ alphabet: z.string().nullish() });

/** FF3-1 takes radixes 2 to 65536; every character once. */
function checkAlphabet(alphabet: string): void {
  const chars = Array.from(alphabet);
  if (chars.length < 2) throw badInput('alphabet: needs at least 2 characters');
  if (chars.length > 65536) throw badInput(`alphabet: at most 65536 characters (FF3-1's largest radix), not ${chars.length}`);
  const seen = new Set<string>();
  for (const c of chars) {
    if (seen.has(c)) throw badInput(`alphabet: the character "${c}" appears more than once`);
    seen.add(c);
  }
}

export const alphabetRoutes: EngineRoute[] = [
  listRoute('alphabet'),
  objectRoute<Alphabet>({
    kind: 'alphabet',
    body: AlphabetBody,
    builtins: ALPHABETS,
    show: (a) => ({ alphabet: a.alphabet }),
    write: async (req: SecretsRequest<z.infer<typeof AlphabetBody>>) => {
      const name = writableName('alphabet', req.params.name);
      const alphabet = req.body.alphabet;
      if (!alphabet) throw badInput('alphabet is required: the characters a value may contain');
      checkAlphabet(alphabet);
      await req.store.put(`alphabet/${name}`, { alphabet } satisfies Alphabet);
      return undefined;
    },
    inUse: async (req, name) => {
      const users = (await allObjects<{ alphabet?: string }>(req.store, 'template')).filter(([, t]) => t.alphabet === name);
      return users.length ? `template ${users.map(([n]) => `"${n}"`).join(', ')}` : undefined;
    },
  }),
];
