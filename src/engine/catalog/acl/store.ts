import { createHash } from 'node:crypto';
import { BoundedMap } from '../../bounded-map';
import type { Db } from '../../storage';
import { getNamespace } from '../namespaces';
import { badRequest, GLOBAL_MANAGEMENT_ID, LOCAL_DATACENTER } from '../route';
import { Authorizer, Grants, PolicyRules } from './authorizer';
import { ParsedRules, parseRules, SegmentRule } from './rules';

export interface Link {
  readonly ID?: string;
  readonly Name?: string;
}
export interface ServiceIdentity {
  readonly ServiceName: string;
  readonly Datacenters?: string[] | null;
}
export interface NodeIdentity {
  readonly NodeName: string;
  readonly Datacenter: string;
}
/** A templated policy (public service >= 1.17): a builtin template with its variables. */
export interface TemplatedPolicy {
  readonly TemplateName: string;
  readonly TemplateVariables?: { readonly Name?: string };
  readonly Datacenters?: string[];
}

/** The builtin templates Hangar implements, and whether each needs the Name variable. */
export const POLICY_TEMPLATES: Readonly<Record<string, { readonly needsName: boolean }>> = {
  'builtin/service': { needsName: true },
  'builtin/node': { needsName: true },
  'builtin/dns': { needsName: false },
};

export interface PolicyRow {
  id: string;
  ns: string;
  name: string;
  description: string;
  rules: string;
  datacenters: string;
  create_index: number;
  modify_index: number;
}

export interface RoleRow {
  id: string;
  ns: string;
  name: string;
  description: string;
  policies: string;
  service_identities: string;
  node_identities: string;
  templated_policies: string;
  create_index: number;
  modify_index: number;
}

export interface TokenRow {
  accessor_id: string;
  secret_hash: string;
  ns: string;
  description: string;
  policies: string;
  roles: string;
  service_identities: string;
  node_identities: string;
  templated_policies: string;
  /** The secret, sealed by the barrier (null for tokens stored before secrets were sealed). */
  secret_sealed: string | null;
  local: number;
  auth_method: string | null;
  expiration_time: number | null;
  create_time: number;
  create_index: number;
  modify_index: number;
}

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** A content hash for the `Hash` field clients use to notice changes. */
export function contentHash(...parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64');
}

export const json = <T>(text: string | null | undefined, fallback: T): T => (text ? (JSON.parse(text) as T) : fallback);

// ---------------------------------------------------------------------------------------------
// Policies and roles, by ID or name; a link resolves in the object's namespace, then in default.

export async function getPolicy(db: Db, id: string): Promise<PolicyRow | undefined> {
  return db.get<PolicyRow>('SELECT * FROM catalog_acl_policies WHERE id = ?', [id]);
}

export async function getPolicyByName(db: Db, ns: string, name: string): Promise<PolicyRow | undefined> {
  return db.get<PolicyRow>('SELECT * FROM catalog_acl_policies WHERE ns = ? AND name = ?', [ns, name]);
}

export async function getRole(db: Db, id: string): Promise<RoleRow | undefined> {
  return db.get<RoleRow>('SELECT * FROM catalog_acl_roles WHERE id = ?', [id]);
}

export async function getRoleByName(db: Db, ns: string, name: string): Promise<RoleRow | undefined> {
  return db.get<RoleRow>('SELECT * FROM catalog_acl_roles WHERE ns = ? AND name = ?', [ns, name]);
}

async function resolveLinks<R extends { id: string; ns: string }>(
  links: readonly Link[] | null | undefined,
  ns: string,
  what: string,
  byId: (id: string) => Promise<R | undefined>,
  byName: (ns: string, name: string) => Promise<R | undefined>,
): Promise<R[]> {
  const out: R[] = [];
  for (const link of links ?? []) {
    let row: R | undefined;
    if (link.ID) {
      row = await byId(link.ID);
      if (row && row.ns !== ns && row.ns !== 'default') row = undefined;
      if (!row) throw badRequest(`No such ACL ${what} with ID ${JSON.stringify(link.ID)}`);
    } else if (link.Name) {
      row = (await byName(ns, link.Name)) ?? (ns !== 'default' ? await byName('default', link.Name) : undefined);
      if (!row) throw badRequest(`No such ACL ${what} with name ${JSON.stringify(link.Name)}`);
    } else {
      throw badRequest(`${what[0].toUpperCase()}${what.slice(1)} link needs an ID or a Name`);
    }
    if (!out.some((r) => r.id === row.id)) out.push(row);
  }
  return out;
}

export function resolvePolicyLinks(db: Db, links: readonly Link[] | null | undefined, ns: string): Promise<PolicyRow[]> {
  return resolveLinks(links, ns, 'policy', (id) => getPolicy(db, id), (n, name) => getPolicyByName(db, n, name));
}

export function resolveRoleLinks(db: Db, links: readonly Link[] | null | undefined, ns: string): Promise<RoleRow[]> {
  return resolveLinks(links, ns, 'role', (id) => getRole(db, id), (n, name) => getRoleByName(db, n, name));
}

/** Stored IDs back to `{ID, Name}` links; a link whose target was deleted disappears. */
export async function policyLinks(db: Db, ids: readonly string[]): Promise<Link[]> {
  const out: Link[] = [];
  for (const id of ids) {
    const row = await getPolicy(db, id);
    if (row) out.push({ ID: row.id, Name: row.name });
  }
  return out;
}

export async function roleLinks(db: Db, ids: readonly string[]): Promise<Link[]> {
  const out: Link[] = [];
  for (const id of ids) {
    const row = await getRole(db, id);
    if (row) out.push({ ID: row.id, Name: row.name });
  }
  return out;
}

export function validateIdentities(services: readonly ServiceIdentity[] | null | undefined, nodes: readonly NodeIdentity[] | null | undefined): void {
  for (const s of services ?? []) {
    if (!/^[a-z0-9]([a-z0-9\-_]*[a-z0-9])?$/.test(s.ServiceName)) {
      throw badRequest(`Service identity ${JSON.stringify(s.ServiceName)} has an invalid name. Only lowercase alphanumeric characters, '-' and '_' are allowed`);
    }
  }
  for (const n of nodes ?? []) {
    if (!/^[a-z0-9]([a-z0-9\-_]*[a-z0-9])?$/.test(n.NodeName)) {
      throw badRequest(`Node identity has an invalid name ${JSON.stringify(n.NodeName)}. Only lowercase alphanumeric characters, '-' and '_' are allowed`);
    }
    if (!n.Datacenter) throw badRequest(`Node identity ${JSON.stringify(n.NodeName)} is missing the datacenter field`);
  }
}

/** Templated policies as stored: a known template, with the Name it needs (a valid identity name). */
export function normalizeTemplated(templated: readonly TemplatedPolicy[] | undefined): TemplatedPolicy[] {
  return (templated ?? []).map((t) => {
    const template = POLICY_TEMPLATES[t.TemplateName];
    if (!template) throw badRequest(`Invalid templated policy: ${JSON.stringify(t.TemplateName)} is not one of ${Object.keys(POLICY_TEMPLATES).join(', ')}`);
    const name = t.TemplateVariables?.Name;
    if (template.needsName && (!name || !/^[a-z0-9]([a-z0-9\-_]*[a-z0-9])?$/.test(name))) {
      throw badRequest(`Invalid templated policy ${JSON.stringify(t.TemplateName)}: TemplateVariables.Name must be a valid name (lowercase letters, digits, '-' and '_')`);
    }
    return {
      TemplateName: t.TemplateName,
      ...(template.needsName ? { TemplateVariables: { Name: name } } : {}),
      ...(t.Datacenters?.length ? { Datacenters: t.Datacenters } : {}),
    };
  });
}

/** Identities and templated policies as stored: validated, without null or empty optional fields. */
export function normalizeIdentities(
  services: readonly ServiceIdentity[] | null | undefined,
  nodes: readonly NodeIdentity[] | null | undefined,
  templated?: readonly TemplatedPolicy[],
): { services: ServiceIdentity[]; nodes: NodeIdentity[]; templated: TemplatedPolicy[] } {
  validateIdentities(services, nodes);
  return {
    services: (services ?? []).map((s) => ({ ServiceName: s.ServiceName, ...(s.Datacenters?.length ? { Datacenters: s.Datacenters } : {}) })),
    nodes: (nodes ?? []).map((n) => ({ NodeName: n.NodeName, Datacenter: n.Datacenter })),
    templated: normalizeTemplated(templated),
  };
}

// ---------------------------------------------------------------------------------------------
// Rendering (the public service's field names)

export function renderPolicy(row: PolicyRow, stub = false): Record<string, unknown> {
  const datacenters = json<string[]>(row.datacenters, []);
  return {
    ID: row.id,
    Name: row.name,
    Description: row.description,
    ...(stub ? {} : { Rules: row.rules }),
    ...(datacenters.length ? { Datacenters: datacenters } : {}),
    Hash: contentHash(row.name, row.description, row.rules, datacenters),
    Namespace: row.ns,
    CreateIndex: Number(row.create_index),
    ModifyIndex: Number(row.modify_index),
  };
}

export async function renderRole(db: Db, row: RoleRow): Promise<Record<string, unknown>> {
  const policies = await policyLinks(db, json<string[]>(row.policies, []));
  const services = json<ServiceIdentity[]>(row.service_identities, []);
  const nodes = json<NodeIdentity[]>(row.node_identities, []);
  const templated = json<TemplatedPolicy[]>(row.templated_policies, []);
  return {
    ID: row.id,
    Name: row.name,
    Description: row.description,
    ...(policies.length ? { Policies: policies } : {}),
    ...(services.length ? { ServiceIdentities: services } : {}),
    ...(nodes.length ? { NodeIdentities: nodes } : {}),
    ...(templated.length ? { TemplatedPolicies: templated } : {}),
    Hash: contentHash(row.name, row.description, row.policies, row.service_identities, row.node_identities, row.templated_policies),
    Namespace: row.ns,
    CreateIndex: Number(row.create_index),
    ModifyIndex: Number(row.modify_index),
  };
}

/**
 * A token as the public service shows it. SecretID is the given secret (the caller just presented
 * or received it, or may see it: see visibleSecret), otherwise `<hidden>`.
 */
export async function renderToken(db: Db, row: TokenRow, secret?: string): Promise<Record<string, unknown>> {
  const policies = await policyLinks(db, json<string[]>(row.policies, []));
  const roles = await roleLinks(db, json<string[]>(row.roles, []));
  const services = json<ServiceIdentity[]>(row.service_identities, []);
  const nodes = json<NodeIdentity[]>(row.node_identities, []);
  const templated = json<TemplatedPolicy[]>(row.templated_policies, []);
  return {
    AccessorID: row.accessor_id,
    SecretID: secret ?? (row.accessor_id === '00000000-0000-0000-0000-000000000002' ? 'anonymous' : '<hidden>'),
    Description: row.description,
    ...(policies.length ? { Policies: policies } : {}),
    ...(roles.length ? { Roles: roles } : {}),
    ...(services.length ? { ServiceIdentities: services } : {}),
    ...(nodes.length ? { NodeIdentities: nodes } : {}),
    ...(templated.length ? { TemplatedPolicies: templated } : {}),
    Local: row.local === 1,
    ...(row.auth_method ? { AuthMethod: row.auth_method } : {}),
    ...(row.expiration_time !== null ? { ExpirationTime: new Date(Number(row.expiration_time)).toISOString() } : {}),
    CreateTime: new Date(Number(row.create_time)).toISOString(),
    Hash: contentHash(row.description, row.policies, row.roles, row.service_identities, row.node_identities, row.templated_policies, row.local),
    Namespace: row.ns,
    CreateIndex: Number(row.create_index),
    ModifyIndex: Number(row.modify_index),
  };
}

// ---------------------------------------------------------------------------------------------
// Authorizers

/** Parsed rules by policy version; bounded (rules may be large, and every edit makes a new version). */
export const PARSED_RULES_MAX = 1000;
const parsedCache = new BoundedMap<string, ParsedRules>(PARSED_RULES_MAX);
/** How many parsed policies are cached (tests check the bound). */
export const parsedRulesCached = (): number => parsedCache.size;

function parsedRules(row: PolicyRow): ParsedRules {
  const key = `${row.id}:${row.modify_index}`;
  let rules = parsedCache.get(key);
  if (!rules) {
    rules = parseRules(row.rules);
    parsedCache.set(key, rules);
  }
  return rules;
}

/** The policy a service identity stands for: write on the service (and its sidecar), read on the catalog. */
function serviceIdentityRules(identity: ServiceIdentity): ParsedRules | undefined {
  if (identity.Datacenters?.length && !identity.Datacenters.includes(LOCAL_DATACENTER)) return undefined;
  const segments: SegmentRule[] = [
    { resource: 'service', segment: identity.ServiceName, prefix: false, access: 'write' },
    { resource: 'service', segment: `${identity.ServiceName}-sidecar-proxy`, prefix: false, access: 'write' },
    { resource: 'service', segment: '', prefix: true, access: 'read' },
    { resource: 'node', segment: '', prefix: true, access: 'read' },
  ];
  return { flat: {}, segments, namespaces: [] };
}

/** The policy a node identity stands for: write on the node, read on services. */
function nodeIdentityRules(identity: NodeIdentity): ParsedRules | undefined {
  if (identity.Datacenter !== LOCAL_DATACENTER) return undefined;
  const segments: SegmentRule[] = [
    { resource: 'node', segment: identity.NodeName, prefix: false, access: 'write' },
    { resource: 'service', segment: '', prefix: true, access: 'read' },
  ];
  return { flat: {}, segments, namespaces: [] };
}

/** What a templated policy stands for: builtin/service and builtin/node are identities; builtin/dns reads. */
function templatedRules(t: TemplatedPolicy): ParsedRules | undefined {
  const name = t.TemplateVariables?.Name ?? '';
  if (t.TemplateName === 'builtin/service') return serviceIdentityRules({ ServiceName: name, Datacenters: t.Datacenters });
  if (t.TemplateName === 'builtin/node') return t.Datacenters?.length && !t.Datacenters.includes(LOCAL_DATACENTER) ? undefined : nodeIdentityRules({ NodeName: name, Datacenter: LOCAL_DATACENTER });
  if (t.TemplateName === 'builtin/dns') {
    const read = (resource: 'node' | 'service' | 'query'): SegmentRule => ({ resource, segment: '', prefix: true, access: 'read' });
    return { flat: {}, segments: [read('node'), read('service'), read('query')], namespaces: [] };
  }
  return undefined;
}

interface Linked {
  readonly ns: string;
  readonly policyIds: readonly string[];
  readonly roleIds: readonly string[];
  readonly services: readonly ServiceIdentity[];
  readonly nodes: readonly NodeIdentity[];
  readonly templated: readonly TemplatedPolicy[];
}

/** The rules behind some links; `management` when the global-management policy is among them. */
async function rulesOf(db: Db, linked: Linked): Promise<{ management: boolean; rules: PolicyRules[] }> {
  const policyIds = new Set(linked.policyIds);
  const services = [...linked.services];
  const nodes = [...linked.nodes];
  const templated = [...linked.templated];
  for (const roleId of linked.roleIds) {
    const role = await getRole(db, roleId);
    if (!role) continue;
    for (const id of json<string[]>(role.policies, [])) policyIds.add(id);
    services.push(...json<ServiceIdentity[]>(role.service_identities, []));
    nodes.push(...json<NodeIdentity[]>(role.node_identities, []));
    templated.push(...json<TemplatedPolicy[]>(role.templated_policies, []));
  }
  if (policyIds.has(GLOBAL_MANAGEMENT_ID)) return { management: true, rules: [] };
  const rules: PolicyRules[] = [];
  // A policy's rules apply in the namespace of the token that links it (a default-namespace policy
  // linked from another namespace governs that namespace); namespace blocks only from default.
  for (const id of policyIds) {
    const row = await getPolicy(db, id);
    if (row) rules.push({ ns: linked.ns, rules: parsedRules(row) });
  }
  for (const s of services) {
    const r = serviceIdentityRules(s);
    if (r) rules.push({ ns: linked.ns, rules: r });
  }
  for (const n of nodes) {
    const r = nodeIdentityRules(n);
    if (r) rules.push({ ns: linked.ns, rules: r });
  }
  for (const t of templated) {
    const r = templatedRules(t);
    if (r) rules.push({ ns: linked.ns, rules: r });
  }
  return { management: false, rules };
}

/** A token's authorizer: its links, then its namespace's default policies and roles, then the default policy. */
export async function authorizerFor(db: Db, token: TokenRow, defaultPolicy: 'allow' | 'deny'): Promise<Authorizer> {
  const own = await rulesOf(db, {
    ns: token.ns,
    policyIds: json<string[]>(token.policies, []),
    roleIds: json<string[]>(token.roles, []),
    services: json<ServiceIdentity[]>(token.service_identities, []),
    nodes: json<NodeIdentity[]>(token.node_identities, []),
    templated: json<TemplatedPolicy[]>(token.templated_policies, []),
  });
  if (own.management) return Authorizer.management();
  const layers = [new Grants(own.rules)];
  const namespace = await getNamespace(db, token.ns);
  if (namespace) {
    const defaults = await rulesOf(db, {
      ns: token.ns,
      policyIds: json<string[]>(namespace.policy_defaults, []),
      roleIds: json<string[]>(namespace.role_defaults, []),
      services: [],
      nodes: [],
      templated: [],
    });
    if (defaults.management) return Authorizer.management();
    layers.push(new Grants(defaults.rules));
  }
  return new Authorizer(layers, defaultPolicy);
}

/** A request's token with the indexes of the ACL and namespace tables, read in the same statement. */
export interface RequestToken extends TokenRow {
  acl_idx: number;
  namespaces_idx: number;
}

/**
 * The token of a secret's SHA-256 (hex), unless expired, with the indexes its authorizer depends on:
 * every write of a token, policy, role (the acl table) or of a namespace's defaults (namespaces)
 * moves one of them in its own transaction.
 */
export async function findRequestToken(db: Db, secretSha256: string, now: number): Promise<RequestToken | undefined> {
  const row = await db.get<RequestToken>(
    `SELECT t.*, (SELECT idx FROM catalog_tables WHERE name = 'acl') AS acl_idx, (SELECT idx FROM catalog_tables WHERE name = 'namespaces') AS namespaces_idx
     FROM catalog_acl_tokens t WHERE t.secret_hash = ?`,
    [secretSha256],
  );
  if (row && row.expiration_time !== null && Number(row.expiration_time) <= now) return undefined;
  return row;
}

/**
 * authorizerFor, kept in `cache` under the token's version and the two indexes read with it: a
 * change of any policy, role or namespace default (by any server) moves an index, so a request
 * never gets an authorizer older than what it read. Only for authentication, before the request
 * writes anything: what is cached was read from committed rows.
 */
export async function requestAuthorizer(
  db: Db,
  token: RequestToken,
  defaultPolicy: 'allow' | 'deny',
  cache: Map<string, Authorizer>,
  generation: number,
): Promise<Authorizer> {
  // The storage's generation: indexes read from a group commit that failed come back for other writes.
  const key = `${generation}:${token.accessor_id}:${token.modify_index}:${token.acl_idx}:${token.namespaces_idx}:${defaultPolicy}`;
  let authz = cache.get(key);
  if (!authz) {
    authz = await authorizerFor(db, token, defaultPolicy);
    cache.set(key, authz);
  }
  return authz;
}

export async function getToken(db: Db, accessorId: string, now: number): Promise<TokenRow | undefined> {
  const row = await db.get<TokenRow>('SELECT * FROM catalog_acl_tokens WHERE accessor_id = ?', [accessorId]);
  if (row && row.expiration_time !== null && Number(row.expiration_time) <= now) return undefined;
  return row;
}
