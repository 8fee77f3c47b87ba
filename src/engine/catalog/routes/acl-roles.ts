import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { UniqueViolation } from '../../storage';
import { getRole, getRoleByName, json, normalizeIdentities, renderRole, resolvePolicyLinks, RoleRow } from '../acl/store';
import { requestNamespace, requireLiveNamespace } from '../namespaces';
import {
  badRequest,
  CatalogContext,
  CommonQuery,
  consulObject,
  LinkBody,
  NodeIdentityBody,
  READ_ONLY_FIELDS,
  requirePermission,
  ROLE_NAME,
  ServiceIdentityBody,
  TemplatedPolicyBody,
} from '../route';
import { requestWrites } from '../runtime';
import { aclCreateRoute, aclDeleteRoute, aclListRoute, aclReadRoute, aclUpdateRoute, deleteAclRow, IdParam, NameParam, rowsInScope } from './acl-crud';

const RoleBody = consulObject({
  ID: z.string().optional(),
  Name: z.string().optional(),
  Description: z.string().optional(),
  Policies: z.array(LinkBody).optional(),
  ServiceIdentities: z.array(ServiceIdentityBody).optional(),
  NodeIdentities: z.array(NodeIdentityBody).optional(),
  TemplatedPolicies: z.array(TemplatedPolicyBody).optional(),
  Namespace: z.string().optional(),
  ...READ_ONLY_FIELDS,
});
type RoleBody = z.infer<typeof RoleBody>;

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
  const identities = normalizeIdentities(body.ServiceIdentities, body.NodeIdentities, body.TemplatedPolicies);
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
    templated_policies: JSON.stringify(identities.templated),
    create_index: existing?.create_index ?? index,
    modify_index: index,
  };
  try {
    if (existing) {
      await ctx.db.run(
        `UPDATE catalog_acl_roles SET name = ?, description = ?, policies = ?, service_identities = ?, node_identities = ?, templated_policies = ?,
           modify_index = ? WHERE id = ?`,
        [row.name, row.description, row.policies, row.service_identities, row.node_identities, row.templated_policies, index, row.id],
      );
    } else {
      await ctx.db.run(
        `INSERT INTO catalog_acl_roles (id, ns, name, description, policies, service_identities, node_identities, templated_policies,
           create_index, modify_index) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [row.id, row.ns, row.name, row.description, row.policies, row.service_identities, row.node_identities, row.templated_policies,
          row.create_index, row.modify_index],
      );
    }
  } catch (err) {
    if (err instanceof UniqueViolation) throw badRequest(`Invalid Role: A Role with Name ${JSON.stringify(name)} already exists`);
    throw err;
  }
  return renderRole(ctx.db, row);
}

export const aclRoleRoutes = [
  aclCreateRoute('/v1/acl/role', RoleBody, 'role', writeRole),
  aclUpdateRoute('/v1/acl/role/:id', RoleBody, 'Role', writeRole),
  aclReadRoute('/v1/acl/role/:id', IdParam, async (db, params, ns) => {
    const row = await getRole(db, params.id);
    return row && row.ns === ns ? renderRole(db, row) : undefined;
  }),
  aclReadRoute('/v1/acl/role/name/:name', NameParam, async (db, params, ns) => {
    const row = await getRoleByName(db, ns, params.name);
    return row ? renderRole(db, row) : undefined;
  }),
  aclDeleteRoute('/v1/acl/role/:id', IdParam, async (ctx, params, ns) => {
    const row = await getRole(ctx.db, params.id);
    if (row && row.ns === ns) await deleteAclRow(ctx, 'catalog_acl_roles', params.id);
    return true;
  }),
  aclListRoute('/v1/acl/roles', ListQuery, async (db, query, scope) => {
    const out = [];
    for (const row of await rowsInScope<RoleRow>(db, 'catalog_acl_roles', scope, 'create_index')) {
      if (!scope.visible(row.ns)) continue;
      if (query.policy && !json<string[]>(row.policies, []).includes(query.policy)) continue;
      out.push(await renderRole(db, row));
    }
    return out;
  }),
];
