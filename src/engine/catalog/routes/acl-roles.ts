import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { UniqueViolation } from '../../storage';
import { getRole, getRoleByName, json, normalizeIdentities, renderRole, resolvePolicyLinks, RoleRow } from '../acl/store';
import { requestNamespace, requireLiveNamespace } from '../namespaces';
import { blockingQuery, ok } from '../query';
import {
  badRequest,
  CatalogContext,
  catalogRoute,
  CommonQuery,
  consulObject,
  LinkBody,
  NodeIdentityBody,
  READ_ONLY_FIELDS,
  requirePermission,
  ROLE_NAME,
  ServiceIdentityBody,
} from '../route';
import { requestWrites } from '../runtime';

const RoleBody = consulObject({
  ID: z.string().optional(),
  Name: z.string().optional(),
  Description: z.string().optional(),
  Policies: z.array(LinkBody).nullish(),
  ServiceIdentities: z.array(ServiceIdentityBody).nullish(),
  NodeIdentities: z.array(NodeIdentityBody).nullish(),
  Namespace: z.string().optional(),
  ...READ_ONLY_FIELDS,
});
type RoleBody = z.infer<typeof RoleBody>;

const Id = z.object({ id: z.string().min(1) });
const Name = z.object({ name: z.string().min(1) });
const ListQuery = CommonQuery.extend({ policy: z.string().optional() });

async function writeRole(ctx: CatalogContext, query: CommonQuery, body: RoleBody, id?: string) {
  const ns = requestNamespace(ctx, query, body.Namespace);
  requirePermission(ctx, 'acl', 'write', undefined, ns);
  await requireLiveNamespace(ctx.db, ns);
  const existing = id ? await getRole(ctx.db, id) : undefined;
  if (id && (!existing || existing.ns !== ns)) throw badRequest(`Cannot find role ${JSON.stringify(id)}`);
  const name = body.Name ?? existing?.name ?? '';
  if (!name) throw badRequest('Invalid Role: no Name is set');
  if (!ROLE_NAME.test(name)) throw badRequest("Invalid Role: invalid Name. Only alphanumeric characters, '-' and '_' are allowed");
  const identities = normalizeIdentities(body.ServiceIdentities, body.NodeIdentities);
  const policies =
    body.Policies === undefined && existing
      ? json<string[]>(existing.policies, [])
      : (await resolvePolicyLinks(ctx.db, body.Policies, ns)).map((p) => p.id);
  const index = await requestWrites(ctx).next('acl');
  const row: RoleRow = {
    id: id ?? randomUUID(),
    ns,
    name,
    description: body.Description ?? existing?.description ?? '',
    policies: JSON.stringify(policies),
    service_identities: JSON.stringify(identities.services),
    node_identities: JSON.stringify(identities.nodes),
    create_index: existing?.create_index ?? index,
    modify_index: index,
  };
  try {
    if (existing) {
      await ctx.db.run(
        'UPDATE catalog_acl_roles SET name = ?, description = ?, policies = ?, service_identities = ?, node_identities = ?, modify_index = ? WHERE id = ?',
        [row.name, row.description, row.policies, row.service_identities, row.node_identities, index, row.id],
      );
    } else {
      await ctx.db.run(
        `INSERT INTO catalog_acl_roles (id, ns, name, description, policies, service_identities, node_identities, create_index, modify_index)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [row.id, row.ns, row.name, row.description, row.policies, row.service_identities, row.node_identities, row.create_index, row.modify_index],
      );
    }
  } catch (err) {
    if (err instanceof UniqueViolation) throw badRequest(`Invalid Role: A Role with Name ${JSON.stringify(name)} already exists`);
    throw err;
  }
  return renderRole(ctx.db, row);
}

export const aclRoleRoutes = [
  catalogRoute({
    method: 'PUT',
    path: '/v1/acl/role',
    query: CommonQuery,
    body: RoleBody,
    permission: 'acl:write',
    handler: async ({ query, body }, ctx) => {
      if (body.ID) throw badRequest('Cannot specify the ID when creating a new role');
      return writeRole(ctx, query, body);
    },
  }),
  catalogRoute({
    method: 'PUT',
    path: '/v1/acl/role/:id',
    params: Id,
    query: CommonQuery,
    body: RoleBody,
    permission: 'acl:write',
    handler: async ({ params, query, body }, ctx) => {
      if (body.ID && body.ID !== params.id) throw badRequest('Role ID in URL and payload do not match');
      return writeRole(ctx, query, body, params.id);
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/acl/role/:id',
    params: Id,
    query: CommonQuery,
    permission: 'acl:read',
    transaction: 'none',
    handler: async ({ params, query }, ctx) => {
      const ns = requestNamespace(ctx, query);
      requirePermission(ctx, 'acl', 'read', undefined, ns);
      return blockingQuery(ctx, query, ['acl'], async (db) => {
        const row = await getRole(db, params.id);
        return row && row.ns === ns ? ok(await renderRole(db, row)) : { status: 404, body: undefined };
      });
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/acl/role/name/:name',
    params: Name,
    query: CommonQuery,
    permission: 'acl:read',
    transaction: 'none',
    handler: async ({ params, query }, ctx) => {
      const ns = requestNamespace(ctx, query);
      requirePermission(ctx, 'acl', 'read', undefined, ns);
      return blockingQuery(ctx, query, ['acl'], async (db) => {
        const row = await getRoleByName(db, ns, params.name);
        return row ? ok(await renderRole(db, row)) : { status: 404, body: undefined };
      });
    },
  }),
  catalogRoute({
    method: 'DELETE',
    path: '/v1/acl/role/:id',
    params: Id,
    query: CommonQuery,
    permission: 'acl:write',
    handler: async ({ params, query }, ctx) => {
      const ns = requestNamespace(ctx, query);
      requirePermission(ctx, 'acl', 'write', undefined, ns);
      const row = await getRole(ctx.db, params.id);
      if (row && row.ns === ns) {
        await requestWrites(ctx).next('acl');
        await ctx.db.run('DELETE FROM catalog_acl_roles WHERE id = ?', [params.id]);
      }
      return true;
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/acl/roles',
    query: ListQuery,
    permission: 'acl:read',
    transaction: 'none',
    handler: async ({ query }, ctx) => {
      const all = query.ns === '*';
      const ns = all ? '*' : requestNamespace(ctx, query);
      if (!all) requirePermission(ctx, 'acl', 'read', undefined, ns);
      const authz = ctx.actor!.authz;
      return blockingQuery(ctx, query, ['acl'], async (db) => {
        const rows = await db.all<RoleRow>(
          all ? 'SELECT * FROM catalog_acl_roles ORDER BY create_index' : 'SELECT * FROM catalog_acl_roles WHERE ns = ? ORDER BY create_index',
          all ? [] : [ns],
        );
        const out = [];
        for (const row of rows) {
          if (all && !authz.allowed('acl', 'read', undefined, row.ns)) continue;
          if (query.policy && !json<string[]>(row.policies, []).includes(query.policy)) continue;
          out.push(await renderRole(db, row));
        }
        return ok(out);
      });
    },
  }),
];
