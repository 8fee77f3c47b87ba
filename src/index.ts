// The jsii entry point: constructs, their props and enums. Nothing else is exported here.
export { Hangar, HangarProps } from './constructs/hangar';
export { Box, BoxProps } from './constructs/registry';
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
