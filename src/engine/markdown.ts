import type MarkdownIt from 'markdown-it';
import type sanitizeHtml from 'sanitize-html';

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

/** Markdown to sanitized HTML. */
export function renderMarkdown(source: string): string {
  if (!source) return '';
  renderer ??= load();
  return renderer.sanitize(renderer.markdown.render(source), renderer.allowed);
}
