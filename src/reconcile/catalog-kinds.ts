import { z } from 'zod';
import { Clients } from './clients';
import { differences, Outcome, ResourceKind } from './kind';
import type { CatalogHealthCheck, CatalogNodeService } from '../client/catalog';
import { formatDuration, parseDuration } from '../engine/catalog/route';

/**
 * The catalog's managed objects: namespaces, ACL policies, roles, auth methods, binding rules,
 * nodes and services. Keys: a namespace's and a node's is its name; the ACL objects' are
 * `<namespace>/<name>`, a binding rule's `<namespace>/<auth method>/<name>`, and a service's
 * `<namespace>/<node>/<service ID>` with node and ID URI-encoded (both may hold '/'). Binding rules have server-assigned IDs: the rule carries its
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

/** A Go duration ("1h"), or empty for none, as nanoseconds (so that "60s" and "1m0s" compare equal). */
const Duration = z
  .string()
  .default('')
  .transform((text, ctx) => {
    const ns = text === '' ? 0 : parseDuration(text);
    if (ns === undefined) ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration such as "1h" or "30m"` });
    return ns ?? 0;
  });

const AuthMethodDesired = z.object({
  displayName: z.string().default(''),
  description: z.string().default(''),
  /** A Go duration ("1h"), or empty for none; compared in nanoseconds. */
  maxTokenTtl: Duration,
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

const StringMap = z
  .record(z.string(), z.string())
  .default({})
  .transform((map) => canonical(map) as Record<string, string>);

const NodeDesired = z.object({
  address: z.string().min(1),
  /** Unset: the server's own datacenter (not compared). */
  datacenter: z.string().optional(),
  meta: StringMap,
  taggedAddresses: StringMap,
});
type NodeDesired = z.infer<typeof NodeDesired>;

/**
 * `catalog.node`: a node registered through the catalog (an external node, as the public provider's
 * `consul_node`); an update re-registers it in place. Deleting it removes its services and checks.
 */
export const catalogNodeKind: ResourceKind<NodeDesired> = {
  kind: 'catalog.node',
  deleteOrder: 15,
  desired: NodeDesired as unknown as z.ZodType<NodeDesired>,
  async read(clients, key) {
    const node = await clients.catalog.getNode(key);
    return (
      node && {
        address: node.Address,
        datacenter: node.Datacenter,
        meta: canonical(node.Meta ?? {}) as Record<string, string>,
        taggedAddresses: canonical(node.TaggedAddresses ?? {}) as Record<string, string>,
      }
    );
  },
  async upsert(clients, key, desired) {
    const { address, datacenter, taggedAddresses, meta } = desired;
    const fields = { Node: key, Address: address, Datacenter: datacenter, TaggedAddresses: taggedAddresses, NodeMeta: meta };
    const register = () => clients.catalog.register(fields);
    return converge(await this.read(clients, key), desired, register, register);
  },
  async delete(clients, key) {
    if (!(await clients.catalog.getNode(key))) return false;
    return clients.catalog.deregister({ Node: key });
  },
};

/** A check of a service, as the public provider's `consul_service` declares it. */
const CheckDesired = z.object({
  checkId: z.string().min(1),
  name: z.string().min(1),
  notes: z.string().default(''),
  /** The status a new check starts with (empty: critical); the checker owns it afterwards, so it is not compared. */
  status: z.enum(['', 'passing', 'warning', 'critical']).default(''),
  http: z.string().default(''),
  tcp: z.string().default(''),
  udp: z.string().default(''),
  grpc: z.string().default(''),
  method: z.string().default(''),
  header: z
    .record(z.string(), z.array(z.string()))
    .default({})
    .transform((map) => canonical(map) as Record<string, string[]>),
  tlsSkipVerify: z.boolean().default(false),
  interval: Duration,
  timeout: Duration,
  deregisterCriticalServiceAfter: Duration,
});
type CheckDesired = z.infer<typeof CheckDesired>;

const ServiceDesired = z.object({
  name: z.string().min(1),
  /** Empty: none of its own (readers fall back to the node's address). */
  address: z.string().default(''),
  port: z.number().int().min(0).max(65535).default(0),
  tags: z.array(z.string()).default([]),
  meta: StringMap,
  enableTagOverride: z.boolean().default(false),
  /** The public service's default: passing 1, warning 1. */
  weights: z.object({ passing: z.number().int().min(1), warning: z.number().int().min(0) }).default({ passing: 1, warning: 1 }),
  /** Unset: the server's own datacenter (not compared). */
  datacenter: z.string().optional(),
  checks: z
    .array(CheckDesired)
    .default([])
    .transform((checks) => [...checks].sort((a, b) => (a.checkId < b.checkId ? -1 : 1))),
});
type ServiceDesired = z.infer<typeof ServiceDesired>;

function splitServiceKey(key: string): { ns: string; node: string; id: string } {
  const [ns, node, id] = splitKey(key, 3).map(decodeURIComponent);
  return { ns, node, id };
}

/** The service and its checks as they are live. */
async function liveService(clients: Clients, key: string): Promise<{ service: CatalogNodeService; checks: CatalogHealthCheck[] } | undefined> {
  const { ns, node, id } = splitServiceKey(key);
  const service = (await clients.catalog.nodeServices(node, ns)).find((s) => s.ID === id);
  if (!service) return undefined;
  const checks = (await clients.catalog.nodeChecks(node, ns)).filter((c) => c.ServiceID === id);
  return { service, checks };
}

/** A live check in the shape of the desired ones; `initial` is the status it was declared with. */
function checkShape(check: CatalogHealthCheck, initial: CheckDesired['status']): CheckDesired {
  const d = check.Definition ?? {};
  const duration = (text: string | undefined) => (text ? (parseDuration(text) ?? 0) : 0);
  return {
    checkId: check.CheckID,
    name: check.Name,
    notes: check.Notes,
    status: initial,
    http: d.HTTP ?? '',
    tcp: d.TCP ?? '',
    udp: d.UDP ?? '',
    grpc: d.GRPC ?? '',
    method: d.Method ?? '',
    header: canonical(d.Header ?? {}) as Record<string, string[]>,
    tlsSkipVerify: d.TLSSkipVerify ?? false,
    interval: duration(d.Interval),
    timeout: duration(d.Timeout),
    deregisterCriticalServiceAfter: duration(d.DeregisterCriticalServiceAfter),
  };
}

/** A check as /v1/catalog/register takes it; a check that exists keeps the status its checks gave it. */
function checkBody(node: string, ns: string, serviceId: string, check: CheckDesired, liveStatus: string | undefined) {
  const duration = (nanos: number) => (nanos ? formatDuration(nanos) : undefined);
  return {
    Node: node,
    CheckID: check.checkId,
    Name: check.name,
    Notes: check.notes,
    Status: liveStatus ?? check.status,
    ServiceID: serviceId,
    Namespace: ns,
    Definition: {
      HTTP: check.http || undefined,
      TCP: check.tcp || undefined,
      UDP: check.udp || undefined,
      GRPC: check.grpc || undefined,
      Method: check.method || undefined,
      Header: Object.keys(check.header).length ? check.header : undefined,
      TLSSkipVerify: check.tlsSkipVerify || undefined,
      Interval: duration(check.interval),
      Timeout: duration(check.timeout),
      DeregisterCriticalServiceAfter: duration(check.deregisterCriticalServiceAfter),
    },
  };
}

/**
 * `catalog.service`: an external service on a node, with its checks, registered through the catalog
 * as the public provider's `consul_service` does: the node must exist and is left as it is. Any
 * change re-registers the service in place; checks no longer declared are deregistered.
 */
export const catalogServiceKind: ResourceKind<ServiceDesired> = {
  kind: 'catalog.service',
  deleteOrder: 18,
  desired: ServiceDesired as unknown as z.ZodType<ServiceDesired>,
  async read(clients, key, desired) {
    const live = await liveService(clients, key);
    if (!live) return undefined;
    const { service, checks } = live;
    const initial = (id: string) => desired?.checks.find((c) => c.checkId === id)?.status ?? '';
    return {
      name: service.Service,
      address: service.Address,
      port: service.Port,
      tags: service.Tags ?? [],
      meta: canonical(service.Meta ?? {}) as Record<string, string>,
      enableTagOverride: service.EnableTagOverride,
      weights: { passing: service.Weights?.Passing ?? 1, warning: service.Weights?.Warning ?? 1 },
      datacenter: desired?.datacenter,
      checks: checks.map((c) => checkShape(c, initial(c.CheckID))).sort((a, b) => (a.checkId < b.checkId ? -1 : 1)),
    };
  },
  async upsert(clients, key, desired) {
    const { ns, node, id } = splitServiceKey(key);
    const nodeInfo = await clients.catalog.getNode(node);
    if (!nodeInfo) throw new Error(`node "${node}" does not exist: declare it with a CatalogNode (or register it) before its services`);
    const live = await liveService(clients, key);
    const actual = live && (await this.read(clients, key, desired));
    if (actual && differences(desired, actual).length === 0) return 'unchanged';
    const liveStatus = new Map((live?.checks ?? []).map((c) => [c.CheckID, c.Status]));
    await clients.catalog.register({
      Datacenter: desired.datacenter,
      Node: node,
      Address: nodeInfo.Address,
      // Registering a service leaves its node as it is (the public provider's choice too).
      SkipNodeUpdate: true,
      Service: {
        ID: id,
        Service: desired.name,
        Address: desired.address,
        Port: desired.port,
        Tags: desired.tags,
        Meta: desired.meta,
        EnableTagOverride: desired.enableTagOverride,
        Weights: { Passing: desired.weights.passing, Warning: desired.weights.warning },
        Namespace: ns,
      },
      Checks: desired.checks.map((c) => checkBody(node, ns, id, c, liveStatus.get(c.checkId))),
    });
    // A registration adds and updates checks but removes none: those no longer declared go here.
    const declared = new Set(desired.checks.map((c) => c.checkId));
    for (const check of live?.checks ?? []) {
      if (!declared.has(check.CheckID)) await clients.catalog.deregister({ Node: node, CheckID: check.CheckID, Namespace: ns });
    }
    return live ? 'updated' : 'created';
  },
  async delete(clients, key) {
    if (!(await liveService(clients, key))) return false;
    const { ns, node, id } = splitServiceKey(key);
    return clients.catalog.deregister({ Node: node, ServiceID: id, Namespace: ns });
  },
};

export const CATALOG_KINDS = [
  catalogNamespaceKind,
  catalogNamespaceDefaultsKind,
  catalogPolicyKind, catalogRoleKind, catalogAuthMethodKind, catalogBindingRuleKind,
  catalogNodeKind, catalogServiceKind,
] as const;
