import type MarkdownIt from 'markdown-it';
import type sanitizeHtml from 'sanitize-html';
import { BoundedMap } from './bounded-map';

// Raw HTML in Markdown is not rendered, and the output is sanitized again: descriptions are user input.
// markdown-it and sanitize-html (with postcss and htmlparser2) are loaded on the first description
// rendered: a server that renders none does not keep them in memory.
let renderer: { markdown: MarkdownIt; sanitize: typeof sanitizeHtml; allowed: sanitizeHtml.IOptions } | undefined;

function load(): NonNullable<typeof renderer> {
  const Markdown = defaultExport<typeof MarkdownIt>(require('markdown-it'));
  const sanitize = defaultExport<typeof sanitizeHtml>(require('sanitize-html'));
  return {
    markdown: new Markdown({ html: false, linkify: true, typographer: false }),
    sanitize,
    allowed: {
      allowedTags: sanitize.defaults.allowedTags.concat(['img', 'h1', 'h2']),
      allowedAttributes: { a: ['href', 'title'], img: ['src', 'alt', 'title'], code: ['class'] },
      allowedSchemes: ['http', 'https', 'mailto'],
    },
  };
}

/** A CommonJS module's export, or an ES module's default export. */
function defaultExport<T>(module: { default?: T } | T): T {
  return (module as { default?: T }).default ?? (module as T);
}

/**
 * Rendered descriptions by source. Rendering one takes about 100 µs, and a search or list page
 * shows up to 100 boxes with their current versions: without this, a page of described boxes
 * costs up to 20 ms of rendering, each time it is read. 1,024 entries hold five such pages; sources
 * over 2 KiB (rare for a description) are rendered every time, so however descriptions are written,
 * the memo holds a few MiB at most.
 */
const MEMO_ENTRIES = 1024;
const MEMO_MAX_SOURCE = 2048;
const rendered = new BoundedMap<string, string>(MEMO_ENTRIES);

/** Markdown to sanitized HTML. */
export function renderMarkdown(source: string): string {
  if (!source) return '';
  const memo = source.length <= MEMO_MAX_SOURCE;
  const known = memo ? rendered.get(source) : undefined;
  if (known !== undefined) return known;
  renderer ??= load();
  const html = renderer.sanitize(renderer.markdown.render(source), renderer.allowed);
  if (memo) rendered.set(source, html);
  return html;
}
