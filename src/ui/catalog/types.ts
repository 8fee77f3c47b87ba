/** The catalog API's objects, as far as the console shows them. */
export interface CatalogNode {
  readonly ID: string;
  readonly Node: string;
  readonly Address: string;
  readonly Datacenter: string;
  readonly Meta?: Record<string, string>;
}

export interface NodeService {
  readonly ID: string;
  readonly Service: string;
  readonly Tags: readonly string[] | null;
  readonly Address: string;
  readonly Port: number;
}

export interface HealthCheck {
  readonly Node: string;
  readonly CheckID: string;
  readonly Name: string;
  readonly Status: string;
  readonly Output: string;
  readonly ServiceID: string;
  readonly ServiceName: string;
}

export interface ServiceEntry {
  readonly Node: CatalogNode;
  readonly Service: NodeService;
  readonly Checks: readonly HealthCheck[];
}

export interface Session {
  readonly ID: string;
  readonly Name: string;
  readonly Node: string;
  readonly LockDelay: number;
  readonly Behavior: string;
  readonly TTL: string;
  readonly NodeChecks?: readonly string[] | null;
}

export interface KvEntry {
  readonly Key: string;
  readonly Value: string | null;
  readonly Flags: number;
  readonly Session?: string;
  readonly LockIndex: number;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

export interface AclLink {
  readonly ID?: string;
  readonly Name?: string;
}

export interface AclToken {
  readonly AccessorID: string;
  readonly SecretID: string;
  readonly Description: string;
  readonly Policies?: readonly AclLink[];
  readonly Roles?: readonly AclLink[];
  readonly Local: boolean;
  readonly CreateTime: string;
}

export interface AclPolicy {
  readonly ID: string;
  readonly Name: string;
  readonly Description: string;
  readonly Rules?: string;
}

export interface AclRole {
  readonly ID: string;
  readonly Name: string;
  readonly Description: string;
  readonly Policies?: readonly AclLink[];
}

export interface AuthMethod {
  readonly Name: string;
  readonly Type: string;
  readonly DisplayName?: string;
  readonly Description?: string;
  readonly MaxTokenTTL?: string;
  readonly TokenLocality?: string;
  readonly Config?: Record<string, unknown>;
}

export interface BindingRule {
  readonly ID: string;
  readonly AuthMethod: string;
  readonly Description: string;
  readonly Selector: string;
  readonly BindType: string;
  readonly BindName: string;
}

export interface Namespace {
  readonly Name: string;
  readonly Description: string;
  readonly DeletedAt?: string;
}

/** Path segments of a key or prefix, each %-encoded ("a b/c" -> "a%20b/c"). */
export function encodeKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}
