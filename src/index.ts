// The jsii entry point: constructs, their props and enums. Nothing else is exported here.
export { Hangar, HangarProps } from './constructs/hangar';
export { Box, BoxProps, BoxVersion, BoxVersionProps, BoxProvider, BoxProviderProps, BoxChecksumType } from './constructs/registry';
// registry constructs (BoxVersion, BoxProvider, ...) are exported above with Box
export { BoxArchitecture } from './constructs/registry';
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
// secrets constructs: rabbitmq
export {
  RabbitmqSecretBackend,
  RabbitmqSecretBackendProps,
  RabbitmqRole,
  RabbitmqRoleProps,
  RabbitmqVhostPermission,
  RabbitmqTopicPermission,
} from './constructs/secrets/rabbitmq';
// secrets constructs: ssh
export {
  SshSecretBackendCa,
  SshSecretBackendCaProps,
  SshCaKeyType,
  SshMountOptions,
  SshRole,
  SshRoleProps,
  SshRoleKeyType,
  SshAlgorithmSigner,
  SshZeroAddress,
  SshZeroAddressProps,
} from './constructs/secrets/ssh';
// secrets constructs: transform
export {
  TransformObjectProps,
  TransformAlphabet,
  TransformAlphabetProps,
  TransformTemplate,
  TransformTemplateProps,
  TransformTransformation,
  TransformTransformationProps,
  TransformationType,
  TweakSource,
  TokenizationMappingMode,
  TransformRole,
  TransformRoleProps,
  TransformStore,
  TransformStoreProps,
} from './constructs/secrets/transform';
// secrets constructs: database
export {
  DatabaseSecretsMount,
  DatabaseSecretsMountProps,
  DatabasePluginName,
  DatabaseConnection,
  DatabaseConnectionProps,
  DatabaseRole,
  DatabaseRoleProps,
  DatabaseStaticRole,
  DatabaseStaticRoleProps,
  PasswordPolicy,
  PasswordPolicyProps,
} from './constructs/secrets/database';
// secrets constructs: ad
export {
  DirectorySecretBackend,
  DirectorySecretBackendProps,
  DirectorySchema,
  DirectoryTlsVersion,
  DirectoryRole,
  DirectoryRoleProps,
  DirectoryLibrarySet,
  DirectoryLibrarySetProps,
} from './constructs/secrets/ad';
// secrets constructs: pki
export {
  PkiSecretBackend,
  PkiSecretBackendProps,
  PkiMountOptions,
  PkiKeyType,
  PkiCaProps,
  PkiCa,
  PkiRootCa,
  PkiRootCaProps,
  PkiIntermediateCa,
  PkiIntermediateCaProps,
  PkiKeyUsage,
  PkiExtKeyUsage,
  PkiRole,
  PkiRoleProps,
  PkiConfigUrls,
  PkiConfigUrlsProps,
  PkiCrlConfig,
  PkiCrlConfigProps,
} from './constructs/secrets/pki';
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
  CatalogNode,
  CatalogNodeProps,
  CatalogService,
  CatalogServiceProps,
  CatalogServiceCheck,
  CatalogServiceWeights,
  CatalogCheckStatus,
} from './constructs/catalog';
// secrets constructs: kv, transit keys, token roles
export {
  KvMount,
  KvMountProps,
  KvVersion,
  KvSecret,
  KvSecretProps,
  TransitKey,
  TransitKeyProps,
  TransitKeyType,
  TokenRole,
  TokenRoleProps,
  TokenRoleTokenType,
} from './constructs/secrets/kv';
