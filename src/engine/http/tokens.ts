import type { FastifyRequest } from 'fastify';

/**
 * Where each API looks for the caller's token, in order: the spec's header first, then the
 * headers real clients send (Vagrant: X-Atlas-Token; Vault: X-Vault-Token; Consul: X-Consul-Token),
 * then `Authorization: Bearer`, then (registry only) the `access_token` query parameter.
 */
export interface TokenSources {
  readonly headers: readonly string[];
  readonly queryParameter?: string;
}

export const REGISTRY_TOKEN_SOURCES: TokenSources = {
  headers: ['x-registry-token', 'x-atlas-token'],
  queryParameter: 'access_token',
};
export const SECRETS_TOKEN_SOURCES: TokenSources = { headers: ['x-secrets-token', 'x-vault-token'] };
export const CATALOG_TOKEN_SOURCES: TokenSources = { headers: ['x-catalog-token', 'x-consul-token'] };

export function extractToken(req: Pick<FastifyRequest, 'headers'> & { readonly query?: unknown }, sources: TokenSources): string | undefined {
  for (const name of sources.headers) {
    const value = single(req.headers[name]);
    if (value) return value;
  }
  const authorization = single(req.headers.authorization);
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i);
  if (bearer) return bearer[1];
  if (sources.queryParameter) {
    const value = (req.query as Record<string, unknown> | undefined)?.[sources.queryParameter];
    if (typeof value === 'string' && value) return value;
  }
  return undefined;
}

function single(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v?.trim() || undefined;
}

/** Header names whose values never reach a log line. */
export const SECRET_HEADERS = [
  'authorization',
  'cookie',
  'x-registry-token',
  'x-atlas-token',
  'x-secrets-token',
  'x-vault-token',
  'x-catalog-token',
  'x-consul-token',
  'x-hangar-local-admin',
];

/** Query parameters whose values never reach a log line. */
export const SECRET_QUERY_PARAMETERS = ['access_token', 'token', 'code', 'id_token', 'state', 'client_nonce'];

/** The URL with secret query parameters blanked, for logs. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  // Most queries name no secret parameter (a blocking query's `?index=&wait=`): kept as they are,
  // without parsing. A percent sign may spell a name in escapes, so such a query is always parsed.
  const query = url.slice(q + 1);
  if (!query.includes('%') && !SECRET_QUERY_PARAMETERS.some((name) => query.includes(name))) return url;
  const params = new URLSearchParams(query);
  for (const name of SECRET_QUERY_PARAMETERS) if (params.has(name)) params.set(name, 'redacted');
  return `${url.slice(0, q)}?${params.toString()}`;
}
