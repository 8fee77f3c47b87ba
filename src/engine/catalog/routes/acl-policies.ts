import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { UniqueViolation } from '../../storage';
import { parseRules, RulesError } from '../acl/rules';
import { getPolicy, getPolicyByName, PolicyRow, renderPolicy } from '../acl/store';
import { requestNamespace, requireLiveNamespace } from '../namespaces';
import {
  badRequest,
  CommonQuery,
  consulObject,
  GLOBAL_MANAGEMENT_ID,
  POLICY_NAME,
  READ_ONLY_FIELDS,
  requirePermission,
  CatalogContext,
} from '../route';
import { requestWrites } from '../runtime';
import { ACL_NOT_FOUND, aclCreateRoute, aclDeleteRoute, aclListRoute, aclReadRoute, aclUpdateRoute, deleteAclRow, IdParam, NameParam, rowsInScope } from './acl-crud';

const PolicyBody = consulObject({
  ID: z.string().optional(),
  Name: z.string().optional(),
  Description: z.string().optional(),
  Rules: z.string().optional(),
  Datacenters: z.array(z.string()).optional(),
  Namespace: z.string().optional(),
  ...READ_ONLY_FIELDS,
});
type PolicyBody = z.infer<typeof PolicyBody>;

/** Creates or updates a policy; the builtin global-management policy keeps its rules. */
async function writePolicy(ctx: CatalogContext, query: CommonQuery, body: PolicyBody, id?: string) {
  const ns = requestNamespace(ctx, query, body.Namespace);
  requirePermission(ctx, 'acl', 'write', undefined, ns);
  await requireLiveNamespace(ctx.db, ns);
  const existing = id ? await getPolicy(ctx.db, id) : undefined;
  if (id && (!existing || existing.ns !== ns)) throw badRequest(`Cannot find policy ${JSON.stringify(id)}`);
  const name = body.Name ?? existing?.name ?? '';
  if (!name) throw badRequest('Invalid Policy: no Name is set');
  if (!POLICY_NAME.test(name)) throw badRequest("Invalid Policy: invalid Name. Only alphanumeric characters, '-' and '_' are allowed");
  const rules = body.Rules ?? existing?.rules ?? '';
  if (id === GLOBAL_MANAGEMENT_ID) {
    if (rules !== existing!.rules) throw badRequest('Changing the Rules for the builtin global-management policy is not permitted');
    if (name !== existing!.name) throw badRequest('Changing the Name for the builtin global-management policy is not permitted');
  }
  try {
    parseRules(rules);
  } catch (err) {
    if (err instanceof RulesError) throw badRequest(`Invalid Policy: ${err.message}`);
    throw err;
  }
  const index = await requestWrites(ctx).next('acl');
  const row: PolicyRow = {
    id: id ?? randomUUID(),
    ns,
    name,
    description: body.Description ?? existing?.description ?? '',
    rules,
    datacenters: JSON.stringify(body.Datacenters ?? (existing ? JSON.parse(existing.datacenters) : [])),
    create_index: existing?.create_index ?? index,
    modify_index: index,
  };
  try {
    if (existing) {
      await ctx.db.run('UPDATE catalog_acl_policies SET name = ?, description = ?, rules = ?, datacenters = ?, modify_index = ? WHERE id = ?', [
        row.name, row.description, row.rules, row.datacenters, index, row.id,
      ]);
    } else {
      await ctx.db.run(
        'INSERT INTO catalog_acl_policies (id, ns, name, description, rules, datacenters, create_index, modify_index) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [row.id, row.ns, row.name, row.description, row.rules, row.datacenters, row.create_index, row.modify_index],
      );
    }
  } catch (err) {
    if (err instanceof UniqueViolation) throw badRequest(`Invalid Policy: A Policy with Name ${JSON.stringify(name)} already exists`);
    throw err;
  }
  return renderPolicy(row);
}

export const aclPolicyRoutes = [
  aclCreateRoute('/v1/acl/policy', PolicyBody, 'policy', writePolicy),
  aclUpdateRoute('/v1/acl/policy/:id', PolicyBody, 'Policy', writePolicy),
  aclReadRoute('/v1/acl/policy/:id', IdParam, async (db, params, ns) => {
    const row = await getPolicy(db, params.id);
    // Policies of the default namespace are readable from every namespace.
    return row && (row.ns === ns || row.ns === 'default') ? renderPolicy(row) : undefined;
  }, ACL_NOT_FOUND),
  aclReadRoute('/v1/acl/policy/name/:name', NameParam, async (db, params, ns) => {
    const row = await getPolicyByName(db, ns, params.name);
    return row ? renderPolicy(row) : undefined;
  }, ACL_NOT_FOUND),
  aclDeleteRoute('/v1/acl/policy/:id', IdParam, async (ctx, params, ns) => {
    if (params.id === GLOBAL_MANAGEMENT_ID) throw badRequest('Delete operation not permitted on the builtin global-management policy');
    const row = await getPolicy(ctx.db, params.id);
    if (row && row.ns === ns) await deleteAclRow(ctx, 'catalog_acl_policies', params.id);
    return true;
  }),
  aclListRoute('/v1/acl/policies', CommonQuery, async (db, _query, scope) => {
    const rows = await rowsInScope<PolicyRow>(db, 'catalog_acl_policies', scope, 'create_index, name');
    return rows.filter((r) => scope.visible(r.ns)).map((r) => renderPolicy(r, true));
  }),
];
