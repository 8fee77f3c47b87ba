import { z } from 'zod';
import { HangarError } from '../../http/errors';
import { UniqueViolation } from '../../storage';
import {
  getToken,
  json,
  NodeIdentity,
  renderToken,
  resolvePolicyLinks,
  resolveRoleLinks,
  ServiceIdentity,
  sha256,
  TokenRow,
  normalizeIdentities,
} from '../acl/store';
import { deleteToken, insertToken } from '../acl/tokens';
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
  READ_ONLY_FIELDS,
  requirePermission,
  ServiceIdentityBody,
  UUID,
} from '../route';
import { requestWrites } from '../runtime';
import { aclDeleteRoute, aclListRoute, aclReadRoute, IdParam, rowsInScope } from './acl-crud';

const TokenBody = consulObject({
  AccessorID: z.string().optional(),
  SecretID: z.string().optional(),
  Description: z.string().optional(),
  Policies: z.array(LinkBody).nullish(),
  Roles: z.array(LinkBody).nullish(),
  ServiceIdentities: z.array(ServiceIdentityBody).nullish(),
  NodeIdentities: z.array(NodeIdentityBody).nullish(),
  Local: z.boolean().optional(),
  AuthMethod: z.string().optional(),
  ExpirationTime: z.string().nullish(),
  ExpirationTTL: z.union([z.string(), z.number()]).optional(),
  Namespace: z.string().optional(),
  CreateTime: z.string().optional(),
  ...READ_ONLY_FIELDS,
});
type TokenBody = z.infer<typeof TokenBody>;

const CloneBody = consulObject({ Description: z.string().optional(), Namespace: z.string().optional() });
const ListQuery = CommonQuery.extend({ policy: z.string().optional(), role: z.string().optional(), authmethod: z.string().optional() });

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
  const identities = normalizeIdentities(body.ServiceIdentities, body.NodeIdentities);
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

/** The root token and the local administrator are not stored: their self-read is made up. */
function syntheticSelf(ctx: CatalogContext) {
  const actor = actorOf(ctx);
  return {
    AccessorID: actor.accessorId,
    SecretID: actor.secretId,
    Description: 'Initial Management Token',
    Policies: [{ ID: GLOBAL_MANAGEMENT_ID, Name: 'global-management' }],
    Local: false,
    CreateTime: new Date(0).toISOString(),
    Hash: '',
    Namespace: 'default',
    CreateIndex: 1,
    ModifyIndex: 1,
  };
}

export const aclTokenRoutes = [
  catalogRoute({
    method: 'PUT',
    path: '/v1/acl/bootstrap',
    query: CommonQuery,
    permission: 'public',
    handler: async (_input, ctx) => {
      const done = await ctx.db.get<{ value: number }>("SELECT value FROM catalog_meta WHERE name = 'acl_bootstrap'");
      const refuse = (index: number) => new HangarError(403, [`Permission denied: ACL bootstrap no longer allowed (reset index: ${index})`]);
      if (done) throw refuse(Number(done.value));
      const writes = requestWrites(ctx);
      const index = await writes.next('acl');
      try {
        await ctx.db.run("INSERT INTO catalog_meta (name, value) VALUES ('acl_bootstrap', ?)", [index]);
      } catch (err) {
        // Another bootstrap won the race (its index is the one that counts, but this one is close).
        if (err instanceof UniqueViolation) throw refuse(index);
        throw err;
      }
      const { row, secret } = await insertToken(writes, {
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
      if (!actor.stored) return syntheticSelf(ctx);
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
      const { row, secret } = await insertToken(requestWrites(ctx), {
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
    const row = await getToken(db, params.id, ctx.now);
    if (!row || row.ns !== ns) throw aclNotFound();
    return renderToken(db, row);
  }),
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
           modify_index = ? WHERE accessor_id = ?`,
        [
          body.Description ?? existing.description,
          JSON.stringify(links.policyIds),
          JSON.stringify(links.roleIds),
          JSON.stringify(links.services),
          JSON.stringify(links.nodes),
          index,
          params.id,
        ],
      );
      const secret = params.id === actorOf(ctx).accessorId ? actorOf(ctx).secretId : undefined;
      return renderToken(ctx.db, (await getToken(ctx.db, params.id, ctx.now))!, secret);
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
      const { row, secret } = await insertToken(requestWrites(ctx), {
        ns,
        description: body.Description ?? source.description,
        policyIds: json<string[]>(source.policies, []),
        roleIds: json<string[]>(source.roles, []),
        services: json<ServiceIdentity[]>(source.service_identities, []),
        nodes: json<NodeIdentity[]>(source.node_identities, []),
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
    for (const row of await rowsInScope<TokenRow>(db, 'catalog_acl_tokens', scope, 'create_index')) {
      if (row.expiration_time !== null && Number(row.expiration_time) <= ctx.now) continue;
      if (!scope.visible(row.ns)) continue;
      if (query.policy && !json<string[]>(row.policies, []).includes(query.policy)) continue;
      if (query.role && !json<string[]>(row.roles, []).includes(query.role)) continue;
      if (query.authmethod && row.auth_method !== query.authmethod) continue;
      const { Rules: _rules, ...stub } = await renderToken(db, row);
      out.push({ ...stub, Legacy: false });
    }
    return out;
  }),
];
