import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { checkAudience, checkTimes, Claims, loginFromClaims } from './claims';
import { JwtConfig } from './config';
import { algorithmsFor, checkIssuer, discovery, loginSetup, verifySignature } from './login';
import { JwtRole } from './roles';
import { fetchJson } from '../../../jwt-keys';
import { badInput } from '../../core/request';
import { EngineRoute, SecretsRequest, SecretsResponse } from '../../core/types';

/** How long a user has between auth_url and the callback (the public service uses 10 minutes). */
const STATE_TTL_MS = 10 * 60_000;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

interface OidcState {
  readonly role: string;
  readonly redirectUri: string;
  readonly nonce: string;
  readonly codeVerifier: string;
  readonly clientNonce: string;
  readonly expireAt: number;
}

const b64url = (bytes: Buffer) => bytes.toString('base64url');
const sha256 = (text: string) => createHash('sha256').update(text).digest();

/** Exact match, or a loopback address on another port (RFC 8252: CLIs listen on a free port). */
function redirectAllowed(uri: string, allowed: readonly string[]): boolean {
  if (allowed.includes(uri)) return true;
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return false;
  }
  return allowed.some((a) => {
    try {
      const b = new URL(a);
      return LOOPBACK.has(u.hostname) && LOOPBACK.has(b.hostname) && u.protocol === b.protocol && u.pathname === b.pathname && u.search === b.search;
    } catch {
      return false;
    }
  });
}

const AuthUrlBody = z.object({
  role: z.string().optional(),
  redirect_uri: z.string({ message: 'redirect_uri is required' }).min(1, 'redirect_uri is required'),
  client_nonce: z.string().max(512).optional(),
});

async function authUrl(req: SecretsRequest<z.infer<typeof AuthUrlBody>>): Promise<SecretsResponse> {
  const { config, name, role } = await loginSetup(req, req.body.role);
  if (role.role_type !== 'oidc') throw badInput(`role "${name}" has role_type jwt: log in with a signed JWT at login`);
  if (!config.oidc_discovery_url || !config.oidc_client_id) throw badInput('OIDC login needs oidc_discovery_url and oidc_client_id in the config');
  const redirectUri = req.body.redirect_uri;
  if (!redirectAllowed(redirectUri, role.allowed_redirect_uris)) throw badInput(`unauthorized redirect_uri: ${redirectUri}`);
  if (config.namespace_in_state && new URL(redirectUri).searchParams.has('namespace')) {
    throw badInput('redirect_uri must not carry a namespace query parameter while namespace_in_state is true');
  }
  const doc = await discovery(config);
  if (!doc.authorization_endpoint) throw badInput("the provider's discovery document has no authorization_endpoint");
  const state = b64url(randomBytes(24));
  const entry: OidcState = {
    role: name,
    redirectUri,
    nonce: b64url(randomBytes(24)),
    codeVerifier: b64url(randomBytes(32)),
    clientNonce: req.body.client_nonce ?? '',
    expireAt: req.now + STATE_TTL_MS,
  };
  await req.core.context(req.mount).tx((store) => store.put(`oidc-state/${state}`, entry, entry.expireAt));
  const url = new URL(doc.authorization_endpoint);
  const responseType = config.oidc_response_types.includes('id_token') ? 'id_token' : 'code';
  const params: Record<string, string> = {
    client_id: config.oidc_client_id,
    response_type: responseType,
    redirect_uri: redirectUri,
    scope: ['openid', ...role.oidc_scopes.filter((s) => s !== 'openid')].join(' '),
    state,
    nonce: entry.nonce,
  };
  if (responseType === 'code') Object.assign(params, { code_challenge: b64url(sha256(entry.codeVerifier)), code_challenge_method: 'S256' });
  if (config.oidc_response_mode === 'form_post') params.response_mode = 'form_post';
  if (role.max_age > 0) params.max_age = String(role.max_age);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return { data: { auth_url: url.toString() } };
}

/** The authorization code for an ID token at the provider's token endpoint (PKCE, client_secret_basic). */
async function exchangeCode(config: JwtConfig, state: OidcState, code: string): Promise<string> {
  const doc = await discovery(config);
  if (!doc.token_endpoint) throw badInput("the provider's discovery document has no token_endpoint");
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: state.redirectUri, code_verifier: state.codeVerifier });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (config.oidc_client_secret) {
    const basic = `${encodeURIComponent(config.oidc_client_id)}:${encodeURIComponent(config.oidc_client_secret)}`;
    headers.authorization = `Basic ${Buffer.from(basic).toString('base64')}`;
  } else {
    form.set('client_id', config.oidc_client_id);
  }
  let res;
  try {
    res = await fetchJson(doc.token_endpoint, config.oidc_discovery_ca_pem || undefined, { method: 'POST', headers, body: form.toString() });
  } catch (err) {
    throw badInput(`cannot reach the OIDC provider's token endpoint: ${(err as Error).message}`);
  }
  if (res.status !== 200) {
    throw badInput(`the OIDC provider refused the authorization code: ${String(res.body.error ?? res.status)} ${String(res.body.error_description ?? '')}`.trim());
  }
  if (typeof res.body.id_token !== 'string') throw badInput('the OIDC provider returned no id_token');
  return res.body.id_token;
}

const CallbackInput = z.object({
  state: z.string({ message: 'state is required' }).min(1, 'state is required').max(512),
  code: z.string().max(4096).optional(),
  id_token: z.string().max(64 * 1024).optional(),
  nonce: z.string().max(512).optional(),
  client_nonce: z.string().max(512).optional(),
  error: z.string().optional(),
  error_description: z.string().optional(),
});

async function callback(req: SecretsRequest<z.infer<typeof CallbackInput>>): Promise<SecretsResponse> {
  const input = req.body;
  if (input.error) throw badInput(`the OIDC provider reported an error: ${input.error} ${input.error_description ?? ''}`.trim());
  // One use: the state goes whatever happens next.
  const state = await req.core.context(req.mount).tx(async (store) => {
    const found = await store.get<OidcState>(`oidc-state/${input.state}`);
    if (found) await store.delete(`oidc-state/${input.state}`);
    return found;
  });
  if (!state || state.expireAt <= req.now) throw badInput('expired or missing OAuth state');
  if (state.clientNonce && input.client_nonce !== state.clientNonce) throw badInput('invalid client_nonce: it must equal the one given to auth_url');
  if (input.nonce !== undefined && input.nonce !== state.nonce) throw badInput('invalid nonce');
  const { config, name, role } = await loginSetup(req, state.role);
  let idToken: string;
  if (input.id_token && config.oidc_response_types.includes('id_token')) idToken = input.id_token;
  else if (input.code) idToken = await exchangeCode(config, state, input.code);
  else throw badInput('code is required');
  const claims = await verifyIdToken(req, config, role, idToken, state);
  return { auth: loginFromClaims(req, name, role, claims) };
}

async function verifyIdToken(req: SecretsRequest, config: JwtConfig, role: JwtRole, idToken: string, state: OidcState): Promise<Claims> {
  const claims = await verifySignature(config, idToken, algorithmsFor(config, role));
  checkIssuer(claims, config.bound_issuer || (await discovery(config)).issuer);
  checkAudience(claims, [config.oidc_client_id]);
  if (role.bound_audiences.length) checkAudience(claims, role.bound_audiences);
  checkTimes(claims, { ...role, clock_skew_leeway: 0, expiration_leeway: -1, not_before_leeway: -1 }, req.now);
  if (claims.nonce !== state.nonce) throw badInput('invalid ID token nonce');
  if (role.max_age > 0) {
    if (typeof claims.auth_time !== 'number') throw badInput('auth_time claim is required when max_age is set');
    if (Math.floor(req.now / 1000) - claims.auth_time > role.max_age + 60) throw badInput('auth_time is older than max_age: log in at the provider again');
  }
  // Claims (never the token itself) only at debug level and only when the role asks for it.
  if (role.verbose_oidc_logging) req.engine.logger.debug({ role: state.role, claims }, 'OIDC ID token claims');
  return claims;
}

/** `oidc/auth_url` and `oidc/callback` (GET with query parameters, or POST for form_post). */
export const oidcRoutes: EngineRoute[] = [
  {
    pattern: 'oidc/auth_url',
    body: AuthUrlBody,
    unauthenticated: true,
    ownTransactions: ['create', 'update'],
    write: authUrl,
  },
  {
    pattern: 'oidc/callback',
    body: CallbackInput,
    query: CallbackInput,
    unauthenticated: true,
    ownTransactions: ['read', 'create', 'update'],
    read: callback,
    write: callback,
  },
];
