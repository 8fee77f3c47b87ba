import { FF31, Numerals } from './ff3-1';
import { Template, templateSpans } from './templates';
import { badInput } from '../../core/request';

/**
 * FF3-1 over an alphabet, between a value's characters and the cipher's numerals. Made once per
 * key and alphabet: the cipher (its AES key schedule), a code point -> numeral table and a
 * scratch numeral string, so that one value costs its template match, one pass over its
 * characters each way and the cipher, with no array of characters in between.
 */
export class FpeCodec {
  readonly cipher: FF31;
  private readonly chars: readonly string[];
  /** The numeral of each code point below its length, -1 for none; `astral` holds those above U+FFFF. */
  private readonly table: Int32Array;
  private readonly astral = new Map<number, number>();
  private readonly scratch: Uint16Array;

  constructor(key: Buffer, alphabet: string) {
    this.chars = Array.from(alphabet);
    this.cipher = new FF31(key, this.chars.length);
    const points = this.chars.map((c) => c.codePointAt(0)!);
    this.table = new Int32Array(points.reduce((size, p) => (p <= 0xffff ? Math.max(size, p + 1) : size), 0)).fill(-1);
    points.forEach((p, i) => (p <= 0xffff ? (this.table[p] = i) : this.astral.set(p, i)));
    this.scratch = new Uint16Array(this.cipher.maxLength);
  }

  /** One value on its own: encodes (forward) or decodes the characters the template selects, keeping the rest. */
  run(template: Template, templateName: string, value: string, tweak: Buffer, forward: boolean): string {
    const spans = templateSpans(template, value);
    const n = this.read(value, spans, templateName, this.scratch);
    this.cipher.transform(this.scratch, n, tweak, forward);
    return this.write(value, spans, this.scratch);
  }

  /** The numerals of the characters the spans select (a value of a batch, whose rounds run with the others'). */
  numerals(value: string, spans: readonly number[], templateName: string): Uint16Array {
    const n = this.read(value, spans, templateName, this.scratch);
    return this.scratch.slice(0, n);
  }

  /**
   * Writes the numerals of the selected characters into `out` (as many as fit) and returns how
   * many there are. Throws the API's error for a character outside the alphabet or a length
   * outside FF3-1's limits.
   */
  private read(value: string, spans: readonly number[], templateName: string, out: Numerals): number {
    const { table, astral } = this;
    let n = 0;
    for (let g = 0; g < spans.length; g += 2) {
      for (let i = spans[g], end = spans[g + 1]; i < end; ) {
        const c = value.codePointAt(i)!;
        i += c > 0xffff ? 2 : 1;
        const d = c < table.length ? table[c] : (astral.get(c) ?? -1);
        if (d < 0) throw badInput(`value: the character "${String.fromCodePoint(c)}" is not in the alphabet of template "${templateName}"`);
        if (n < out.length) out[n] = d;
        n++;
      }
    }
    const problem = this.cipher.lengthProblem(n);
    if (problem) throw badInput(`value: ${problem}`);
    return n;
  }

  /** The value with the selected characters replaced, in order, by the characters of `digits`. */
  write(value: string, spans: readonly number[], digits: ArrayLike<number>): string {
    const chars = this.chars;
    let out = '';
    let at = 0;
    let k = 0;
    for (let g = 0; g < spans.length; g += 2) {
      out += value.slice(at, spans[g]);
      for (let i = spans[g], end = spans[g + 1]; i < end; k++) {
        i += value.codePointAt(i)! > 0xffff ? 2 : 1;
        out += chars[digits[k]];
      }
      at = spans[g + 1];
    }
    return out + value.slice(at);
  }
}

const codecs = new Map<string, Map<string, FpeCodec>>();

/** The codec of a transformation's key (base64) and alphabet, made once per process. */
export function fpeCodec(key: string, alphabet: string): FpeCodec {
  let byAlphabet = codecs.get(key);
  if (!byAlphabet) {
    if (codecs.size > 1000) codecs.clear();
    byAlphabet = new Map();
    codecs.set(key, byAlphabet);
  }
  let codec = byAlphabet.get(alphabet);
  if (!codec) {
    codec = new FpeCodec(Buffer.from(key, 'base64'), alphabet);
    byAlphabet.set(alphabet, codec);
  }
  return codec;
}
