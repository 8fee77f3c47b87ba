import type { Db } from '../../storage';
import { LOCAL_DATACENTER } from '../route';
import { AuthMethodRow, selectableNames } from './auth-methods';
import { BindNameError, BindType, isValidBindName, renderBindName } from './bind-name';
import { Selector, Variables } from './selector';
import { getPolicyByName, getRoleByName, NodeIdentity, ServiceIdentity } from './store';
import type { BindingRuleRow } from '../routes/acl-binding-rules';

export interface Bindings {
  readonly services: ServiceIdentity[];
  readonly nodes: NodeIdentity[];
  readonly roleIds: string[];
  readonly policyIds: string[];
}

export class BindingError extends Error {}

/**
 * What the binding rules of an auth method grant an identity: each matching rule adds a service
 * identity, a node identity (in the local datacenter), a role or a policy (when one of that name
 * exists in the method's namespace; otherwise the rule is ignored).
 */
export async function evaluateBindings(db: Db, method: AuthMethodRow, vars: Variables): Promise<Bindings> {
  const rules = await db.all<BindingRuleRow>(
    'SELECT * FROM catalog_acl_binding_rules WHERE ns = ? AND auth_method = ? ORDER BY create_index',
    [method.ns, method.name],
  );
  const names = selectableNames(method);
  const out: Bindings = { services: [], nodes: [], roleIds: [], policyIds: [] };
  for (const rule of rules) {
    if (!Selector.parse(rule.selector, names).matches(vars)) continue;
    let name: string;
    try {
      name = renderBindName(rule.bind_name, vars);
    } catch (err) {
      if (err instanceof BindNameError) throw new BindingError(`cannot compute ${JSON.stringify(rule.bind_type)} bind name for bind target: ${err.message}`);
      throw err;
    }
    if (!isValidBindName(rule.bind_type as BindType, name)) {
      throw new BindingError(`computed ${JSON.stringify(rule.bind_type)} bind name for bind target is invalid: ${JSON.stringify(name)}`);
    }
    if (rule.bind_type === 'service') {
      if (!out.services.some((s) => s.ServiceName === name)) out.services.push({ ServiceName: name });
    } else if (rule.bind_type === 'node') {
      if (!out.nodes.some((n) => n.NodeName === name)) out.nodes.push({ NodeName: name, Datacenter: LOCAL_DATACENTER });
    } else if (rule.bind_type === 'role') {
      const role = await getRoleByName(db, method.ns, name);
      if (role && !out.roleIds.includes(role.id)) out.roleIds.push(role.id);
    } else {
      const policy = await getPolicyByName(db, method.ns, name);
      if (policy && !out.policyIds.includes(policy.id)) out.policyIds.push(policy.id);
    }
  }
  return out;
}

export function bindsNothing(b: Bindings): boolean {
  return b.services.length === 0 && b.nodes.length === 0 && b.roleIds.length === 0 && b.policyIds.length === 0;
}
