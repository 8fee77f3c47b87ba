import { Expression, Selector, SelectorError } from '../../../../src/engine/catalog/acl/selector';

/** Issue 49: selectors are caller input; neither parsing nor evaluating one may run out of stack. */
describe('selector depth and length', () => {
  const any = () => true;

  test('a chain of 100,000 terms parses and evaluates (a left-deep tree, walked along its spine)', () => {
    const terms = Array.from({ length: 100_000 }, (_, i) => `Node == "n${i}"`);
    expect(Expression.parse(terms.join(' or '), any).matches({ Node: 'n99999' })).toBe(true);
    expect(Expression.parse(terms.join(' or '), any).matches({ Node: 'other' })).toBe(false);
    expect(Expression.parse(terms.join(' and '), any).matches({ Node: 'n0' })).toBe(false);
    const same = Array(100_000).fill('value.a == "x"').join(' and ');
    expect(Selector.parse(same, { values: ['a'], lists: [] }).matches({ values: { a: 'x' }, lists: {} })).toBe(true);
    // Mixed chains keep their precedence: `and` binds tighter than `or`.
    expect(Expression.parse('Node == "a" and Node == "b" or Node == "c"', any).matches({ Node: 'c' })).toBe(true);
    expect(Expression.parse('Node == "a" or Node == "b" and Node == "c"', any).matches({ Node: 'a' })).toBe(true);
    expect(Expression.parse('Node == "a" or Node == "b" and Node == "c"', any).matches({ Node: 'b' })).toBe(false);
  });

  test('parentheses and `not` nest at most 500 levels', () => {
    const nested = (n: number) => `${'('.repeat(n)}Node == "a"${')'.repeat(n)}`;
    expect(Expression.parse(nested(500), any).matches({ Node: 'a' })).toBe(true);
    expect(() => Expression.parse(nested(501), any)).toThrow(new SelectorError('nested deeper than 500 levels at position 501'));
    expect(() => Expression.parse(nested(100_000), any)).toThrow(SelectorError);
    expect(Expression.parse(`${'not '.repeat(500)}Node == "a"`, any).matches({ Node: 'a' })).toBe(true);
    expect(() => Expression.parse(`${'not '.repeat(100_000)}Node == "a"`, any)).toThrow(SelectorError);
  });
});
