import { z } from 'zod';
import { HangarError } from '../../http/errors';
import { extractToken, SECRETS_TOKEN_SOURCES } from '../../http/tokens';
import type { Db } from '../../storage';
import type { SecretsCore } from '../core/core';
import { parseDuration, rfc3339 } from '../core/durations';
import { RESPONSE_WRAPPING_POLICY } from '../core/policies';
import { badInput } from '../core/request';
import { EngineRoute, SecretsRequest, SecretsResponse, TokenEntry } from '../core/types';
import { cubbyholeHome } from '../engines/cubbyhole';

/**
 * Response wrapping, as Vault does it: a response is kept in the cubbyhole of a fresh single-use
 * token (policy `response-wrapping`, orphan, not renewable, TTL the wrap TTL), and the client gets
 * that token in `wrap_info` instead. `sys/wrapping/unwrap` hands the response back once.
 */

const WRAP_TTL_HEADER = 'x-vault-wrap-ttl';
const WRAPPING_PATHS = ['sys/wrapping/unwrap', 'sys/wrapping/rewrap'];

/** Where a wrapping token's cubbyhole keeps the response and its facts (Vault's names). */
const RESPONSE = 'response';
const WRAPINFO = 'wrapinfo';

interface WrapInfoEntry {
  /** Seconds. */
  readonly creation_ttl: number;
  /** Epoch ms. */
  readonly creation_time: number;
  readonly creation_path: string;
}

export const invalidWrappingToken = () => new HangarError(400, ['wrapping token is not valid or does not exist']);

/** The wrap TTL a request asks for with `X-Vault-Wrap-TTL` (seconds), or undefined: absent or 0 means no wrapping. */
export function requestedWrapTtl(headers: SecretsRequest['headers']): number | undefined {
  const value = headers[WRAP_TTL_HEADER];
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const ttl = parseDuration(raw);
  if (ttl === undefined) throw badInput(`error parsing X-Vault-Wrap-TTL header: "${raw}" is not a duration: use seconds or a string such as "5m"`);
  if (ttl < 0) throw badInput('error parsing X-Vault-Wrap-TTL header: requested wrap ttl cannot be negative');
  return ttl || undefined;
}

/**
 * How the pipeline refuses a caller whose token is not valid: on unwrap and rewrap without a token
 * in the body the caller's token is the wrapping token, so a used or expired one gets Vault's
 * "wrapping token is not valid" (400) rather than a 403.
 */
export function refusalFor(path: string, body: unknown): (() => HangarError) | undefined {
  const bodyToken = body && typeof body === 'object' ? (body as Record<string, unknown>).token : undefined;
  return WRAPPING_PATHS.includes(path.replace(/\/+$/, '')) && !bodyToken ? invalidWrappingToken : undefined;
}

async function cubbyhole(core: SecretsCore, db: Db) {
  const mount = await core.mounts.get(db, 'cubbyhole/');
  if (!mount) throw new Error('the cubbyhole mount is missing');
  return core.store(db, mount);
}

/**
 * Wraps a rendered response (`envelope`, the JSON the client would have got): issues the wrapping
 * token, keeps the response sealed in its cubbyhole, and returns the envelope with `wrap_info`.
 * Runs in the request's transaction, so the wrapped work and its wrapping commit together.
 */
export async function wrapResponse(
  core: SecretsCore,
  db: Db,
  now: number,
  spec: { readonly ttl: number; readonly path: string; readonly response: string; readonly wrappedAccessor?: string },
): Promise<Record<string, unknown>> {
  const { token, entry } = await core.tokens.create(
    db,
    { policies: [RESPONSE_WRAPPING_POLICY], displayName: '', numUses: 1, ttl: spec.ttl, maxTtl: spec.ttl, explicitMaxTtl: spec.ttl, renewable: false, path: spec.path },
    now,
  );
  const store = await cubbyhole(core, db);
  const home = cubbyholeHome(entry.idHash);
  await store.put(home + RESPONSE, { response: spec.response });
  await store.put(home + WRAPINFO, { creation_ttl: spec.ttl, creation_time: now, creation_path: spec.path } satisfies WrapInfoEntry);
  return {
    request_id: '',
    lease_id: '',
    renewable: false,
    lease_duration: 0,
    data: null,
    wrap_info: {
      token,
      accessor: entry.accessor,
      ttl: spec.ttl,
      creation_time: rfc3339(now),
      creation_path: spec.path,
      ...(spec.wrappedAccessor ? { wrapped_accessor: spec.wrappedAccessor } : {}),
    },
    warnings: null,
    auth: null,
    mount_type: '',
  };
}

const isWrapping = (entry: TokenEntry | undefined): entry is TokenEntry =>
  entry?.policies.length === 1 && entry.policies[0] === RESPONSE_WRAPPING_POLICY;

/**
 * The wrapping token a request names: the body's `token`, else the caller's own token. With
 * `consume`, a third party's request uses the token up and revokes it in this transaction (the
 * pipeline already counted the use of a caller's own token and revokes it after the commit).
 */
async function wrappingToken(req: SecretsRequest<{ token?: string }>, consume: boolean): Promise<TokenEntry> {
  const own = req.caller?.token ?? extractToken(req, SECRETS_TOKEN_SOURCES);
  const given = req.body.token || own;
  if (!given) throw badInput('missing "token" value in input');
  if (req.caller && given === req.caller.token) {
    if (!isWrapping(req.caller.entry)) throw invalidWrappingToken();
    return req.caller.entry;
  }
  const entry = (await req.core.tokenEntry(req.db, given, req.now))?.entry;
  if (!isWrapping(entry)) throw invalidWrappingToken();
  if (consume && (await req.core.tokens.use(req.db, entry)) < 0) throw invalidWrappingToken();
  return entry;
}

/** The stored response and facts of a wrapping token; with `consume` the token is gone afterwards. */
async function opened(req: SecretsRequest<{ token?: string }>, consume: boolean): Promise<{ response: string; info: WrapInfoEntry }> {
  const entry = await wrappingToken(req, consume);
  const store = await cubbyhole(req.core, req.db);
  const home = cubbyholeHome(entry.idHash);
  const response = (await store.get<{ response: string }>(home + RESPONSE))?.response;
  const info = await store.get<WrapInfoEntry>(home + WRAPINFO);
  if (response === undefined || !info) throw invalidWrappingToken();
  if (consume && entry !== req.caller?.entry) await req.core.revokeToken(req.db, entry.idHash, req.now);
  return { response, info };
}

const json = (body: string): SecretsResponse => ({ raw: { contentType: 'application/json; charset=utf-8', body } });

const TokenBody = z.object({ token: z.string({ message: 'must be a string' }).optional() });

/** `sys/wrapping/wrap`, `unwrap`, `lookup` and `rewrap`. */
export const wrappingSystemRoutes: EngineRoute[] = [
  {
    pattern: 'wrapping/wrap',
    body: z.record(z.string(), z.unknown(), { message: 'must be a JSON object' }),
    readOnly: true,
    write: async (req) => {
      if (!requestedWrapTtl(req.headers)) throw badInput('endpoint requires response wrapping to be used: send the X-Vault-Wrap-TTL header');
      return { data: req.body };
    },
  },
  // The response exactly as it was sent when it was wrapped.
  { pattern: 'wrapping/unwrap', body: TokenBody, write: async (req) => json((await opened(req, true)).response) },
  {
    pattern: 'wrapping/lookup',
    body: TokenBody,
    // As Vault: anyone holding a wrapping token may look at it without using it up.
    unauthenticated: true,
    readOnly: true,
    write: async (req) => {
      const { info } = await opened(req, false);
      return { data: { creation_path: info.creation_path, creation_time: rfc3339(info.creation_time), creation_ttl: info.creation_ttl } };
    },
  },
  {
    // A new wrapping token for the same response (same TTL and creation path); the old one is used up.
    pattern: 'wrapping/rewrap',
    body: TokenBody,
    write: async (req) => {
      const { response, info } = await opened(req, true);
      return json(JSON.stringify(await wrapResponse(req.core, req.db, req.now, { ttl: info.creation_ttl, path: info.creation_path, response })));
    },
  },
];
