import { randomBytes } from 'node:crypto';
import { ALPHABETS } from '../../../src/engine/secrets/engines/transform/alphabets';
import { FF31 } from '../../../src/engine/secrets/engines/transform/ff3-1';
import { FpeCodec, fpeCodec } from '../../../src/engine/secrets/engines/transform/fpe';
import { applyTemplate, compileTemplate, Template, TEMPLATES, templateSpans } from '../../../src/engine/secrets/engines/transform/templates';

const pick = <T>(a: readonly T[]): T => a[Math.floor(Math.random() * a.length)];
const regex = (pattern: string, alphabet = 'builtin/numeric'): Template => ({ type: 'regex', pattern, alphabet });

/** The general path: the template's characters as an array, mapped through the alphabet, FF3-1 on a number[], mapped back. */
function general(ff: FF31, alphabet: string, template: Template, value: string, tweak: Buffer, forward: boolean): string {
  const chars = Array.from(alphabet);
  return applyTemplate(template, value, (selected) => {
    const x = selected.map((c) => chars.indexOf(c));
    return (forward ? ff.encrypt(x, tweak) : ff.decrypt(x, tweak)).map((d) => chars[d]);
  });
}

/** The spans RE2JS gives for a pattern, flat (what users' templates use). */
function re2Spans(pattern: string, value: string): number[] | undefined {
  const m = compileTemplate(pattern).matcher(value);
  if (!m.find()) return undefined;
  const spans: number[] = [];
  for (let g = 1; g <= m.groupCount(); g++) if (m.start(g) >= 0) spans.push(m.start(g), m.end(g));
  return spans;
}

describe('FF3-1 through templates (the codec of the encode and decode paths)', () => {
  test('the built-in templates match as RE2 does (their spans without the d flag)', () => {
    const pieces = ['', '-', ' ', '--', 'x', '0', '12', '-1', ' 9'];
    for (const name of ['builtin/creditcardnumber', 'builtin/socialsecuritynumber']) {
      const { pattern } = TEMPLATES[name];
      let matched = 0;
      for (let k = 0; k < 1000; k++) {
        let value = '';
        for (let p = 0; p < 6; p++) value += pick(pieces) + String(Math.floor(Math.random() * 10_000)).padStart(pick([1, 2, 3, 4]), '0');
        const expected = re2Spans(pattern, value);
        if (expected) matched++;
        if (expected) expect([value, templateSpans(TEMPLATES[name], value)]).toEqual([value, expected]);
        else expect(() => templateSpans(TEMPLATES[name], value)).toThrow(/does not match the template pattern/);
      }
      expect(matched).toBeGreaterThan(100);
      expect(matched).toBeLessThan(1000);
    }
  });

  test('one value agrees with the general path, both ways: built-in and users\' templates, every built-in alphabet, astral characters', () => {
    const key = randomBytes(32);
    const cases: Array<[string, Template, () => string]> = [];
    const digits = (n: number) => Array.from({ length: n }, () => String(Math.floor(Math.random() * 10))).join('');
    cases.push(['0123456789', TEMPLATES['builtin/creditcardnumber'], () => `${digits(4)}${pick(['-', ' ', ''])}${digits(4)}-${digits(4)} ${digits(4)}`]);
    cases.push(['0123456789', TEMPLATES['builtin/socialsecuritynumber'], () => `ssn ${digits(3)}-${digits(2)}-${digits(4)} end`]);
    for (const name of Object.keys(ALPHABETS)) {
      const alphabet = ALPHABETS[name].alphabet;
      const chars = Array.from(alphabet);
      const word = (n: number) => Array.from({ length: n }, () => pick(chars)).join('');
      cases.push([alphabet, regex('^(\\w+)-(\\w*)$', name), () => `${word(6 + Math.floor(Math.random() * 10))}-${word(Math.floor(Math.random() * 10))}`]);
    }
    // An alphabet with characters beyond U+FFFF (two UTF-16 units each) and one unit: the spans count code points.
    const astral = 'ab😀😁😂c';
    const chars = Array.from(astral);
    cases.push([astral, regex('<(.+)>(.)'), () => `x<${Array.from({ length: 8 + Math.floor(Math.random() * 20) }, () => pick(chars)).join('')}>${pick(chars)}y`]);
    for (const [alphabet, template, value] of cases) {
      const codec = new FpeCodec(key, alphabet);
      const ff = new FF31(key, Array.from(alphabet).length);
      for (let k = 0; k < 40; k++) {
        const v = value();
        const tweak = randomBytes(7);
        const encoded = codec.run(template, 't', v, tweak, true);
        expect([v, encoded]).toEqual([v, general(ff, alphabet, template, v, tweak, true)]);
        expect(codec.run(template, 't', encoded, tweak, false)).toBe(v);
        expect(codec.run(template, 't', v, tweak, false)).toBe(general(ff, alphabet, template, v, tweak, false));
        // A batch's value: its numerals, the batch cipher, written back.
        const spans = templateSpans(template, v);
        const x = codec.numerals(v, spans, 't');
        expect(codec.write(v, spans, codec.cipher.encryptAll([x, x], [tweak, tweak])[1])).toBe(encoded);
      }
    }
  });

  test('errors: a character outside the alphabet, the length limits, no match', () => {
    const key = randomBytes(32).toString('base64');
    const codec = fpeCodec(key, '0123456789');
    expect(fpeCodec(key, '0123456789')).toBe(codec);
    const card = TEMPLATES['builtin/creditcardnumber'];
    const tweak = randomBytes(7);
    expect(() => codec.run(regex('(.+)'), 'mine', '1234a67', tweak, true)).toThrow('value: the character "a" is not in the alphabet of template "mine"');
    expect(() => codec.run(regex('(.+)'), 'mine', '12345😀', tweak, true)).toThrow('the character "😀" is not in the alphabet');
    expect(() => codec.run(regex('(\\d+)'), 'mine', '12345', tweak, true)).toThrow('value: FF3-1 over an alphabet of 10 characters needs 6 to 56 characters to transform, not 5');
    expect(() => codec.run(regex('(\\d+)'), 'mine', '1'.repeat(300), tweak, true)).toThrow(/needs 6 to 56 characters to transform, not 300/);
    expect(() => codec.run(card, 'builtin/creditcardnumber', '4111-1111', tweak, true)).toThrow('value does not match the template pattern');
  });
});
