// The jsii entry point: constructs, their props and enums. Nothing else is exported here.
export { Hangar, HangarProps } from './constructs/hangar';
export { Box, BoxProps, BoxVersion, BoxVersionProps, BoxProvider, BoxProviderProps, BoxChecksumType } from './constructs/registry';
// registry constructs (BoxVersion, BoxProvider, ...) are exported above with Box
// secrets constructs
export { SecretsMount, SecretsMountProps, AuthMount, AuthMountProps, AuthMethodType, MountOptions } from './constructs/secrets/mounts';
export { Policy, PolicyProps } from './constructs/secrets/policy';
export {
  JwtAuthBackend,
  JwtAuthBackendProps,
  JwtAuthRole,
  JwtAuthRoleProps,
  JwtRoleType,
  BoundClaimsType,
  SecretsTokenType,
  OidcResponseMode,
} from './constructs/secrets/jwt';
// catalog constructs
export {
  Namespace,
  NamespaceProps,
  AclPolicy,
  AclPolicyProps,
  AclRole,
  AclRoleProps,
  AclAuthMethod,
  AclAuthMethodProps,
  TokenLocality,
  BindingRule,
  BindingRuleProps,
  BindType,
} from './constructs/catalog';
