import { ApiError } from './errors';
import { ApiResponse, Transport } from './transport';

/** An ACL link as the catalog answers it: both the ID and the Name. */
export interface CatalogLink {
  readonly ID: string;
  readonly Name: string;
}

export interface CatalogNamespace {
  readonly Name: string;
  readonly Description: string;
  readonly Meta?: Record<string, string>;
  readonly ACLs?: { readonly PolicyDefaults?: CatalogLink[]; readonly RoleDefaults?: CatalogLink[] };
  readonly DeletedAt?: string;
}

export interface CatalogPolicy {
  readonly ID: string;
  readonly Name: string;
  readonly Description: string;
  readonly Rules: string;
  readonly Namespace: string;
}

export interface CatalogRole {
  readonly ID: string;
  readonly Name: string;
  readonly Description: string;
  readonly Policies?: CatalogLink[];
  readonly ServiceIdentities?: { readonly ServiceName: string; readonly Datacenters?: string[] }[];
  readonly NodeIdentities?: { readonly NodeName: string; readonly Datacenter: string }[];
  readonly Namespace: string;
}

export interface CatalogAuthMethod {
  readonly Name: string;
  readonly Type: string;
  readonly DisplayName?: string;
  readonly Description: string;
  /** A Go duration ("10m0s") when read; nanoseconds or a duration when written. */
  readonly MaxTokenTTL?: string | number;
  readonly TokenLocality?: string;
  readonly Config: Record<string, unknown>;
  readonly Namespace: string;
}

export interface CatalogBindingRule {
  readonly ID: string;
  readonly Description: string;
  readonly AuthMethod: string;
  readonly Selector: string;
  readonly BindType: string;
  readonly BindName: string;
  readonly Namespace: string;
}

/** A node as /v1/catalog/node answers it. */
export interface CatalogNodeInfo {
  readonly ID: string;
  readonly Node: string;
  readonly Address: string;
  readonly Datacenter: string;
  readonly TaggedAddresses?: Record<string, string> | null;
  readonly Meta?: Record<string, string> | null;
}

/** A service of a node (structs.NodeService). */
export interface CatalogNodeService {
  readonly ID: string;
  readonly Service: string;
  readonly Tags?: string[] | null;
  readonly Address: string;
  readonly Port: number;
  readonly Meta?: Record<string, string> | null;
  readonly Weights?: { readonly Passing: number; readonly Warning: number };
  readonly EnableTagOverride: boolean;
  readonly Namespace?: string;
}

/** A health check (structs.HealthCheck); the definition's durations are Go durations ("10s"). */
export interface CatalogHealthCheck {
  readonly Node: string;
  readonly CheckID: string;
  readonly Name: string;
  readonly Status: string;
  readonly Notes: string;
  readonly ServiceID: string;
  readonly Namespace?: string;
  readonly Definition: {
    readonly HTTP?: string;
    readonly TCP?: string;
    readonly UDP?: string;
    readonly GRPC?: string;
    readonly Method?: string;
    readonly Header?: Record<string, string[]> | null;
    readonly TLSSkipVerify?: boolean;
    readonly Interval?: string;
    readonly Timeout?: string;
    readonly DeregisterCriticalServiceAfter?: string;
  };
}

/** Fields of a write; the catalog's own (capitalized) names. */
export type CatalogFields = Record<string, unknown>;

const enc = encodeURIComponent;
/** A node name in a path: its segments encoded, its '/' kept (the catalog reads the rest of the path as the name). */
const encNode = (name: string) => name.split('/').map(enc).join('/');

/** Typed client of the catalog API (the ACL objects, namespaces, nodes and services that constructs manage). */
export class CatalogClient {
  constructor(
    private readonly transport: Transport,
    private readonly token?: string,
  ) {}

  /** The same client acting with another token. */
  withToken(token: string): CatalogClient {
    return new CatalogClient(this.transport, token);
  }

  /** One request; throws ApiError unless the status is one of `ok`. */
  protected async call<T>(method: string, path: string, body?: unknown, ok = [200, 204], query?: Record<string, string>): Promise<T> {
    const res: ApiResponse = await this.transport.request('catalog', method, path, { body, token: this.token, query });
    if (!ok.includes(res.status)) throw ApiError.from(res);
    return res.body as T;
  }

  /** A read that answers undefined when the object does not exist (404, a null body, or the ACL system's "ACL not found"). */
  private async find<T>(path: string, ns: string): Promise<T | undefined> {
    try {
      return (await this.call<T | null>('GET', path, undefined, [200], { ns })) ?? undefined;
    } catch (err) {
      if (err instanceof ApiError && (err.status === 404 || (err.status === 403 && err.messages.join().startsWith('ACL not found')))) return undefined;
      throw err;
    }
  }

  // Namespaces ----------------------------------------------------------------------------------

  getNamespace(name: string): Promise<CatalogNamespace | undefined> {
    return this.find(`/v1/namespace/${enc(name)}`, 'default');
  }

  /** Creates the namespace, or updates it when `exists`. */
  putNamespace(name: string, fields: CatalogFields, exists: boolean): Promise<CatalogNamespace> {
    return this.call('PUT', exists ? `/v1/namespace/${enc(name)}` : '/v1/namespace', { Name: name, ...fields });
  }

  /** Marks the namespace for deletion (a background job removes it with everything in it). */
  async deleteNamespace(name: string): Promise<boolean> {
    if (!(await this.getNamespace(name))) return false;
    await this.call('DELETE', `/v1/namespace/${enc(name)}`);
    return true;
  }

  // Policies -------------------------------------------------------------------------------------

  getPolicyByName(ns: string, name: string): Promise<CatalogPolicy | undefined> {
    return this.find(`/v1/acl/policy/name/${enc(name)}`, ns);
  }

  /** Creates a policy, or updates the one with `id`. */
  putPolicy(ns: string, fields: CatalogFields, id?: string): Promise<CatalogPolicy> {
    return this.call('PUT', id ? `/v1/acl/policy/${enc(id)}` : '/v1/acl/policy', { ...fields, Namespace: ns });
  }

  async deletePolicyByName(ns: string, name: string): Promise<boolean> {
    const policy = await this.getPolicyByName(ns, name);
    if (!policy) return false;
    await this.call('DELETE', `/v1/acl/policy/${enc(policy.ID)}`, undefined, [200], { ns });
    return true;
  }

  // Roles ----------------------------------------------------------------------------------------

  getRoleByName(ns: string, name: string): Promise<CatalogRole | undefined> {
    return this.find(`/v1/acl/role/name/${enc(name)}`, ns);
  }

  /** Creates a role, or updates the one with `id`. */
  putRole(ns: string, fields: CatalogFields, id?: string): Promise<CatalogRole> {
    return this.call('PUT', id ? `/v1/acl/role/${enc(id)}` : '/v1/acl/role', { ...fields, Namespace: ns });
  }

  async deleteRoleByName(ns: string, name: string): Promise<boolean> {
    const role = await this.getRoleByName(ns, name);
    if (!role) return false;
    await this.call('DELETE', `/v1/acl/role/${enc(role.ID)}`, undefined, [200], { ns });
    return true;
  }

  // Auth methods ---------------------------------------------------------------------------------

  getAuthMethod(ns: string, name: string): Promise<CatalogAuthMethod | undefined> {
    return this.find(`/v1/acl/auth-method/${enc(name)}`, ns);
  }

  /** Creates the auth method, or updates it when `exists`. */
  putAuthMethod(ns: string, name: string, fields: CatalogFields, exists: boolean): Promise<CatalogAuthMethod> {
    return this.call('PUT', exists ? `/v1/acl/auth-method/${enc(name)}` : '/v1/acl/auth-method', { ...fields, Name: name, Namespace: ns });
  }

  /** Deletes the auth method with its binding rules and the tokens it issued. */
  async deleteAuthMethod(ns: string, name: string): Promise<boolean> {
    if (!(await this.getAuthMethod(ns, name))) return false;
    await this.call('DELETE', `/v1/acl/auth-method/${enc(name)}`, undefined, [200], { ns });
    return true;
  }

  // Binding rules --------------------------------------------------------------------------------

  listBindingRules(ns: string, authMethod?: string): Promise<CatalogBindingRule[]> {
    return this.call('GET', '/v1/acl/binding-rules', undefined, [200], { ns, ...(authMethod ? { authmethod: authMethod } : {}) });
  }

  /** Creates a binding rule, or updates the one with `id`. */
  putBindingRule(ns: string, fields: CatalogFields, id?: string): Promise<CatalogBindingRule> {
    return this.call('PUT', id ? `/v1/acl/binding-rule/${enc(id)}` : '/v1/acl/binding-rule', { ...fields, Namespace: ns });
  }

  deleteBindingRule(ns: string, id: string): Promise<boolean> {
    return this.call('DELETE', `/v1/acl/binding-rule/${enc(id)}`, undefined, [200], { ns });
  }

  // Nodes, services and checks --------------------------------------------------------------------

  getNode(name: string): Promise<CatalogNodeInfo | undefined> {
    return this.call<{ Node: CatalogNodeInfo } | null>('GET', `/v1/catalog/node/${encNode(name)}`, undefined, [200]).then((found) => found?.Node);
  }

  /** A node's services in a namespace; empty when the node does not exist. */
  async nodeServices(node: string, ns: string): Promise<CatalogNodeService[]> {
    const found = await this.call<{ Services: CatalogNodeService[] | null }>('GET', `/v1/catalog/node-services/${encNode(node)}`, undefined, [200], { ns });
    return found.Services ?? [];
  }

  /** A node's checks in a namespace. */
  nodeChecks(node: string, ns: string): Promise<CatalogHealthCheck[]> {
    return this.call('GET', `/v1/health/node/${encNode(node)}`, undefined, [200], { ns });
  }

  /** PUT /v1/catalog/register (structs.RegisterRequest). */
  register(fields: CatalogFields): Promise<boolean> {
    return this.call('PUT', '/v1/catalog/register', fields, [200]);
  }

  /** PUT /v1/catalog/deregister: a node, or one of its services or checks. */
  deregister(fields: CatalogFields): Promise<boolean> {
    return this.call('PUT', '/v1/catalog/deregister', fields, [200]);
  }
}
