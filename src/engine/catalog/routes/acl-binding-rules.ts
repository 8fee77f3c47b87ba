import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Db } from '../../storage';
import { getAuthMethod, selectableNames } from '../acl/auth-methods';
import { BIND_TYPES, BindNameError, BindType, validateBindName } from '../acl/bind-name';
import { Selector, SelectorError } from '../acl/selector';
import { requestNamespace, requireLiveNamespace } from '../namespaces';
import { badRequest, CatalogContext, CommonQuery, consulObject, ignored, READ_ONLY_FIELDS, requirePermission, UUID } from '../route';
import { requestWrites } from '../runtime';
import { aclCreateRoute, aclDeleteRoute, aclListRoute, aclReadRoute, aclUpdateRoute, deleteAclRow, IdParam } from './acl-crud';

export interface BindingRuleRow {
  id: string;
  ns: string;
  description: string;
  auth_method: string;
  selector: string;
  bind_type: string;
  bind_name: string;
  create_index: number;
  modify_index: number;
}

const RuleBody = consulObject({
  ID: z.string().optional(),
  Description: z.string().optional(),
  AuthMethod: z.string().optional(),
  Selector: z.string().optional(),
  BindType: z.string().optional(),
  BindName: z.string().optional(),
  BindVars: ignored,
  Namespace: z.string().optional(),
  ...READ_ONLY_FIELDS,
});
type RuleBody = z.infer<typeof RuleBody>;

const ListQuery = CommonQuery.extend({ authmethod: z.string().optional() });

export function renderBindingRule(row: BindingRuleRow): Record<string, unknown> {
  return {
    ID: row.id,
    Description: row.description,
    AuthMethod: row.auth_method,
    Selector: row.selector,
    BindType: row.bind_type,
    BindName: row.bind_name,
    Namespace: row.ns,
    CreateIndex: Number(row.create_index),
    ModifyIndex: Number(row.modify_index),
  };
}

async function getRule(db: Db, id: string): Promise<BindingRuleRow | undefined> {
  return db.get<BindingRuleRow>('SELECT * FROM catalog_acl_binding_rules WHERE id = ?', [id]);
}

/** Creates or updates a rule; AuthMethod is required and immutable, the selector and BindName are checked. */
async function writeRule(ctx: CatalogContext, query: CommonQuery, body: RuleBody, id?: string) {
  const ns = requestNamespace(ctx, query, body.Namespace);
  requirePermission(ctx, 'acl', 'write', undefined, ns);
  await requireLiveNamespace(ctx.db, ns);
  let existing: BindingRuleRow | undefined;
  if (id) {
    if (!UUID.test(id)) throw badRequest('Binding Rule ID invalid UUID');
    existing = await getRule(ctx.db, id);
    if (!existing || existing.ns !== ns) throw badRequest(`cannot find binding rule ${id}`);
    if (body.AuthMethod && body.AuthMethod !== existing.auth_method) throw badRequest('the AuthMethod field of an Binding Rule is immutable');
  }
  const authMethod = body.AuthMethod || existing?.auth_method || '';
  if (!authMethod) throw badRequest('Invalid Binding Rule: no AuthMethod is set');
  const method = await getAuthMethod(ctx.db, ns, authMethod);
  if (!method) throw badRequest(`cannot find auth method with name ${JSON.stringify(authMethod)}`);
  const names = selectableNames(method);
  const selector = body.Selector ?? existing?.selector ?? '';
  try {
    Selector.parse(selector, names);
  } catch (err) {
    if (err instanceof SelectorError) throw badRequest(`invalid Binding Rule: Selector is invalid: ${err.message}`);
    throw err;
  }
  const bindType = body.BindType ?? existing?.bind_type ?? '';
  const bindName = body.BindName ?? existing?.bind_name ?? '';
  if (!bindType) throw badRequest('Invalid Binding Rule: no BindType is set');
  if (!bindName) throw badRequest('Invalid Binding Rule: no BindName is set');
  if (!(BIND_TYPES as readonly string[]).includes(bindType)) throw badRequest(`Invalid Binding Rule: unknown BindType ${JSON.stringify(bindType)}`);
  try {
    validateBindName(bindType as BindType, bindName, names);
  } catch (err) {
    if (err instanceof BindNameError) throw badRequest(`Invalid Binding Rule: invalid BindName: ${err.message}`);
    throw err;
  }
  const index = await requestWrites(ctx).next('acl');
  const row: BindingRuleRow = {
    id: id ?? randomUUID(),
    ns,
    description: body.Description ?? existing?.description ?? '',
    auth_method: authMethod,
    selector,
    bind_type: bindType,
    bind_name: bindName,
    create_index: existing?.create_index ?? index,
    modify_index: index,
  };
  if (existing) {
    await ctx.db.run(
      'UPDATE catalog_acl_binding_rules SET description = ?, selector = ?, bind_type = ?, bind_name = ?, modify_index = ? WHERE id = ?',
      [row.description, row.selector, row.bind_type, row.bind_name, index, row.id],
    );
  } else {
    await ctx.db.run(
      `INSERT INTO catalog_acl_binding_rules (id, ns, description, auth_method, selector, bind_type, bind_name, create_index, modify_index)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [row.id, ns, row.description, authMethod, selector, bindType, bindName, index, index],
    );
  }
  return renderBindingRule(row);
}

/** /v1/acl/binding-rule*: rules that turn a login identity into a token's identities and roles. */
export const aclBindingRuleRoutes = [
  aclCreateRoute('/v1/acl/binding-rule', RuleBody, 'binding rule', writeRule),
  aclUpdateRoute('/v1/acl/binding-rule/:id', RuleBody, 'BindingRule', writeRule),
  aclReadRoute('/v1/acl/binding-rule/:id', IdParam, async (db, params, ns) => {
    const row = await getRule(db, params.id);
    return row && row.ns === ns ? renderBindingRule(row) : undefined;
  }),
  aclDeleteRoute('/v1/acl/binding-rule/:id', IdParam, async (ctx, params, ns) => {
    const row = await getRule(ctx.db, params.id);
    if (!row || row.ns !== ns) return false;
    await deleteAclRow(ctx, 'catalog_acl_binding_rules', params.id);
    return true;
  }),
  aclListRoute('/v1/acl/binding-rules', ListQuery, async (db, query, scope) => {
    const where = [...(scope.all ? [] : ['ns = ?']), ...(query.authmethod ? ['auth_method = ?'] : [])];
    const params = [...(scope.all ? [] : [scope.ns]), ...(query.authmethod ? [query.authmethod] : [])];
    const rows = await db.all<BindingRuleRow>(
      `SELECT * FROM catalog_acl_binding_rules ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY create_index`,
      params,
    );
    return rows.filter((r) => scope.visible(r.ns)).map(renderBindingRule);
  }),
];
