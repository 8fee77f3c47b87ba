import { Construct } from 'constructs';
import { durationSeconds, envName, httpUrl, mountPath } from './common';
import { AuthMount } from './mounts';
import { CustomResource } from '../custom-resource';
import { Hangar } from '../hangar';

/** How the provider returns the OIDC result to the callback. */
export enum OidcResponseMode {
  /** In the query string of a redirect. */
  QUERY = 'query',
  /** In a form the browser posts. */
  FORM_POST = 'form_post',
}

export interface JwtAuthBackendProps {
  /**
   * The auth method to configure; the backend is configured after it exists.
   * @default - the mount at `path`
   */
  readonly authMount?: AuthMount;
  /**
   * Path of the auth method under `auth/` when `authMount` is not given.
   * @default "jwt"
   */
  readonly path?: string;
  /**
   * OIDC discovery URL without `/.well-known/openid-configuration`. Exactly one of
   * `oidcDiscoveryUrl`, `jwksUrl` and `jwtValidationPubkeysEnv` is set.
   * @default - none
   */
  readonly oidcDiscoveryUrl?: string;
  /**
   * Environment variable holding the PEM CA chain for the discovery URL, at deploy time.
   * @default - the system's CAs
   */
  readonly oidcDiscoveryCaPemEnv?: string;
  /**
   * The client id registered at the provider (OIDC roles).
   * @default - none
   */
  readonly oidcClientId?: string;
  /**
   * Environment variable holding the OIDC client secret at deploy time; the secret never enters
   * the configuration or the state.
   * @default - no client secret
   */
  readonly oidcClientSecretEnv?: string;
  /**
   * Response mode of the OIDC flow.
   * @default OidcResponseMode.QUERY
   */
  readonly oidcResponseMode?: OidcResponseMode;
  /**
   * Response types: "code" and/or "id_token" ("id_token" needs FORM_POST).
   * @default ["code"]
   */
  readonly oidcResponseTypes?: string[];
  /**
   * JWKS URL of the token issuer.
   * @default - none
   */
  readonly jwksUrl?: string;
  /**
   * Environment variable holding the PEM CA chain for the JWKS URL, at deploy time.
   * @default - the system's CAs
   */
  readonly jwksCaPemEnv?: string;
  /**
   * Environment variable holding one or more PEM public keys (concatenated) that verify JWTs.
   * @default - none
   */
  readonly jwtValidationPubkeysEnv?: string;
  /**
   * Required `iss` claim.
   * @default - not checked (the discovered issuer with OIDC discovery)
   */
  readonly boundIssuer?: string;
  /**
   * Accepted signing algorithms.
   * @default - RS256 for OIDC roles, all for JWT roles
   */
  readonly jwtSupportedAlgs?: string[];
  /**
   * Role used when a login names none.
   * @default - none
   */
  readonly defaultRole?: string;
  /**
   * Provider-specific options.
   * @default - none
   */
  readonly providerConfig?: { [key: string]: string };
  /**
   * Carry the namespace in the OIDC state parameter.
   * @default true
   */
  readonly namespaceInState?: boolean;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

/** The configuration of a JWT/OIDC login method (`auth/<path>/config`). */
export class JwtAuthBackend extends Construct {
  /** The mount path under `auth/`. */
  public readonly path: string;
  /** @internal */
  public readonly _resource: CustomResource;
  /** @internal the connection its roles use too */
  public readonly _hangar: Hangar;

  constructor(scope: Construct, id: string, props: JwtAuthBackendProps) {
    super(scope, id);
    this._hangar = props.hangar ?? Hangar.of(this);
    this.path = props.authMount?.path ?? mountPath('JwtAuthBackend path', props.path ?? 'jwt');
    const sources = [props.oidcDiscoveryUrl, props.jwksUrl, props.jwtValidationPubkeysEnv].filter((v) => v !== undefined);
    if (sources.length !== 1) {
      throw new Error(`JwtAuthBackend ${this.path}: set exactly one of oidcDiscoveryUrl, jwksUrl and jwtValidationPubkeysEnv (got ${sources.length})`);
    }
    if (props.oidcClientSecretEnv && !props.oidcClientId) throw new Error(`JwtAuthBackend ${this.path}: oidcClientSecretEnv needs oidcClientId`);
    if (props.oidcResponseTypes?.includes('id_token') && props.oidcResponseMode !== OidcResponseMode.FORM_POST) {
      throw new Error(`JwtAuthBackend ${this.path}: oidcResponseTypes "id_token" needs oidcResponseMode FORM_POST`);
    }
    for (const t of props.oidcResponseTypes ?? []) {
      if (t !== 'code' && t !== 'id_token') throw new Error(`JwtAuthBackend ${this.path}: oidcResponseTypes "${t}" is invalid; use "code" and/or "id_token"`);
    }
    const desired = {
      oidcDiscoveryUrl: httpUrl('JwtAuthBackend oidcDiscoveryUrl', props.oidcDiscoveryUrl),
      oidcDiscoveryCaPemEnv: envName('JwtAuthBackend oidcDiscoveryCaPemEnv', props.oidcDiscoveryCaPemEnv),
      oidcClientId: props.oidcClientId,
      oidcClientSecretEnv: envName('JwtAuthBackend oidcClientSecretEnv', props.oidcClientSecretEnv),
      oidcResponseMode: props.oidcResponseMode,
      oidcResponseTypes: props.oidcResponseTypes,
      jwksUrl: httpUrl('JwtAuthBackend jwksUrl', props.jwksUrl),
      jwksCaPemEnv: envName('JwtAuthBackend jwksCaPemEnv', props.jwksCaPemEnv),
      jwtValidationPubkeysEnv: envName('JwtAuthBackend jwtValidationPubkeysEnv', props.jwtValidationPubkeysEnv),
      boundIssuer: props.boundIssuer,
      jwtSupportedAlgs: props.jwtSupportedAlgs,
      defaultRole: props.defaultRole,
      providerConfig: props.providerConfig,
      namespaceInState: props.namespaceInState,
    };
    this._resource = new CustomResource(this, 'Resource', {
      hangar: this._hangar,
      kind: 'secrets.jwt-config',
      key: this.path,
      desired: JSON.parse(JSON.stringify(desired)),
      dependsOn: props.authMount ? [props.authMount._resource] : [],
    });
  }
}

/** Kinds of login roles. */
export enum JwtRoleType {
  /** The browser flow: `oidc/auth_url` and `oidc/callback`. */
  OIDC = 'oidc',
  /** A signed JWT at `login`. */
  JWT = 'jwt',
}

/** How bound claim values are compared. */
export enum BoundClaimsType {
  /** Exact match. */
  STRING = 'string',
  /** `*` matches any characters. */
  GLOB = 'glob',
}

/** Type of the tokens a role issues. */
export enum SecretsTokenType {
  /** Stored, renewable, revocable tokens. */
  SERVICE = 'service',
  /** Light tokens that are not stored. */
  BATCH = 'batch',
  /** The mount's default (service). */
  DEFAULT = 'default',
}

export interface JwtAuthRoleProps {
  /** The login method configuration the role belongs to. */
  readonly backend: JwtAuthBackend;
  /** The role name. Changing it makes a new role. */
  readonly name: string;
  /**
   * JWT login or the OIDC browser flow.
   * @default JwtRoleType.OIDC
   */
  readonly roleType?: JwtRoleType;
  /** The claim whose string value names the user. */
  readonly userClaim: string;
  /**
   * Read `userClaim` as a JSON pointer (`/profile/login`).
   * @default false
   */
  readonly userClaimJsonPointer?: boolean;
  /**
   * Audiences, one of which `aud` must contain.
   * @default - none (a JWT role needs one bound: audiences, subject, claims or CIDRs)
   */
  readonly boundAudiences?: string[];
  /**
   * Required `sub` claim.
   * @default - not checked
   */
  readonly boundSubject?: string;
  /**
   * Claims (names or JSON pointers) and their accepted values; any value matches.
   * @default - none
   */
  readonly boundClaims?: { [claim: string]: string[] };
  /**
   * How bound claim values compare.
   * @default BoundClaimsType.STRING
   */
  readonly boundClaimsType?: BoundClaimsType;
  /**
   * Claim holding the user's groups (a list of strings).
   * @default - none
   */
  readonly groupsClaim?: string;
  /**
   * Claims copied into the token's metadata: claim (or JSON pointer) to metadata key.
   * @default - none
   */
  readonly claimMappings?: { [claim: string]: string };
  /**
   * Scopes requested besides "openid".
   * @default - none
   */
  readonly oidcScopes?: string[];
  /**
   * Redirect URIs allowed for the OIDC flow (required for OIDC roles).
   * @default - none
   */
  readonly allowedRedirectUris?: string[];
  /**
   * Log ID token claims at debug level.
   * @default false
   */
  readonly verboseOidcLogging?: boolean;
  /**
   * Maximum age of the user's authentication at the provider: seconds or a duration.
   * @default - not limited
   */
  readonly maxAge?: string;
  /**
   * Clock skew leeway in seconds (JWT roles): 0 is the default (60), -1 disables.
   * @default 0
   */
  readonly clockSkewLeeway?: number;
  /**
   * Expiry leeway in seconds (JWT roles): 0 is the default (150), -1 disables.
   * @default 0
   */
  readonly expirationLeeway?: number;
  /**
   * Not-before leeway in seconds (JWT roles): 0 is the default (150), -1 disables.
   * @default 0
   */
  readonly notBeforeLeeway?: number;
  /**
   * TTL of issued tokens: seconds or a duration.
   * @default - the mount's default
   */
  readonly tokenTtl?: string;
  /**
   * Maximum TTL of issued tokens.
   * @default - the mount's maximum
   */
  readonly tokenMaxTtl?: string;
  /**
   * Hard limit of issued tokens, renewals included.
   * @default - none
   */
  readonly tokenExplicitMaxTtl?: string;
  /**
   * Policies of issued tokens.
   * @default - none besides "default"
   */
  readonly tokenPolicies?: string[];
  /**
   * Networks the tokens (and logins) are bound to.
   * @default - any
   */
  readonly tokenBoundCidrs?: string[];
  /**
   * Leave out the "default" policy.
   * @default false
   */
  readonly tokenNoDefaultPolicy?: boolean;
  /**
   * Uses of each token; 0 is unlimited.
   * @default 0
   */
  readonly tokenNumUses?: number;
  /**
   * Period of periodic tokens: seconds or a duration.
   * @default - not periodic
   */
  readonly tokenPeriod?: string;
  /**
   * Token type.
   * @default SecretsTokenType.DEFAULT
   */
  readonly tokenType?: SecretsTokenType;
}

/** A role of a JWT/OIDC login method (`auth/<path>/role/<name>`). */
export class JwtAuthRole extends Construct {
  public readonly name: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: JwtAuthRoleProps) {
    super(scope, id);
    if (!/^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/.test(props.name)) throw new Error(`JwtAuthRole name "${props.name}" is invalid: use letters, digits, ".", "_", "-", "@"`);
    const what = `JwtAuthRole ${props.name}`;
    const roleType = props.roleType ?? JwtRoleType.OIDC;
    if (!props.userClaim) throw new Error(`${what}: userClaim is required (the claim that names the user, e.g. "sub")`);
    const claims = Object.keys(props.boundClaims ?? {}).length > 0;
    const bounded = !!props.boundAudiences?.length || !!props.boundSubject || claims || !!props.tokenBoundCidrs?.length;
    if (roleType === JwtRoleType.JWT && !bounded) {
      throw new Error(`${what}: a JWT role needs at least one of boundAudiences, boundSubject, boundClaims or tokenBoundCidrs`);
    }
    if (roleType === JwtRoleType.OIDC && !props.allowedRedirectUris?.length) throw new Error(`${what}: an OIDC role needs allowedRedirectUris`);
    const leeways = { clockSkewLeeway: props.clockSkewLeeway, expirationLeeway: props.expirationLeeway, notBeforeLeeway: props.notBeforeLeeway };
    for (const [name, v] of Object.entries(leeways)) {
      if (v !== undefined && (!Number.isInteger(v) || v < -1)) throw new Error(`${what}: ${name} ${v} is invalid: use whole seconds, 0 for the default or -1 to disable`);
    }
    if (props.tokenNumUses !== undefined && (!Number.isInteger(props.tokenNumUses) || props.tokenNumUses < 0)) {
      throw new Error(`${what}: tokenNumUses ${props.tokenNumUses} is invalid: use 0 (unlimited) or more`);
    }
    const seconds = (name: string, v: string | undefined) => durationSeconds(`${what} ${name}`, v);
    this.name = props.name.toLowerCase();
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.backend._hangar,
      kind: 'secrets.jwt-role',
      key: `${props.backend.path}/${this.name}`,
      // The API's own field names and the values it reads back, so drift compares like with like.
      desired: {
        role_type: roleType,
        user_claim: props.userClaim,
        user_claim_json_pointer: props.userClaimJsonPointer ?? false,
        bound_audiences: props.boundAudiences ?? [],
        bound_subject: props.boundSubject ?? '',
        bound_claims: props.boundClaims ?? {},
        bound_claims_type: props.boundClaimsType ?? BoundClaimsType.STRING,
        groups_claim: props.groupsClaim ?? '',
        claim_mappings: props.claimMappings ?? {},
        oidc_scopes: props.oidcScopes ?? [],
        allowed_redirect_uris: props.allowedRedirectUris ?? [],
        verbose_oidc_logging: props.verboseOidcLogging ?? false,
        max_age: seconds('maxAge', props.maxAge),
        clock_skew_leeway: props.clockSkewLeeway ?? 0,
        expiration_leeway: props.expirationLeeway ?? 0,
        not_before_leeway: props.notBeforeLeeway ?? 0,
        token_ttl: seconds('tokenTtl', props.tokenTtl),
        token_max_ttl: seconds('tokenMaxTtl', props.tokenMaxTtl),
        token_explicit_max_ttl: seconds('tokenExplicitMaxTtl', props.tokenExplicitMaxTtl),
        token_policies: props.tokenPolicies ?? [],
        token_bound_cidrs: props.tokenBoundCidrs ?? [],
        token_no_default_policy: props.tokenNoDefaultPolicy ?? false,
        token_num_uses: props.tokenNumUses ?? 0,
        token_period: seconds('tokenPeriod', props.tokenPeriod),
        token_type: props.tokenType ?? SecretsTokenType.DEFAULT,
      },
      dependsOn: [props.backend._resource],
    });
  }
}
