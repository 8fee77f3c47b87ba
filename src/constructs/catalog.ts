import { TerraformStack as Stack } from 'cdktf';
import { Construct } from 'constructs';
import { CustomResource } from './custom-resource';
import { Hangar } from './hangar';
import { ANY_ADDRESSES, isAddress, metadataProblem } from '../engine/catalog/validation';
import { serviceKey } from '../reconcile/catalog-key';

/*
 * Constructs of the Hangar service catalog: namespaces, the ACL system, and external nodes and
 * services (as the public Terraform provider's consul_node and consul_service). Each object is identified by its
 * namespace and name (a new name or namespace makes a new object); a binding rule, whose ID the
 * server assigns, by its namespace, auth method and `name` (kept as a marker in its description).
 */

const NAMESPACE_NAME = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const POLICY_NAME = /^[A-Za-z0-9_-]{1,128}$/;
const ROLE_NAME = /^[A-Za-z0-9_-]{1,256}$/;
const AUTH_METHOD_NAME = /^[A-Za-z0-9_-]{1,128}$/;
const IDENTITY_NAME = /^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$/;
const RULE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const DURATION = /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/;
const HTTP_URL = /^https?:\/\/\S+$/;

function check(ok: boolean, message: string): void {
  if (!ok) throw new Error(message);
}

/** The namespace's name and the custom resources an object in it must follow. */
function placement(namespace: Namespace | undefined): { ns: string; parents: CustomResource[] } {
  return { ns: namespace?.name ?? 'default', parents: namespace ? [namespace._resource] : [] };
}

export interface NamespaceProps {
  /** The namespace name: a DNS label (letters, digits and "-", at most 63). `default` always exists and is not managed. */
  readonly name: string;
  /**
   * Free-form description.
   * @default ""
   */
  readonly description?: string;
  /**
   * Metadata (string keys and values).
   * @default {}
   */
  readonly meta?: Record<string, string>;
  /**
   * Names of policies applied to every token of the namespace (ACLs.PolicyDefaults), resolved in
   * this namespace, then in the default one. Names, not constructs, because policies in the
   * namespace are created after it: the defaults are a separate step, applied after the namespace
   * and every `AclPolicy` and `AclRole` of the stack they may name. Removing them clears the defaults.
   * @default []
   */
  readonly policyDefaults?: string[];
  /**
   * Names of roles applied to every token of the namespace (ACLs.RoleDefaults), resolved like
   * `policyDefaults`.
   * @default []
   */
  readonly roleDefaults?: string[];
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

/**
 * A namespace of the catalog. Removing it deletes everything in it (in the background). Its ACL
 * defaults are a second step (`catalog.namespace-defaults`), applied after the namespace and the
 * linked policies and roles: those usually live in the namespace, so they depend on it.
 */
export class Namespace extends Construct {
  public readonly name: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: NamespaceProps) {
    super(scope, id);
    check(NAMESPACE_NAME.test(props.name), `Namespace name "${props.name}" is invalid: use a DNS label (letters, digits and "-", at most 63, not starting or ending with "-")`);
    check(props.name !== 'default', 'Namespace name "default" is reserved: the default namespace always exists; leave `namespace` unset to use it');
    this.name = props.name;
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? Hangar.of(this),
      kind: 'catalog.namespace',
      key: props.name,
      desired: { description: props.description ?? '', meta: props.meta ?? {} },
    });
    const policies = props.policyDefaults ?? [];
    const roles = props.roleDefaults ?? [];
    for (const [field, names, pattern] of [['policyDefaults', policies, POLICY_NAME], ['roleDefaults', roles, ROLE_NAME]] as const) {
      for (const name of names) check(pattern.test(name), `Namespace ${props.name}: ${field} entry "${name}" is not a valid name (letters, digits, "-" and "_")`);
    }
    if (policies.length || roles.length) {
      const defaults = new CustomResource(this, 'Defaults', {
        hangar: props.hangar ?? Hangar.of(this),
        kind: 'catalog.namespace-defaults',
        key: props.name,
        desired: { policyDefaults: policies, roleDefaults: roles },
      });
      // After the policies and roles it may name, here or in default, found in the stack at synth time.
      defaults._after(() => {
        const linked = Stack.of(this)
          .node.findAll()
          .filter(
            (c): c is AclPolicy | AclRole =>
              ((c instanceof AclPolicy && policies.includes(c.name)) || (c instanceof AclRole && roles.includes(c.name))) &&
              (c.namespace === props.name || c.namespace === 'default'),
          );
        return [this._resource, ...linked.map((c) => c._resource)];
      });
    }
  }
}

export interface AclPolicyProps {
  /** The policy name: letters, digits, "-" and "_" (at most 128). */
  readonly name: string;
  /** The rules, in HCL or JSON, e.g. `key_prefix "app/" { policy = "write" }`. */
  readonly rules: string;
  /**
   * Free-form description.
   * @default ""
   */
  readonly description?: string;
  /**
   * The namespace the policy lives in.
   * @default - the `default` namespace
   */
  readonly namespace?: Namespace;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

/** An ACL policy of the catalog. */
export class AclPolicy extends Construct {
  public readonly name: string;
  /** The namespace's name. */
  public readonly namespace: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: AclPolicyProps) {
    super(scope, id);
    check(POLICY_NAME.test(props.name), `AclPolicy name "${props.name}" is invalid: use letters, digits, "-" and "_" (at most 128)`);
    check(props.rules.trim() !== '', `AclPolicy ${props.name}: rules are empty; give HCL or JSON rules such as 'key_prefix "app/" { policy = "read" }'`);
    const { ns, parents } = placement(props.namespace);
    this.name = props.name;
    this.namespace = ns;
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? Hangar.of(this),
      kind: 'catalog.policy',
      key: `${ns}/${props.name}`,
      desired: { description: props.description ?? '', rules: props.rules },
      dependsOn: parents,
    });
  }
}

export interface AclRoleProps {
  /** The role name: letters, digits, "-" and "_" (at most 256). */
  readonly name: string;
  /**
   * Free-form description.
   * @default ""
   */
  readonly description?: string;
  /**
   * Policies of the role; they must be in the role's namespace.
   * @default []
   */
  readonly policies?: AclPolicy[];
  /**
   * Service identities: service names (lowercase letters, digits, "-" and "_").
   * @default []
   */
  readonly serviceIdentities?: string[];
  /**
   * Node identities: node names (lowercase letters, digits, "-" and "_"), in the local datacenter.
   * @default []
   */
  readonly nodeIdentities?: string[];
  /**
   * The namespace the role lives in.
   * @default - the `default` namespace
   */
  readonly namespace?: Namespace;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

/** An ACL role of the catalog: policies plus service and node identities. */
export class AclRole extends Construct {
  public readonly name: string;
  /** The namespace's name. */
  public readonly namespace: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: AclRoleProps) {
    super(scope, id);
    check(ROLE_NAME.test(props.name), `AclRole name "${props.name}" is invalid: use letters, digits, "-" and "_" (at most 256)`);
    const { ns, parents } = placement(props.namespace);
    const policies = props.policies ?? [];
    for (const policy of policies) {
      check(policy.namespace === ns, `AclRole ${props.name}: policy "${policy.name}" is in namespace "${policy.namespace}", not "${ns}": use a policy of the role's namespace`);
    }
    for (const [field, names] of [['serviceIdentities', props.serviceIdentities], ['nodeIdentities', props.nodeIdentities]] as const) {
      for (const name of names ?? []) {
        check(IDENTITY_NAME.test(name), `AclRole ${props.name}: ${field} entry "${name}" is invalid: use lowercase letters, digits, "-" and "_"`);
      }
    }
    this.name = props.name;
    this.namespace = ns;
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? Hangar.of(this),
      kind: 'catalog.role',
      key: `${ns}/${props.name}`,
      desired: {
        description: props.description ?? '',
        policies: policies.map((p) => p.name),
        serviceIdentities: props.serviceIdentities ?? [],
        nodeIdentities: props.nodeIdentities ?? [],
      },
      dependsOn: [...parents, ...policies.map((p) => p._resource)],
    });
  }
}

/** Where the tokens of a login are valid. */
export enum TokenLocality {
  /** In the local datacenter (the public service's default). */
  LOCAL = 'local',
  /** In every datacenter. */
  GLOBAL = 'global',
}

export interface AclAuthMethodProps {
  /** The auth method name: letters, digits, "-" and "_" (at most 128). */
  readonly name: string;
  /**
   * Name shown to users.
   * @default - the name
   */
  readonly displayName?: string;
  /**
   * Free-form description.
   * @default ""
   */
  readonly description?: string;
  /**
   * Lifetime of the tokens a login creates, a duration between "1m" and "24h".
   * @default - tokens do not expire
   */
  readonly maxTokenTtl?: string;
  /**
   * Where the tokens of a login are valid.
   * @default TokenLocality.LOCAL
   */
  readonly tokenLocality?: TokenLocality;
  /**
   * PEM public keys that verify the JWTs. Exactly one of `jwtValidationPubKeys`, `jwksUrl` and `oidcDiscoveryUrl` is set.
   * @default - none
   */
  readonly jwtValidationPubKeys?: string[];
  /**
   * URL of the issuer's JSON Web Key Set.
   * @default - none
   */
  readonly jwksUrl?: string;
  /**
   * PEM CA certificate(s) for the JWKS URL.
   * @default - the system's CAs
   */
  readonly jwksCaCert?: string;
  /**
   * OIDC discovery URL (without `/.well-known/openid-configuration`).
   * @default - none
   */
  readonly oidcDiscoveryUrl?: string;
  /**
   * The `iss` claim a JWT must have.
   * @default - any issuer
   */
  readonly boundIssuer?: string;
  /**
   * `aud` values of which a JWT must have one.
   * @default - any audience
   */
  readonly boundAudiences?: string[];
  /**
   * Claims mapped to `value.<name>` selector variables (claim → name).
   * @default {}
   */
  readonly claimMappings?: Record<string, string>;
  /**
   * List claims mapped to `list.<name>` selector variables (claim → name).
   * @default {}
   */
  readonly listClaimMappings?: Record<string, string>;
  /**
   * Accepted signature algorithms, e.g. ["RS256", "ES256"].
   * @default ["RS256"]
   */
  readonly jwtSupportedAlgs?: string[];
  /**
   * The namespace the auth method lives in (and its login tokens).
   * @default - the `default` namespace
   */
  readonly namespace?: Namespace;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

/** A `jwt` auth method of the catalog: `/v1/acl/login` trades a JWT it verifies for a token. */
export class AclAuthMethod extends Construct {
  public readonly name: string;
  /** The namespace's name. */
  public readonly namespace: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: AclAuthMethodProps) {
    super(scope, id);
    check(AUTH_METHOD_NAME.test(props.name), `AclAuthMethod name "${props.name}" is invalid: use letters, digits, "-" and "_" (at most 128)`);
    const sources = [props.jwtValidationPubKeys?.length, props.jwksUrl, props.oidcDiscoveryUrl].filter(Boolean).length;
    check(sources === 1, `AclAuthMethod ${props.name}: set exactly one of jwtValidationPubKeys, jwksUrl and oidcDiscoveryUrl (${sources} set)`);
    for (const [i, pem] of (props.jwtValidationPubKeys ?? []).entries()) {
      check(pem.includes('-----BEGIN PUBLIC KEY-----'), `AclAuthMethod ${props.name}: jwtValidationPubKeys[${i}] is not a PEM public key ("-----BEGIN PUBLIC KEY-----...")`);
    }
    for (const [field, url] of [['jwksUrl', props.jwksUrl], ['oidcDiscoveryUrl', props.oidcDiscoveryUrl]] as const) {
      check(url === undefined || HTTP_URL.test(url), `AclAuthMethod ${props.name}: ${field} "${url}" is not an http(s) URL`);
    }
    check(
      props.maxTokenTtl === undefined || DURATION.test(props.maxTokenTtl),
      `AclAuthMethod ${props.name}: maxTokenTtl "${props.maxTokenTtl}" is not a duration such as "1h" or "30m"`,
    );
    const { ns, parents } = placement(props.namespace);
    const config: Record<string, unknown> = {
      JWTValidationPubKeys: props.jwtValidationPubKeys,
      JWKSURL: props.jwksUrl,
      JWKSCACert: props.jwksCaCert,
      OIDCDiscoveryURL: props.oidcDiscoveryUrl,
      BoundIssuer: props.boundIssuer,
      BoundAudiences: props.boundAudiences,
      ClaimMappings: props.claimMappings,
      ListClaimMappings: props.listClaimMappings,
      JWTSupportedAlgs: props.jwtSupportedAlgs,
    };
    this.name = props.name;
    this.namespace = ns;
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? Hangar.of(this),
      kind: 'catalog.auth-method',
      key: `${ns}/${props.name}`,
      desired: {
        displayName: props.displayName ?? '',
        description: props.description ?? '',
        maxTokenTtl: props.maxTokenTtl ?? '',
        tokenLocality: props.tokenLocality ?? '',
        config: Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined)),
      },
      dependsOn: parents,
    });
  }
}

/** What a binding rule grants a login. */
export enum BindType {
  /** A service identity named BindName. */
  SERVICE = 'service',
  /** A node identity named BindName, in the local datacenter. */
  NODE = 'node',
  /** The role named BindName (ignored when no such role exists at login). */
  ROLE = 'role',
  /** The policy named BindName (ignored when no such policy exists at login). */
  POLICY = 'policy',
}

export interface BindingRuleProps {
  /**
   * The rule's name in this stack: letters, digits, ".", "-" and "_" (at most 64). The server assigns
   * rules an ID; Hangar finds the rule again by this name, kept as `[hangar:<name>]` at the end of its
   * description. Unique per auth method.
   */
  readonly name: string;
  /** The auth method whose logins the rule applies to (the rule lives in its namespace). */
  readonly authMethod: AclAuthMethod;
  /** What the rule grants. */
  readonly bindType: BindType;
  /** The name to bind: plain, or a template over the method's variables such as `svc-${value.user}`. */
  readonly bindName: string;
  /**
   * Which identities the rule applies to, e.g. `value.team == "web"`.
   * @default "" - every identity
   */
  readonly selector?: string;
  /**
   * Free-form description.
   * @default ""
   */
  readonly description?: string;
  /**
   * The Hangar connection to use.
   * @default - the auth method's connection (the stack's `Hangar`)
   */
  readonly hangar?: Hangar;
}

/** A binding rule of the catalog: at login, maps a verified identity to a token's identities and roles. */
export class BindingRule extends Construct {
  public readonly name: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: BindingRuleProps) {
    super(scope, id);
    check(RULE_NAME.test(props.name), `BindingRule name "${props.name}" is invalid: use letters, digits, ".", "-" and "_" (at most 64)`);
    check(props.bindName.trim() !== '', `BindingRule ${props.name}: bindName is empty; give a name such as "web" or "svc-\${value.user}"`);
    check(
      Object.values(BindType).includes(props.bindType),
      `BindingRule ${props.name}: bindType "${props.bindType}" is invalid: use BindType.SERVICE, BindType.NODE, BindType.ROLE or BindType.POLICY`,
    );
    this.name = props.name;
    const method = props.authMethod;
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? Hangar.of(this),
      kind: 'catalog.binding-rule',
      key: `${method.namespace}/${method.name}/${props.name}`,
      desired: { description: props.description ?? '', selector: props.selector ?? '', bindType: props.bindType, bindName: props.bindName },
      dependsOn: [method._resource],
    });
  }
}

const DATACENTER = /^[A-Za-z0-9_-]+$/;
const NO_SPACE = /^\S+$/;
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[^\s:/[\]]+):(\d{1,5})$/;

function checkMeta(what: string, meta: Record<string, string> | undefined, allowConsulPrefix: boolean): void {
  const problem = meta && metadataProblem(meta, allowConsulPrefix);
  check(!problem, `${what}: ${problem}`);
}

function checkDatacenter(what: string, datacenter: string | undefined): void {
  check(datacenter === undefined || DATACENTER.test(datacenter), `${what}: datacenter "${datacenter}" is invalid: use letters, digits, "-" and "_" (or leave it unset for the server's)`);
}

function checkDuration(what: string, field: string, value: string | undefined): void {
  check(value === undefined || DURATION.test(value), `${what}: ${field} "${value}" is not a duration such as "10s" or "1m"`);
}

/** `host:port` with a port in range. */
function isHostPort(text: string): boolean {
  const m = HOST_PORT.exec(text);
  return m !== null && Number(m[2]) <= 65535;
}

export interface CatalogNodeProps {
  /** The node name, unique in the datacenter (no whitespace). */
  readonly name: string;
  /** The node's address: an IP address or a host name. */
  readonly address: string;
  /**
   * The datacenter to register in.
   * @default - the server's
   */
  readonly datacenter?: string;
  /**
   * Node metadata (at most 64 pairs; keys of letters, digits, "-" and "_"). The public service's
   * tools mark external nodes with `external-node` and `external-probe` = "true".
   * @default {}
   */
  readonly meta?: Record<string, string>;
  /**
   * Tagged addresses, e.g. `{ lan: "10.0.0.5", wan: "198.51.100.5" }`.
   * @default {}
   */
  readonly taggedAddresses?: Record<string, string>;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

/**
 * A node of the catalog registered from outside (an external node, where no agent runs), like the
 * public provider's `consul_node`. A changed address, meta or tagged address re-registers it in
 * place; removing it deregisters it with its services and checks. Nodes have no namespace.
 */
export class CatalogNode extends Construct {
  /** The node name (the node's identity in the catalog). */
  public readonly name: string;
  /** The node's address. */
  public readonly address: string;
  /** The datacenter given, if any. */
  public readonly datacenter?: string;
  /** @internal */
  public readonly _hangar: Hangar;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: CatalogNodeProps) {
    super(scope, id);
    check(NO_SPACE.test(props.name), `CatalogNode name "${props.name}" is invalid: give a name without whitespace`);
    const what = `CatalogNode ${props.name}`;
    check(isAddress(props.address), `${what}: address "${props.address}" is neither an IP address nor a host name`);
    for (const [tag, address] of Object.entries(props.taggedAddresses ?? {})) {
      check(isAddress(address), `${what}: taggedAddresses.${tag} "${address}" is neither an IP address nor a host name`);
    }
    checkMeta(`${what}: meta`, props.meta, true);
    checkDatacenter(what, props.datacenter);
    this.name = props.name;
    this.address = props.address;
    this.datacenter = props.datacenter;
    this._hangar = props.hangar ?? Hangar.of(this);
    this._resource = new CustomResource(this, 'Resource', {
      hangar: this._hangar,
      kind: 'catalog.node',
      key: props.name,
      desired: {
        address: props.address,
        ...(props.datacenter ? { datacenter: props.datacenter } : {}),
        meta: props.meta ?? {},
        taggedAddresses: props.taggedAddresses ?? {},
      },
    });
  }
}

/** The status a check starts with, until its first run. */
export enum CatalogCheckStatus {
  PASSING = 'passing',
  WARNING = 'warning',
  /** The public service's default. */
  CRITICAL = 'critical',
}

/** A health check of a `CatalogService` (a `check` block of the public provider's `consul_service`). */
export interface CatalogServiceCheck {
  /** The check ID, unique on the node. */
  readonly checkId: string;
  /** The check's name. */
  readonly name: string;
  /**
   * Human-readable notes.
   * @default ""
   */
  readonly notes?: string;
  /**
   * The status the check starts with; its runs decide it afterwards (a redeploy keeps the current one).
   * @default CatalogCheckStatus.CRITICAL
   */
  readonly status?: CatalogCheckStatus;
  /**
   * An HTTP check: the URL to request (a 2xx answer passes, 429 warns). At most one of `http`, `tcp`, `udp` and `grpc`.
   * @default - not an HTTP check
   */
  readonly http?: string;
  /**
   * A TCP check: `host:port` to connect to.
   * @default - not a TCP check
   */
  readonly tcp?: string;
  /**
   * A UDP check: `host:port` to send a datagram to.
   * @default - not a UDP check
   */
  readonly udp?: string;
  /**
   * A gRPC check (the standard health protocol): `host:port`, optionally `/service`.
   * @default - not a gRPC check
   */
  readonly grpc?: string;
  /**
   * The HTTP method of an HTTP check.
   * @default "GET"
   */
  readonly method?: string;
  /**
   * Headers of an HTTP check: name → values.
   * @default {}
   */
  readonly headers?: Record<string, string[]>;
  /**
   * Whether an HTTP or gRPC check skips verifying the server's certificate.
   * @default false
   */
  readonly tlsSkipVerify?: boolean;
  /**
   * How often the check runs, a duration such as "10s" (required with `http`, `tcp`, `udp` or `grpc`).
   * @default - none (a check without http, tcp, udp or grpc only holds its status)
   */
  readonly interval?: string;
  /**
   * How long one run may take, a duration such as "2s".
   * @default - the server's default (10s)
   */
  readonly timeout?: string;
  /**
   * After how long in the critical state the service is deregistered, a duration such as "90s".
   * @default - never
   */
  readonly deregisterCriticalServiceAfter?: string;
}

/** How a service's instances are weighted in DNS SRV answers by their health. */
export interface CatalogServiceWeights {
  /**
   * Weight of a passing instance (at least 1).
   * @default 1
   */
  readonly passing?: number;
  /**
   * Weight of an instance with a warning (at least 0).
   * @default 1
   */
  readonly warning?: number;
}

export interface CatalogServiceProps {
  /** The service name. */
  readonly name: string;
  /**
   * The service ID, unique on the node.
   * @default - the name
   */
  readonly serviceId?: string;
  /**
   * The node the service runs on, declared in this stack. Exactly one of `node` and `nodeName`.
   * @default - the node named by `nodeName`
   */
  readonly node?: CatalogNode;
  /**
   * The name of a node that exists already (not declared in this stack), e.g. a server's own node.
   * @default - the `node`'s name
   */
  readonly nodeName?: string;
  /**
   * The service's address: an IP address or a host name.
   * @default - none of its own: readers use the node's address
   */
  readonly address?: string;
  /**
   * The service's port.
   * @default 0
   */
  readonly port?: number;
  /**
   * Tags, opaque to the catalog (e.g. "v1", "primary").
   * @default []
   */
  readonly tags?: string[];
  /**
   * Service metadata (at most 64 pairs; keys of letters, digits, "-" and "_", not starting with "consul-").
   * @default {}
   */
  readonly meta?: Record<string, string>;
  /**
   * Whether agents' anti-entropy leaves the tags as others set them.
   * @default false
   */
  readonly enableTagOverride?: boolean;
  /**
   * DNS SRV weights by health.
   * @default - passing 1, warning 1
   */
  readonly weights?: CatalogServiceWeights;
  /**
   * Health checks of this instance, run by the server.
   * @default []
   */
  readonly checks?: CatalogServiceCheck[];
  /**
   * The namespace the service lives in.
   * @default - the `default` namespace
   */
  readonly namespace?: Namespace;
  /**
   * The datacenter to register in.
   * @default - the node's datacenter, else the server's
   */
  readonly datacenter?: string;
  /**
   * The Hangar connection to use.
   * @default - the node's connection, else the stack's `Hangar`
   */
  readonly hangar?: Hangar;
}

/**
 * An external service instance on a node, with its health checks, like the public provider's
 * `consul_service`: registered through the catalog on a node that must exist (a `CatalogNode`, or
 * one named by `nodeName`), which it leaves as it is. Any change re-registers it in place (the same
 * service ID); checks no longer declared are deregistered; removing it deregisters the service and
 * its checks, not the node. The node, the namespace and the service ID make its identity.
 */
export class CatalogService extends Construct {
  /** The service name. */
  public readonly name: string;
  /** The service ID. */
  public readonly serviceId: string;
  /** The node's name. */
  public readonly nodeName: string;
  /** The namespace's name. */
  public readonly namespace: string;
  /** The port (0 when none). */
  public readonly port: number;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: CatalogServiceProps) {
    super(scope, id);
    check(props.name.trim() !== '', 'CatalogService name is empty; give the service\'s name, such as "web"');
    const what = `CatalogService ${props.name}`;
    check(props.serviceId === undefined || props.serviceId.trim() !== '', `${what}: serviceId is empty; leave it unset to use the name`);
    check((props.node === undefined) !== (props.nodeName === undefined), `${what}: set exactly one of node (a CatalogNode) and nodeName (an existing node's name)`);
    const nodeName = props.node?.name ?? props.nodeName!;
    check(NO_SPACE.test(nodeName), `${what}: nodeName "${nodeName}" is invalid: give a node name without whitespace`);
    check(
      props.address === undefined || (isAddress(props.address) && !ANY_ADDRESSES.has(props.address)),
      `${what}: address "${props.address}" is not an address a service can be reached at: give an IP address or a host name, or leave it unset for the node's`,
    );
    const port = props.port ?? 0;
    check(Number.isInteger(port) && port >= 0 && port <= 65535, `${what}: port ${port} is invalid: use an integer from 0 to 65535`);
    checkMeta(`${what}: meta`, props.meta, false);
    const weights = props.weights && { passing: props.weights.passing ?? 1, warning: props.weights.warning ?? 1 };
    if (weights) {
      check(Number.isInteger(weights.passing) && weights.passing >= 1, `${what}: weights.passing ${weights.passing} is invalid: use an integer of at least 1`);
      check(Number.isInteger(weights.warning) && weights.warning >= 0, `${what}: weights.warning ${weights.warning} is invalid: use an integer of at least 0`);
    }
    const datacenter = props.datacenter ?? props.node?.datacenter;
    checkDatacenter(what, datacenter);
    const checks = props.checks ?? [];
    checks.forEach((c, i) => validateCheck(`${what}: checks[${i}]`, c));
    const ids = checks.map((c) => c.checkId);
    const repeated = ids.find((checkId, i) => ids.indexOf(checkId) !== i);
    check(repeated === undefined, `${what}: checkId "${repeated}" is used twice; give each check its own ID`);

    const { ns, parents } = placement(props.namespace);
    this.name = props.name;
    this.serviceId = props.serviceId ?? props.name;
    this.nodeName = nodeName;
    this.namespace = ns;
    this.port = port;
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? props.node?._hangar ?? Hangar.of(this),
      kind: 'catalog.service',
      key: serviceKey(ns, nodeName, this.serviceId),
      desired: {
        name: props.name,
        address: props.address ?? '',
        port,
        tags: props.tags ?? [],
        meta: props.meta ?? {},
        enableTagOverride: props.enableTagOverride ?? false,
        ...(weights ? { weights } : {}),
        ...(datacenter ? { datacenter } : {}),
        checks: checks.map(checkDesired),
      },
      dependsOn: [...parents, ...(props.node ? [props.node._resource] : [])],
    });
  }
}

/** What a check declares, at synth time, with the fix for what is wrong. */
function validateCheck(what: string, c: CatalogServiceCheck): void {
  check(c.checkId.trim() !== '', `${what}: checkId is empty; give the check an ID unique on the node, such as "web-http"`);
  check(c.name.trim() !== '', `${what}: name is empty; give the check a name, such as "HTTP on /health"`);
  const types = (['http', 'tcp', 'udp', 'grpc'] as const).filter((t) => c[t] !== undefined);
  check(types.length <= 1, `${what}: ${types.join(', ')} are set; a check is of one type: set at most one of http, tcp, udp and grpc`);
  check(c.status === undefined || Object.values(CatalogCheckStatus).includes(c.status), `${what}: status "${c.status}" is invalid: use CatalogCheckStatus.PASSING, WARNING or CRITICAL`);
  check(c.http === undefined || HTTP_URL.test(c.http), `${what}: http "${c.http}" is not an http(s) URL`);
  for (const field of ['tcp', 'udp'] as const) {
    const target = c[field];
    check(target === undefined || isHostPort(target), `${what}: ${field} "${target}" is not host:port (a port from 0 to 65535), such as "10.0.0.5:5432"`);
  }
  check(c.grpc === undefined || isHostPort(c.grpc.replace(/\/[^/]*$/, '')), `${what}: grpc "${c.grpc}" is not host:port or host:port/service`);
  check(c.method === undefined || c.http !== undefined, `${what}: method is only for HTTP checks; set http, or remove method`);
  check(c.headers === undefined || c.http !== undefined, `${what}: headers are only for HTTP checks; set http, or remove headers`);
  check(!c.tlsSkipVerify || c.http !== undefined || c.grpc !== undefined, `${what}: tlsSkipVerify is only for HTTP and gRPC checks`);
  check(c.method === undefined || /^[A-Z]+$/.test(c.method), `${what}: method "${c.method}" is not an HTTP method such as "GET" or "HEAD"`);
  for (const field of ['interval', 'timeout', 'deregisterCriticalServiceAfter'] as const) checkDuration(what, field, c[field]);
  if (types.length === 1) {
    check(c.interval !== undefined, `${what}: interval is missing; a ${types[0]} check runs at an interval, such as "10s"`);
  } else {
    check(c.interval === undefined && c.timeout === undefined, `${what}: interval and timeout are for checks that run; set http, tcp, udp or grpc, or remove them`);
  }
}

/** A check in the shape of the `catalog.service` kind's desired state (unset fields left out). */
function checkDesired(c: CatalogServiceCheck): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    checkId: c.checkId,
    name: c.name,
    notes: c.notes,
    status: c.status,
    http: c.http,
    tcp: c.tcp,
    udp: c.udp,
    grpc: c.grpc,
    // The public provider's default method, for HTTP checks only.
    method: c.method ?? (c.http !== undefined ? 'GET' : undefined),
    header: c.headers,
    tlsSkipVerify: c.tlsSkipVerify,
    interval: c.interval,
    timeout: c.timeout,
    deregisterCriticalServiceAfter: c.deregisterCriticalServiceAfter,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}
