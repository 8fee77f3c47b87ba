import { TerraformStack as Stack } from 'cdktf';
import { Construct } from 'constructs';
import { CustomResource } from './custom-resource';
import { Hangar } from './hangar';

/*
 * Constructs of the Hangar service catalog's ACL system. Each object is identified by its
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
