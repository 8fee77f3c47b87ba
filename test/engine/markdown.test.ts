import { renderMarkdown } from '../../src/engine/markdown';

/** src/engine/markdown.ts: descriptions render to sanitized HTML, and a rendered source is kept. */
describe('renderMarkdown', () => {
  test('renders and sanitizes, the same on every call, from the memo or not', () => {
    const hostile = '**bold** <script>alert(1)</script> [x](javascript:alert(1)) <img src=x onerror=alert(1)>';
    const first = renderMarkdown(hostile);
    expect(first).toContain('<strong>bold</strong>');
    expect(first).not.toMatch(/<script|<img|href="javascript/); // escaped to text, or dropped
    expect(renderMarkdown(hostile)).toBe(first);
    // Over the memo's size limit: rendered every time, the same way.
    const long = `${'word '.repeat(500)}**end**`;
    expect(renderMarkdown(long)).toBe(renderMarkdown(long));
    expect(renderMarkdown(long)).toContain('<strong>end</strong>');
    expect(renderMarkdown('')).toBe('');
  });

  test('a full memo keeps rendering each source as its own', () => {
    for (let i = 0; i < 1500; i++) expect(renderMarkdown(`box *${i}*`)).toBe(`<p>box <em>${i}</em></p>\n`);
    expect(renderMarkdown('box *7*')).toBe('<p>box <em>7</em></p>\n');
  });
});
