import { z } from 'zod';
import { Clients } from './clients';
import { differences, Outcome, ResourceKind } from './kind';
import { parseDuration } from '../engine/catalog/route';

/**
 * The catalog's managed objects: namespaces, ACL policies, roles, auth methods and binding rules.
 * Keys: a namespace's is its name; the others' are `<namespace>/<name>`, and a binding rule's
 * `<namespace>/<auth method>/<name>`. Binding rules have server-assigned IDs: the rule carries its
 * name as a marker at the end of its Description, `[hangar:<name>]`, by which it is found again.
 */

/** `<namespace>/<name>` (or `<namespace>/<method>/<name>` with `parts` 3). */
function splitKey(key: string, parts: 2 | 3): string[] {
  const split = key.split('/');
  if (split.length !== parts || split.some((p) => !p)) {
    throw new Error(`catalog key "${key}" is not of the form ${parts === 2 ? 'namespace/name' : 'namespace/authMethod/name'}`);
  }
  return split;
}

/** Upsert by the pattern every kind shares: create when absent, update only what differs. */
async function converge<D extends object>(
  actual: D | undefined,
  desired: D,
  create: () => Promise<unknown>,
  update: () => Promise<unknown>,
): Promise<Outcome> {
  if (!actual) {
    await create();
    return 'created';
  }
  if (differences(desired, actual).length === 0) return 'unchanged';
  await update();
  return 'updated';
}

/** Objects with sorted keys, so that stored and desired configurations compare equal. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== undefined && v !== null)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => [k, canonical(v)]),
  );
}

const NamespaceDesired = z.object({
  description: z.string().default(''),
  meta: z
    .record(z.string(), z.string())
    .default({})
    .transform((meta) => canonical(meta) as Record<string, string>),
});
type NamespaceDesired = z.infer<typeof NamespaceDesired>;

export const catalogNamespaceKind: ResourceKind<NamespaceDesired> = {
  kind: 'catalog.namespace',
  deleteOrder: 10,
  desired: NamespaceDesired as unknown as z.ZodType<NamespaceDesired>,
  async read(clients, key) {
    const ns = await clients.catalog.getNamespace(key);
    return ns && { description: ns.Description, meta: canonical(ns.Meta ?? {}) as Record<string, string> };
  },
  async upsert(clients, key, desired) {
    const live = await clients.catalog.getNamespace(key);
    // An update replaces the whole namespace: the ACL defaults (another kind's) are sent back as they are.
    const fields = { Description: desired.description, Meta: desired.meta, ...(live?.ACLs ? { ACLs: live.ACLs } : {}) };
    if (live?.DeletedAt) throw new Error(`namespace ${key} is being deleted (since ${live.DeletedAt}); deploy again once the server has removed it`);
    const actual = await this.read(clients, key);
    return converge(actual, desired, () => clients.catalog.putNamespace(key, fields, false), () => clients.catalog.putNamespace(key, fields, true));
  },
  delete: (clients, key) => clients.catalog.deleteNamespace(key),
};

const NamespaceDefaultsDesired = z.object({
  policyDefaults: z.array(z.string()).default([]),
  roleDefaults: z.array(z.string()).default([]),
});
type NamespaceDefaultsDesired = z.infer<typeof NamespaceDefaultsDesired>;

/**
 * `catalog.namespace-defaults`: a namespace's ACLs.PolicyDefaults and RoleDefaults, by name. A step
 * of its own (key: the namespace name), applied after the namespace and the linked policies and
 * roles, which live in the namespace and so depend on it; deleting it clears the defaults.
 */
export const catalogNamespaceDefaultsKind: ResourceKind<NamespaceDefaultsDesired> = {
  kind: 'catalog.namespace-defaults',
  deleteOrder: 50,
  desired: NamespaceDefaultsDesired,
  async read(clients, key) {
    const ns = await clients.catalog.getNamespace(key);
    return (
      ns && {
        policyDefaults: (ns.ACLs?.PolicyDefaults ?? []).map((l) => l.Name),
        roleDefaults: (ns.ACLs?.RoleDefaults ?? []).map((l) => l.Name),
      }
    );
  },
  async upsert(clients, key, desired) {
    const actual = await this.read(clients, key);
    if (!actual) throw new Error(`namespace ${key} does not exist; its defaults are applied after it`);
    if (differences(desired, actual).length === 0) return 'unchanged';
    await putDefaults(clients, key, desired);
    return 'updated';
  },
  async delete(clients, key) {
    const ns = await clients.catalog.getNamespace(key);
    if (!ns || ns.DeletedAt) return false;
    await putDefaults(clients, key, { policyDefaults: [], roleDefaults: [] });
    return true;
  },
};

/** Sets a namespace's defaults; an update replaces the whole namespace, so Description and Meta go back as they are. */
async function putDefaults(clients: Clients, ns: string, defaults: NamespaceDefaultsDesired) {
  const ACLs = {
    PolicyDefaults: defaults.policyDefaults.map((Name) => ({ Name })),
    RoleDefaults: defaults.roleDefaults.map((Name) => ({ Name })),
  };
  const live = await clients.catalog.getNamespace(ns);
  return clients.catalog.putNamespace(ns, { Description: live?.Description ?? '', Meta: live?.Meta ?? {}, ACLs }, true);
}

const PolicyDesired = z.object({ description: z.string().default(''), rules: z.string() });
type PolicyDesired = z.infer<typeof PolicyDesired>;

export const catalogPolicyKind: ResourceKind<PolicyDesired> = {
  kind: 'catalog.policy',
  deleteOrder: 20,
  desired: PolicyDesired,
  async read(clients, key) {
    const policy = await clients.catalog.getPolicyByName(...(splitKey(key, 2) as [string, string]));
    return policy && { description: policy.Description, rules: policy.Rules };
  },
  async upsert(clients, key, desired) {
    const [ns, name] = splitKey(key, 2);
    const policy = await clients.catalog.getPolicyByName(ns, name);
    const fields = { Name: name, Description: desired.description, Rules: desired.rules };
    const actual = policy && { description: policy.Description, rules: policy.Rules };
    return converge(actual, desired, () => clients.catalog.putPolicy(ns, fields), () => clients.catalog.putPolicy(ns, fields, policy!.ID));
  },
  delete: (clients, key) => clients.catalog.deletePolicyByName(...(splitKey(key, 2) as [string, string])),
};

const RoleDesired = z.object({
  description: z.string().default(''),
  policies: z.array(z.string()).default([]),
  serviceIdentities: z.array(z.string()).default([]),
  nodeIdentities: z.array(z.string()).default([]),
});
type RoleDesired = z.infer<typeof RoleDesired>;

export const catalogRoleKind: ResourceKind<RoleDesired> = {
  kind: 'catalog.role',
  deleteOrder: 30,
  desired: RoleDesired,
  async read(clients, key) {
    const role = await clients.catalog.getRoleByName(...(splitKey(key, 2) as [string, string]));
    return (
      role && {
        description: role.Description,
        policies: (role.Policies ?? []).map((p) => p.Name),
        serviceIdentities: (role.ServiceIdentities ?? []).map((s) => s.ServiceName),
        nodeIdentities: (role.NodeIdentities ?? []).map((n) => n.NodeName),
      }
    );
  },
  async upsert(clients, key, desired) {
    const [ns, name] = splitKey(key, 2);
    const role = await clients.catalog.getRoleByName(ns, name);
    const fields = {
      Name: name,
      Description: desired.description,
      Policies: desired.policies.map((p) => ({ Name: p })),
      ServiceIdentities: desired.serviceIdentities.map((s) => ({ ServiceName: s })),
      // Node identities are in the local (the only) datacenter.
      NodeIdentities: desired.nodeIdentities.map((n) => ({ NodeName: n, Datacenter: 'dc1' })),
    };
    const actual = await this.read(clients, key);
    return converge(actual, desired, () => clients.catalog.putRole(ns, fields), () => clients.catalog.putRole(ns, fields, role!.ID));
  },
  delete: (clients, key) => clients.catalog.deleteRoleByName(...(splitKey(key, 2) as [string, string])),
};

const AuthMethodDesired = z.object({
  displayName: z.string().default(''),
  description: z.string().default(''),
  /** A Go duration ("1h"), or empty for none; compared in nanoseconds. */
  maxTokenTtl: z
    .string()
    .default('')
    .transform((text, ctx) => {
      const ns = text === '' ? 0 : parseDuration(text);
      if (ns === undefined) ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration such as "1h" or "30m"` });
      return ns ?? 0;
    }),
  tokenLocality: z.enum(['', 'local', 'global']).default(''),
  /** The jwt configuration, in the catalog's field names. */
  config: z.record(z.string(), z.unknown()).transform((config) => canonical(config) as Record<string, unknown>),
});
type AuthMethodDesired = z.infer<typeof AuthMethodDesired>;

export const catalogAuthMethodKind: ResourceKind<AuthMethodDesired> = {
  kind: 'catalog.auth-method',
  deleteOrder: 30,
  desired: AuthMethodDesired as unknown as z.ZodType<AuthMethodDesired>,
  async read(clients, key) {
    const method = await clients.catalog.getAuthMethod(...(splitKey(key, 2) as [string, string]));
    return (
      method && {
        displayName: method.DisplayName ?? '',
        description: method.Description,
        // Answered as a Go duration ("10m0s"); older servers answered nanoseconds.
        maxTokenTtl: typeof method.MaxTokenTTL === 'string' ? (parseDuration(method.MaxTokenTTL) ?? 0) : (method.MaxTokenTTL ?? 0),
        tokenLocality: (method.TokenLocality ?? '') as AuthMethodDesired['tokenLocality'],
        config: canonical(method.Config) as Record<string, unknown>,
      }
    );
  },
  async upsert(clients, key, desired) {
    const [ns, name] = splitKey(key, 2);
    const fields = {
      Type: 'jwt',
      DisplayName: desired.displayName,
      Description: desired.description,
      MaxTokenTTL: desired.maxTokenTtl,
      TokenLocality: desired.tokenLocality,
      Config: desired.config,
    };
    const actual = await this.read(clients, key);
    const put = (exists: boolean) => () => clients.catalog.putAuthMethod(ns, name, fields, exists);
    return converge(actual, desired, put(false), put(true));
  },
  delete: (clients, key) => clients.catalog.deleteAuthMethod(...(splitKey(key, 2) as [string, string])),
};

const BindingRuleDesired = z.object({
  description: z.string().default(''),
  selector: z.string().default(''),
  bindType: z.enum(['service', 'node', 'role', 'policy']),
  bindName: z.string().min(1),
});
type BindingRuleDesired = z.infer<typeof BindingRuleDesired>;

/** The marker that ends a managed rule's Description. */
const marker = (name: string) => `[hangar:${name}]`;

async function findRule(clients: Clients, key: string) {
  const [ns, method, name] = splitKey(key, 3);
  const rules = await clients.catalog.listBindingRules(ns, method).catch(() => []);
  return { ns, method, name, rule: rules.find((r) => r.Description.endsWith(marker(name))) };
}

export const catalogBindingRuleKind: ResourceKind<BindingRuleDesired> = {
  kind: 'catalog.binding-rule',
  deleteOrder: 40,
  desired: BindingRuleDesired,
  async read(clients, key) {
    const { name, rule } = await findRule(clients, key);
    return (
      rule && {
        description: rule.Description.slice(0, -marker(name).length).trimEnd(),
        selector: rule.Selector,
        bindType: rule.BindType as BindingRuleDesired['bindType'],
        bindName: rule.BindName,
      }
    );
  },
  async upsert(clients, key, desired) {
    const { ns, method, name, rule } = await findRule(clients, key);
    const fields = {
      AuthMethod: method,
      Description: desired.description ? `${desired.description} ${marker(name)}` : marker(name),
      Selector: desired.selector,
      BindType: desired.bindType,
      BindName: desired.bindName,
    };
    const actual = await this.read(clients, key);
    return converge(actual, desired, () => clients.catalog.putBindingRule(ns, fields), () => clients.catalog.putBindingRule(ns, fields, rule!.ID));
  },
  async delete(clients, key) {
    const { ns, rule } = await findRule(clients, key);
    return rule ? clients.catalog.deleteBindingRule(ns, rule.ID) : false;
  },
};

export const CATALOG_KINDS = [
  catalogNamespaceKind,
  catalogNamespaceDefaultsKind,
  catalogPolicyKind, catalogRoleKind, catalogAuthMethodKind, catalogBindingRuleKind,
] as const;
