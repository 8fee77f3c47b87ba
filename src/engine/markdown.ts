import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';

// Raw HTML in Markdown is not rendered, and the output is sanitized again: descriptions are user input.
const markdown = new MarkdownIt({ html: false, linkify: true, typographer: false });

const allowed: sanitizeHtml.IOptions = {
  allowedTags: sanitizeHtml.defaults.allowedTags.concat(['img', 'h1', 'h2']),
  allowedAttributes: { a: ['href', 'title'], img: ['src', 'alt', 'title'], code: ['class'] },
  allowedSchemes: ['http', 'https', 'mailto'],
};

/** Markdown to sanitized HTML. */
export function renderMarkdown(source: string): string {
  if (!source) return '';
  return sanitizeHtml(markdown.render(source), allowed);
}
