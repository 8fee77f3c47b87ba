import { z } from 'zod';
import { HangarError } from '../../http/errors';
import { Reply } from '../../http/routes';
import type { Db } from '../../storage';
import { policyLinks, resolvePolicyLinks, resolveRoleLinks, roleLinks } from '../acl/store';
import { getNamespace, NamespaceRow } from '../namespaces';
import { blockingQuery, ok } from '../query';
import { actorOf, badRequest, CatalogContext, catalogRoute, CommonQuery, consulObject, LinkBody, ignored, NAMESPACE_NAME, READ_ONLY_FIELDS, requirePermission } from '../route';
import { requestWrites } from '../runtime';

const NamespaceBody = consulObject({
  Name: z.string().optional(),
  Description: z.string().optional(),
  ACLs: consulObject({ PolicyDefaults: z.array(LinkBody).optional(), RoleDefaults: z.array(LinkBody).optional() }).optional(),
  Meta: z.record(z.string(), z.string()).optional(),
  DeletedAt: ignored,
  ...READ_ONLY_FIELDS,
});
type NamespaceBody = z.infer<typeof NamespaceBody>;

const NameParam = z.object({ name: z.string().min(1) });

export async function renderNamespace(db: Db, row: NamespaceRow): Promise<Record<string, unknown>> {
  return {
    Name: row.name,
    Description: row.description,
    ACLs: {
      PolicyDefaults: await policyLinks(db, JSON.parse(row.policy_defaults) as string[]),
      RoleDefaults: await roleLinks(db, JSON.parse(row.role_defaults) as string[]),
    },
    Meta: JSON.parse(row.meta),
    ...(row.deleted_at !== null ? { DeletedAt: new Date(Number(row.deleted_at)).toISOString() } : {}),
    CreateIndex: Number(row.create_index),
    ModifyIndex: Number(row.modify_index),
  };
}

/** Whether the caller may see a namespace: operator:read, or read on the namespace itself. */
function mayRead(ctx: CatalogContext, name: string): boolean {
  const authz = actorOf(ctx).authz;
  return authz.allowed('operator', 'read') || authz.allowed('namespace', 'read', name);
}

/**
 * Default links of a namespace, by ID or name, stored by ID. They resolve in the namespace itself
 * (once it exists) or in default; the caller needs acl:write where each linked policy or role lives.
 */
async function defaultLinks(ctx: CatalogContext, name: string, acls: NamespaceBody['ACLs'], exists: boolean) {
  const where = exists ? name : 'default';
  const policies = await resolvePolicyLinks(ctx.db, acls?.PolicyDefaults, where);
  const roles = await resolveRoleLinks(ctx.db, acls?.RoleDefaults, where);
  for (const linked of [...policies, ...roles]) requirePermission(ctx, 'acl', 'write', undefined, linked.ns);
  return { policyDefaults: JSON.stringify(policies.map((p) => p.id)), roleDefaults: JSON.stringify(roles.map((r) => r.id)) };
}

async function writeNamespace(ctx: CatalogContext, body: NamespaceBody, pathName?: string) {
  requirePermission(ctx, 'operator', 'write');
  if (pathName && body.Name && body.Name !== pathName) throw badRequest('Namespace name in URL and payload do not match');
  const name = body.Name || pathName || '';
  if (!name) throw badRequest('Namespace: no Name is set');
  if (!NAMESPACE_NAME.test(name)) {
    throw badRequest(`Namespace name ${JSON.stringify(name)} is invalid: use a DNS label (letters, digits and '-', at most 63 characters)`);
  }
  const existing = await getNamespace(ctx.db, name);
  if (!pathName && existing) throw badRequest(`Namespace ${JSON.stringify(name)} already exists`);
  if (pathName && !existing) throw new HangarError(404, [`Namespace ${JSON.stringify(name)} not found`]);
  if (existing?.deleted_at != null) throw badRequest(`Namespace ${JSON.stringify(name)} is marked for deletion`);
  // An update replaces the whole namespace, as the public service's does: what the body leaves out is cleared.
  const links = await defaultLinks(ctx, name, body.ACLs, existing !== undefined);
  const index = await requestWrites(ctx).next('namespaces', 'acl');
  const description = body.Description ?? '';
  const meta = JSON.stringify(body.Meta ?? {});
  if (existing) {
    await ctx.db.run(
      'UPDATE catalog_namespaces SET description = ?, policy_defaults = ?, role_defaults = ?, meta = ?, modify_index = ? WHERE name = ?',
      [description, links.policyDefaults, links.roleDefaults, meta, index, name],
    );
  } else {
    await ctx.db.run(
      `INSERT INTO catalog_namespaces (name, description, policy_defaults, role_defaults, meta, create_index, modify_index)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      [name, description, links.policyDefaults, links.roleDefaults, meta, index, index],
    );
  }
  return renderNamespace(ctx.db, (await getNamespace(ctx.db, name))!);
}

/** /v1/namespace*: namespaces; a deleted one is marked, then emptied and removed in the background. */
export const namespaceRoutes = [
  catalogRoute({
    method: 'PUT',
    path: '/v1/namespace',
    query: CommonQuery,
    body: NamespaceBody,
    permission: 'operator:write',
    handler: async ({ body }, ctx) => writeNamespace(ctx, body),
  }),
  catalogRoute({
    method: 'PUT',
    path: '/v1/namespace/:name',
    params: NameParam,
    query: CommonQuery,
    body: NamespaceBody,
    permission: 'operator:write',
    handler: async ({ params, body }, ctx) => writeNamespace(ctx, body, params.name),
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/namespace/:name',
    params: NameParam,
    query: CommonQuery,
    permission: 'operator:read or namespace:read',
    transaction: 'read',
    handler: async ({ params, query }, ctx) => {
      if (!mayRead(ctx, params.name)) requirePermission(ctx, 'namespace', 'read', params.name);
      return blockingQuery(ctx, query, ['namespaces'], async (db) => {
        const row = await getNamespace(db, params.name);
        return row ? ok(await renderNamespace(db, row)) : { status: 404, body: undefined };
      });
    },
  }),
  catalogRoute({
    method: 'DELETE',
    path: '/v1/namespace/:name',
    params: NameParam,
    query: CommonQuery,
    permission: 'operator:write',
    handler: async ({ params }, ctx) => {
      requirePermission(ctx, 'operator', 'write');
      if (params.name === 'default') throw badRequest('Cannot delete the default namespace');
      const row = await getNamespace(ctx.db, params.name);
      if (row && row.deleted_at === null) {
        const index = await requestWrites(ctx).next('namespaces');
        await ctx.db.run('UPDATE catalog_namespaces SET deleted_at = ?, modify_index = ? WHERE name = ?', [ctx.now, index, params.name]);
      }
      return new Reply(200);
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/namespaces',
    query: CommonQuery,
    permission: 'operator:read or namespace:read (filtered)',
    transaction: 'read',
    handler: async ({ query }, ctx) =>
      blockingQuery(ctx, query, ['namespaces'], async (db) => {
        const rows = await db.all<NamespaceRow>('SELECT * FROM catalog_namespaces ORDER BY name');
        const out = [];
        for (const row of rows) if (mayRead(ctx, row.name)) out.push(await renderNamespace(db, row));
        return ok(out);
      }),
  }),
];
