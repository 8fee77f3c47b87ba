import { z } from 'zod';
import { AUTH_METHOD_TYPES, AuthMethodRow, checkConfig, getAuthMethod, openConfig, renderAuthMethod, sealConfig } from '../acl/auth-methods';
import { tokenBarrier } from '../acl/tokens';
import { requestNamespace, requireLiveNamespace } from '../namespaces';
import {
  AUTH_METHOD_NAME,
  badRequest,
  CatalogContext,
  catalogRoute,
  CommonQuery,
  consulObject,
  formatDuration,
  parseDuration,
  ignored,
  READ_ONLY_FIELDS,
  requirePermission,
} from '../route';
import { requestWrites } from '../runtime';
import { aclDeleteRoute, aclListRoute, aclReadRoute, NameParam, rowsInScope } from './acl-crud';

const MethodBody = consulObject({
  Name: z.string().optional(),
  Type: z.string().optional(),
  DisplayName: z.string().optional(),
  Description: z.string().optional(),
  MaxTokenTTL: z.union([z.string(), z.number()]).optional(),
  TokenLocality: z.string().optional(),
  Config: z.record(z.string(), z.unknown()).optional(),
  Namespace: z.string().optional(),
  NamespaceRules: z.array(z.unknown()).optional(),
  TokenNameFormat: ignored,
  ...READ_ONLY_FIELDS,
});
type MethodBody = z.infer<typeof MethodBody>;

function maxTokenTtl(value: string | number | undefined): number {
  if (value === undefined || value === 0 || value === '' || value === '0s') return 0;
  const ns = typeof value === 'number' ? value : parseDuration(value);
  if (ns === undefined) throw badRequest(`Invalid Auth Method: MaxTokenTTL ${JSON.stringify(value)} is not a duration`);
  if (ns < 60e9 || ns > 86_400e9) throw badRequest(`MaxTokenTTL ${formatDuration(ns)} must be between 1m0s and 24h0m0s`);
  return ns;
}

async function writeMethod(ctx: CatalogContext, query: CommonQuery, body: MethodBody, pathName?: string) {
  if (pathName && body.Name && body.Name !== pathName) throw badRequest('AuthMethod Name in URL and payload do not match');
  const name = body.Name || pathName || '';
  const ns = requestNamespace(ctx, query, body.Namespace);
  requirePermission(ctx, 'acl', 'write', undefined, ns);
  await requireLiveNamespace(ctx.db, ns);
  if (!name) throw badRequest('Invalid Auth Method: no Name is set');
  if (!AUTH_METHOD_NAME.test(name)) throw badRequest("Invalid Auth Method: invalid Name. Only alphanumeric characters, '-' and '_' are allowed");
  const existing = await getAuthMethod(ctx.db, ns, name);
  const type = body.Type || existing?.type || '';
  if (existing && type !== existing.type) throw badRequest('the Type field of an Auth Method is immutable');
  if (!(AUTH_METHOD_TYPES as readonly string[]).includes(type)) throw badRequest(`Invalid Auth Method: Type should be one of: [${AUTH_METHOD_TYPES.join(' ')}]`);
  const locality = body.TokenLocality ?? existing?.token_locality ?? '';
  if (!['', 'local', 'global'].includes(locality)) throw badRequest("Invalid Auth Method: TokenLocality should be one of 'local' or 'global'");
  const barrier = await tokenBarrier(ctx.engine);
  const config = checkConfig(type, body.Config ?? (existing ? await openConfig(barrier, ctx.db, existing) : {}));
  const index = await requestWrites(ctx).next('acl');
  const row: AuthMethodRow = {
    ns,
    name,
    type,
    display_name: body.DisplayName ?? existing?.display_name ?? '',
    description: body.Description ?? existing?.description ?? '',
    max_token_ttl: body.MaxTokenTTL === undefined && existing ? Number(existing.max_token_ttl) : maxTokenTtl(body.MaxTokenTTL),
    token_locality: locality,
    config: await sealConfig(barrier, ctx.db, { ns, name, type }, config),
    create_index: existing?.create_index ?? index,
    modify_index: index,
  };
  if (existing) {
    await ctx.db.run(
      `UPDATE catalog_acl_auth_methods SET display_name = ?, description = ?, max_token_ttl = ?, token_locality = ?, config = ?, modify_index = ?
       WHERE ns = ? AND name = ?`,
      [row.display_name, row.description, row.max_token_ttl, row.token_locality, row.config, index, ns, name],
    );
  } else {
    await ctx.db.run(
      `INSERT INTO catalog_acl_auth_methods (ns, name, type, display_name, description, max_token_ttl, token_locality, config, create_index, modify_index)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [ns, name, type, row.display_name, row.description, row.max_token_ttl, row.token_locality, row.config, index, index],
    );
  }
  return renderAuthMethod(row, config);
}

/** /v1/acl/auth-method*: auth methods (type jwt) that /v1/acl/login validates identities with. */
export const aclAuthMethodRoutes = [
  catalogRoute({
    method: 'PUT',
    path: '/v1/acl/auth-method',
    query: CommonQuery,
    body: MethodBody,
    permission: 'acl:write',
    handler: async ({ query, body }, ctx) => writeMethod(ctx, query, body),
  }),
  catalogRoute({
    method: 'PUT',
    path: '/v1/acl/auth-method/:name',
    params: NameParam,
    query: CommonQuery,
    body: MethodBody,
    permission: 'acl:write',
    handler: async ({ params, query, body }, ctx) => writeMethod(ctx, query, body, params.name),
  }),
  aclReadRoute('/v1/acl/auth-method/:name', NameParam, async (db, params, ns, ctx) => {
    const row = await getAuthMethod(db, ns, params.name);
    return row ? renderAuthMethod(row, await openConfig(await tokenBarrier(ctx.engine), db, row)) : undefined;
  }),
  aclDeleteRoute('/v1/acl/auth-method/:name', NameParam, async (ctx, params, ns) => {
    if (await getAuthMethod(ctx.db, ns, params.name)) {
      // As the public service does: its binding rules and the tokens it issued go with it.
      await requestWrites(ctx).next('acl');
      await ctx.db.run('DELETE FROM catalog_acl_binding_rules WHERE ns = ? AND auth_method = ?', [ns, params.name]);
      await ctx.db.run('DELETE FROM catalog_acl_tokens WHERE ns = ? AND auth_method = ?', [ns, params.name]);
      await ctx.db.run('DELETE FROM catalog_acl_auth_methods WHERE ns = ? AND name = ?', [ns, params.name]);
    }
    return true;
  }),
  aclListRoute('/v1/acl/auth-methods', CommonQuery, async (db, _query, scope) => {
    const rows = await rowsInScope<AuthMethodRow>(db, 'catalog_acl_auth_methods', scope, 'name');
    return rows.filter((r) => scope.visible(r.ns)).map((r) => renderAuthMethod(r));
  }),
];
