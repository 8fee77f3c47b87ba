import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { renderToString } from 'preact-render-to-string';
import { uiAssets } from './assets';
import { CONSOLES } from '../../ui/consoles';
import { ApiClient, ApiError, Transport } from '../../ui/shared/api';
import { ConsoleDef, PageState, ServerState, STATE_ELEMENT_ID } from '../../ui/shared/console';
import { html } from '../../ui/shared/html';
import { matchRoute, pathInMount } from '../../ui/shared/router';
import { ConsoleView, documentTitle, errorState } from '../../ui/shared/view';
import type { ApiName } from '../http/api';

/**
 * Serves a listener's console: the box catalog at `/` on the registry listener, the consoles at
 * `/ui/` on the secrets and catalog listeners. Pages are HTML documents rendered by the consoles'
 * own components; the box catalog's public pages carry their data, read anonymously through the
 * registry's API, so they read without JavaScript. Every answer carries a strict Content-Security-Policy
 * (scripts and styles from this origin only, nothing inline, no framing).
 */
export function registerUi(app: FastifyInstance, api: ApiName): void {
  const def = CONSOLES[api];
  app.get(`${assetPrefix(def)}:file`, (req, reply) => sendAsset(req as FastifyRequest<{ Params: { file: string } }>, reply));
  const page = (req: FastifyRequest, reply: FastifyReply) => sendPage(app, def, req, reply);
  if (def.mount === '/') {
    // The box catalog shares its listener with the API: only its own page paths are claimed.
    for (const p of def.pages) app.get(toFastifyPath(p.path), page);
  } else {
    app.get(def.mount, page);
    app.get(`${def.mount}*`, page);
  }
}

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The headers of every UI answer. */
export const UI_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/** Where a console's built files are served: `/-/assets/` beside the box catalog (no owner name starts with "-"), else `<mount>assets/`. */
export function assetPrefix(def: ConsoleDef): string {
  return def.mount === '/' ? '/-/assets/' : `${def.mount}assets/`;
}

/** `/kv/*key` (the router's rest parameter) to Fastify's `/kv/*`. */
function toFastifyPath(pattern: string): string {
  return pattern.replace(/\*[A-Za-z0-9_]*$/, '*');
}

function sendAsset(req: FastifyRequest<{ Params: { file: string } }>, reply: FastifyReply) {
  const asset = uiAssets().get(req.params.file);
  reply.headers(UI_SECURITY_HEADERS);
  if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
  const etag = `"${asset.hash}"`;
  const version = (req.query as { v?: string }).v;
  // URLs with the content's hash never change; others are revalidated (ETag) on each use.
  reply.header('cache-control', version === asset.hash ? 'public, max-age=31536000, immutable' : 'no-cache');
  reply.header('etag', etag);
  if (req.headers['if-none-match'] === etag) return reply.code(304).send();
  return reply.code(200).type(asset.contentType).send(asset.body);
}

async function sendPage(app: FastifyInstance, def: ConsoleDef, req: FastifyRequest, reply: FastifyReply) {
  const url = new URL(req.url, 'http://ui.invalid');
  const path = pathInMount(def.mount, url.pathname) ?? '/';
  const match = matchRoute(def.pages, path);
  const api = new ApiClient(injectTransport(app, req), def.tokenHeader);
  const ctx = { params: match?.params ?? {}, query: url.searchParams, api, session: undefined };
  let state: PageState = { status: 'loading' };
  let status = match ? 200 : 404;
  if (match?.route.serverRendered) {
    try {
      state = { status: 'ready', data: match.route.load ? await match.route.load(ctx) : undefined };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      state = errorState(err);
      status = err.status >= 400 && err.status < 500 ? err.status : 502;
    }
  }
  const body = renderToString(html`<${ConsoleView}
    def=${def}
    path=${path}
    query=${url.searchParams}
    state=${state}
    session=${undefined}
    api=${api}
    navigate=${() => {}}
    reload=${() => {}}
    setSession=${() => {}}
  />`);
  const server: ServerState | undefined = match?.route.serverRendered ? { url: url.pathname + url.search, state } : undefined;
  return reply
    .code(status)
    .headers(UI_SECURITY_HEADERS)
    .header('cache-control', 'no-cache')
    .type('text/html; charset=utf-8')
    .send(htmlDocument(def, documentTitle(def, match, ctx, state), body, server, !match?.route.serverRendered));
}

/**
 * Requests to this very app, anonymous (no header of the caller is passed on): what anybody may
 * read. They come from the caller's address, so the API's rate limits count them against the
 * reader, not against the server itself.
 */
function injectTransport(app: FastifyInstance, req: FastifyRequest): Transport {
  return async (r) => {
    const res = await app.inject({
      method: r.method as 'GET',
      url: r.url,
      headers: { ...r.headers, host: req.headers.host ?? 'localhost' },
      payload: r.body,
      remoteAddress: req.ip,
    });
    return { status: res.statusCode, text: res.body, headers: res.headers as Record<string, string> };
  };
}

function htmlDocument(def: ConsoleDef, title: string, body: string, server: ServerState | undefined, needsScript: boolean): string {
  const assets = uiAssets();
  const url = (name: string) => {
    const asset = assets.get(name);
    return asset ? `${assetPrefix(def)}${name}?v=${asset.hash}` : undefined;
  };
  const styles = ['style.css', `${def.service}.css`].map(url).filter((u) => u !== undefined);
  const script = url(`${def.service}.js`);
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    '<link rel="icon" href="data:,">',
    ...styles.map((href) => `<link rel="stylesheet" href="${href}">`),
    script ? `<script type="module" src="${script}"></script>` : '',
    '</head><body>',
    needsScript ? '<noscript><p class="error">This page needs JavaScript.</p></noscript>' : '',
    `<div id="app">${body}</div>`,
    server ? `<script type="application/json" id="${STATE_ELEMENT_ID}">${jsonForScript(server)}</script>` : '',
    '</body></html>',
  ].join('');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON inside a script element: `<` escaped, so no `</script>` in the data can end it. */
function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

