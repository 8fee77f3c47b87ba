import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { HangarError } from '../../http/errors';
import {
  getToken,
  json,
  NodeIdentity,
  renderToken,
  resolvePolicyLinks,
  resolveRoleLinks,
  ServiceIdentity,
  sha256,
  TemplatedPolicy,
  TokenRow,
  normalizeIdentities,
} from '../acl/store';
import { deleteToken, insertToken, rootTokenObject, storedRootAccessor, tokenBarrier, visibleSecret } from '../acl/tokens';
import { tablesIndex } from '../index-state';
import { requestNamespace, requireLiveNamespace } from '../namespaces';
import {
  aclNotFound,
  actorOf,
  ANONYMOUS_ACCESSOR,
  badRequest,
  CatalogContext,
  catalogRoute,
  CommonQuery,
  consulObject,
  formatDuration,
  GLOBAL_MANAGEMENT_ID,
  LinkBody,
  NodeIdentityBody,
  parseDuration,
  ignored,
  READ_ONLY_FIELDS,
  requirePermission,
  ServiceIdentityBody,
  TemplatedPolicyBody,
  UUID,
} from '../route';
import { requestWrites } from '../runtime';
import { ACL_NOT_FOUND, aclDeleteRoute, aclListRoute, aclReadRoute, IdParam, rowsInScope } from './acl-crud';

/** The public service's ACLToken request structure (api.ACLToken, structs.ACLToken). */
const TokenBody = consulObject({
  AccessorID: z.string().optional(),
  SecretID: z.string().optional(),
  Description: z.string().optional(),
  Policies: z.array(LinkBody).optional(),
  Roles: z.array(LinkBody).optional(),
  ServiceIdentities: z.array(ServiceIdentityBody).optional(),
  NodeIdentities: z.array(NodeIdentityBody).optional(),
  TemplatedPolicies: z.array(TemplatedPolicyBody).optional(),
  Local: z.boolean().optional(),
  AuthMethod: z.string().optional(),
  ExpirationTime: z.string().optional(),
  // Go clients send a time.Duration: integer nanoseconds; strings are Go durations.
  ExpirationTTL: z.union([z.string(), z.number()]).optional(),
  Namespace: z.string().optional(),
  // Computed or legacy fields of the structure: accepted and ignored.
  CreateTime: ignored,
  Name: ignored,
  Rules: ignored,
  Legacy: ignored,
  AuthMethodNamespace: ignored,
  ...READ_ONLY_FIELDS,
});
type TokenBody = z.infer<typeof TokenBody>;

/** The public service lets the bootstrap token's secret be chosen. */
const BootstrapBody = consulObject({ BootstrapSecret: z.string().optional() });
const CloneBody = consulObject({ Description: z.string().optional(), Namespace: z.string().optional() });
const ListQuery = CommonQuery.extend({ policy: z.string().optional(), role: z.string().optional(), authmethod: z.string().optional() });

/** The public service's bootstrap reset file, in the data directory. */
export const BOOTSTRAP_RESET_FILE = 'acl-bootstrap-reset';

const MIN_TTL_NS = 60e9;
const MAX_TTL_NS = 24 * 3600e9;

/** ExpirationTTL (a duration) or ExpirationTime (a time), checked against the public service's bounds. */
function expirationOf(body: TokenBody, now: number): number | undefined {
  if (body.ExpirationTTL !== undefined && body.ExpirationTTL !== 0 && body.ExpirationTTL !== '') {
    const ns = typeof body.ExpirationTTL === 'number' ? body.ExpirationTTL : parseDuration(body.ExpirationTTL);
    if (ns === undefined) throw badRequest(`Token Expiration TTL ${JSON.stringify(body.ExpirationTTL)} is not a duration (e.g. "30m")`);
    if (body.ExpirationTime) throw badRequest('Token Expiration TTL and Expiration Time cannot both be set');
    if (ns < MIN_TTL_NS || ns > MAX_TTL_NS) {
      throw badRequest(`Token Expiration TTL '${formatDuration(ns)}' should be between ${formatDuration(MIN_TTL_NS)} and ${formatDuration(MAX_TTL_NS)}`);
    }
    return now + Math.round(ns / 1e6);
  }
  if (body.ExpirationTime) {
    const at = Date.parse(body.ExpirationTime);
    if (Number.isNaN(at)) throw badRequest(`Token Expiration Time ${JSON.stringify(body.ExpirationTime)} is not a time`);
    if (at <= now) throw badRequest('Token Expiration Time cannot be in the past');
    return at;
  }
  return undefined;
}

async function linksOf(ctx: CatalogContext, body: TokenBody, ns: string) {
  // The legacy field is in the public structure, but refused when set, as the public service does.
  if (typeof body.Rules === 'string' && body.Rules !== '') throw badRequest('Rules cannot be specified for this token');
  const identities = normalizeIdentities(body.ServiceIdentities, body.NodeIdentities, body.TemplatedPolicies);
  const policies = await resolvePolicyLinks(ctx.db, body.Policies, ns);
  const roles = await resolveRoleLinks(ctx.db, body.Roles, ns);
  return { policyIds: policies.map((p) => p.id), roleIds: roles.map((r) => r.id), ...identities };
}

/** The token named by the path in the request's namespace, or "ACL not found". */
async function tokenInNamespace(ctx: CatalogContext, id: string, ns: string): Promise<TokenRow> {
  const row = await getToken(ctx.db, id, ctx.now);
  if (!row || row.ns !== ns) throw aclNotFound();
  return row;
}

/**
 * Whether bootstrap is over, as the public service decides: once a bootstrap happened or any
 * management token exists (Hangar's root token is the initial management token). Answers the reset
 * index then (the index of the last bootstrap, else of the ACL table), undefined while allowed.
 */
async function bootstrapResetIndex(ctx: CatalogContext): Promise<number | undefined> {
  const done = await ctx.db.get<{ value: number }>("SELECT value FROM catalog_meta WHERE name = 'acl_bootstrap'");
  if (done) return Number(done.value);
  const management =
    (await storedRootAccessor(ctx.db)) !== undefined ||
    (await ctx.db.get('SELECT 1 AS one FROM catalog_acl_tokens WHERE policies LIKE ?', [`%${GLOBAL_MANAGEMENT_ID}%`])) !== undefined;
  return management ? tablesIndex(ctx.db, ['acl']) : undefined;
}

/**
 * The public service's reset: a file `acl-bootstrap-reset` in the data directory holding the reset
 * index allows one more bootstrap. The file is removed when used.
 */
function consumeResetFile(ctx: CatalogContext, resetIndex: number): boolean {
  if (!ctx.engine.dataDir) return false;
  const file = join(ctx.engine.dataDir, BOOTSTRAP_RESET_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch {
    return false;
  }
  if (text !== String(resetIndex)) return false;
  rmSync(file, { force: true });
  return true;
}

/** The secret of the root token when the caller is the root token itself (only its hash is stored). */
function rootSecretFor(ctx: CatalogContext, accessorId: string): string | undefined {
  const actor = actorOf(ctx);
  return actor.accessorId === accessorId && !actor.stored ? actor.secretId : undefined;
}

export const aclTokenRoutes = [
  catalogRoute({
    method: 'PUT',
    path: '/v1/acl/bootstrap',
    query: CommonQuery,
    body: BootstrapBody.optional(),
    permission: 'public',
    handler: async ({ body }, ctx) => {
      const chosen = body?.BootstrapSecret;
      if (chosen !== undefined && chosen !== '' && !UUID.test(chosen)) throw badRequest('Invalid BootstrapSecret: must be a valid UUID');
      const resetIndex = await bootstrapResetIndex(ctx);
      if (resetIndex !== undefined && !consumeResetFile(ctx, resetIndex)) {
        throw new HangarError(403, [`Permission denied: ACL bootstrap no longer allowed (reset index: ${resetIndex})`]);
      }
      const writes = requestWrites(ctx);
      const index = await writes.next('acl');
      await ctx.db.run(
        "INSERT INTO catalog_meta (name, value) VALUES ('acl_bootstrap', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        [index],
      );
      const { row, secret } = await insertToken(writes, await tokenBarrier(ctx.engine), {
        secretId: chosen || undefined,
        ns: 'default',
        description: 'Bootstrap Token (Global Management)',
        policyIds: [GLOBAL_MANAGEMENT_ID],
        roleIds: [],
        services: [],
        nodes: [],
        local: false,
        now: ctx.now,
      });
      return { ID: secret, ...(await renderToken(ctx.db, row, secret)) };
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/acl/token/self',
    query: CommonQuery,
    permission: 'any valid token',
    transaction: 'read',
    handler: async (_input, ctx) => {
      const actor = actorOf(ctx);
      // As the public service: reading "self" without a token finds no token (the anonymous token is "anonymous").
      if (!actor.secretId && actor.stored) throw aclNotFound();
      if (!actor.stored) return rootTokenObject(actor.accessorId, actor.secretId);
      const row = await getToken(ctx.db, actor.accessorId, ctx.now);
      if (!row) throw aclNotFound();
      return renderToken(ctx.db, row, actor.secretId);
    },
  }),
  catalogRoute({
    method: 'PUT',
    path: '/v1/acl/token',
    query: CommonQuery,
    body: TokenBody,
    permission: 'acl:write',
    handler: async ({ query, body }, ctx) => {
      const ns = requestNamespace(ctx, query, body.Namespace);
      requirePermission(ctx, 'acl', 'write', undefined, ns);
      await requireLiveNamespace(ctx.db, ns);
      if (body.AuthMethod) throw badRequest('AuthMethod field is disallowed outside of login');
      for (const [field, value] of [['AccessorID', body.AccessorID], ['SecretID', body.SecretID]] as const) {
        if (value !== undefined && value !== '' && !UUID.test(value)) throw badRequest(`Invalid Token: ${field} must be a valid UUID`);
        if (value?.toLowerCase() === ANONYMOUS_ACCESSOR) throw badRequest(`Invalid Token: ${field} is reserved`);
      }
      const links = await linksOf(ctx, body, ns);
      const { row, secret } = await insertToken(requestWrites(ctx), await tokenBarrier(ctx.engine), {
        accessorId: body.AccessorID || undefined,
        secretId: body.SecretID || undefined,
        ns,
        description: body.Description ?? '',
        ...links,
        local: body.Local ?? false,
        expirationTime: expirationOf(body, ctx.now),
        now: ctx.now,
      });
      return renderToken(ctx.db, row, secret);
    },
  }),
  aclReadRoute('/v1/acl/token/:id', IdParam, async (db, params, ns, ctx) => {
    const root = await storedRootAccessor(db);
    if (params.id === root && ns === 'default') return rootTokenObject(root, rootSecretFor(ctx, root));
    const row = await getToken(db, params.id, ctx.now);
    if (!row || row.ns !== ns) return undefined;
    return renderToken(db, row, await visibleSecret(ctx, db, row));
  }, ACL_NOT_FOUND),
  catalogRoute({
    method: 'PUT',
    path: '/v1/acl/token/:id',
    params: IdParam,
    query: CommonQuery,
    body: TokenBody,
    permission: 'acl:write',
    handler: async ({ params, query, body }, ctx) => {
      if (body.AccessorID && body.AccessorID !== params.id) throw badRequest('Token Accessor ID in URL and payload do not match');
      const ns = requestNamespace(ctx, query, body.Namespace);
      requirePermission(ctx, 'acl', 'write', undefined, ns);
      const existing = await getToken(ctx.db, params.id, ctx.now);
      if (!existing || existing.ns !== ns) throw badRequest(`Cannot find token ${JSON.stringify(params.id)}`);
      if (body.SecretID && existing.secret_hash !== sha256(body.SecretID)) {
        throw badRequest('Changing a token\'s SecretID is not permitted');
      }
      if (body.AuthMethod !== undefined && body.AuthMethod !== (existing.auth_method ?? '')) throw badRequest('Cannot change AuthMethod of a token');
      if (body.Local !== undefined && body.Local !== (existing.local === 1)) throw badRequest('Cannot toggle local mode of a token');
      if (body.ExpirationTTL || (body.ExpirationTime && Date.parse(body.ExpirationTime) !== existing.expiration_time)) {
        throw badRequest('Cannot change expiration time of a token');
      }
      const links = await linksOf(ctx, body, ns);
      const index = await requestWrites(ctx).next('acl');
      await ctx.db.run(
        `UPDATE catalog_acl_tokens SET description = ?, policies = ?, roles = ?, service_identities = ?, node_identities = ?,
           templated_policies = ?, modify_index = ? WHERE accessor_id = ?`,
        [
          body.Description ?? existing.description,
          JSON.stringify(links.policyIds),
          JSON.stringify(links.roleIds),
          JSON.stringify(links.services),
          JSON.stringify(links.nodes),
          JSON.stringify(links.templated),
          index,
          params.id,
        ],
      );
      const updated = (await getToken(ctx.db, params.id, ctx.now))!;
      return renderToken(ctx.db, updated, await visibleSecret(ctx, ctx.db, updated));
    },
  }),
  catalogRoute({
    method: 'PUT',
    path: '/v1/acl/token/:id/clone',
    params: IdParam,
    query: CommonQuery,
    body: CloneBody,
    permission: 'acl:write',
    handler: async ({ params, query, body }, ctx) => {
      const ns = requestNamespace(ctx, query, body.Namespace);
      requirePermission(ctx, 'acl', 'write', undefined, ns);
      const source = await tokenInNamespace(ctx, params.id, ns);
      if (source.auth_method) throw badRequest('Cannot clone a token created from an auth method');
      if (source.accessor_id === ANONYMOUS_ACCESSOR) throw badRequest('Cannot clone the anonymous token');
      const { row, secret } = await insertToken(requestWrites(ctx), await tokenBarrier(ctx.engine), {
        ns,
        description: body.Description ?? source.description,
        policyIds: json<string[]>(source.policies, []),
        roleIds: json<string[]>(source.roles, []),
        services: json<ServiceIdentity[]>(source.service_identities, []),
        nodes: json<NodeIdentity[]>(source.node_identities, []),
        templated: json<TemplatedPolicy[]>(source.templated_policies, []),
        local: source.local === 1,
        expirationTime: source.expiration_time ?? undefined,
        now: ctx.now,
      });
      return renderToken(ctx.db, row, secret);
    },
  }),
  aclDeleteRoute('/v1/acl/token/:id', IdParam, async (ctx, params, ns) => {
    if (params.id === ANONYMOUS_ACCESSOR) throw badRequest('Delete operation not permitted on the anonymous token');
    if (params.id === actorOf(ctx).accessorId) throw badRequest('Deletion of the request\'s authorization token is not permitted');
    const row = await getToken(ctx.db, params.id, ctx.now);
    if (row && row.ns === ns) await deleteToken(requestWrites(ctx), params.id);
    return true;
  }),
  aclListRoute('/v1/acl/tokens', ListQuery, async (db, query, scope, ctx) => {
    const out = [];
    const root = await storedRootAccessor(db);
    // The root token is the initial management token: listed in default like a stored one.
    if (root && scope.visible('default') && (scope.all || scope.ns === 'default') && !query.role && !query.authmethod) {
      if (!query.policy || query.policy === GLOBAL_MANAGEMENT_ID) out.push({ ...rootTokenObject(root, rootSecretFor(ctx, root)), Legacy: false });
    }
    for (const row of await rowsInScope<TokenRow>(db, 'catalog_acl_tokens', scope, 'create_index')) {
      if (row.expiration_time !== null && Number(row.expiration_time) <= ctx.now) continue;
      if (!scope.visible(row.ns)) continue;
      if (query.policy && !json<string[]>(row.policies, []).includes(query.policy)) continue;
      if (query.role && !json<string[]>(row.roles, []).includes(query.role)) continue;
      if (query.authmethod && row.auth_method !== query.authmethod) continue;
      const { Rules: _rules, ...stub } = await renderToken(db, row, await visibleSecret(ctx, db, row));
      out.push({ ...stub, Legacy: false });
    }
    return out;
  }),
];
