import { App, TerraformStack } from 'cdktf';
import { Construct } from 'constructs';
// In your own app: import { Box, Hangar, ... } from 'hangar-cdktf';
import {
  AclAuthMethod,
  AclPolicy,
  AclRole,
  AuthMount,
  BindingRule,
  BindType,
  Box,
  BoxProvider,
  BoxVersion,
  CatalogNode,
  CatalogService,
  Hangar,
  JwtAuthBackend,
  JwtAuthRole,
  JwtRoleType,
  Namespace,
  Policy,
} from '../../src';

export interface ExampleOptions {
  /** A running server's registry URL; unset: the embedded engine. */
  readonly registryUrl?: string;
  /** A running server's catalog URL (with registryUrl); unset: the embedded engine. */
  readonly catalogUrl?: string;
  /** A running server's secrets URL (with the other URLs); unset: the embedded engine. */
  readonly secretsUrl?: string;
  /** The embedded engine's data directory; unset: HANGAR_DATA at deploy time, else the default. */
  readonly dataDir?: string;
  /** Name of the environment variable with the token at deploy time (HTTP mode). */
  readonly tokenEnvVar?: string;
  /** Apply the stack's objects in one process per deploy (see HangarProps.batch). */
  readonly batch?: boolean;
  /** Whether the stack declares the registry's boxes (default true). */
  readonly withRegistry?: boolean;
  /** The organization that owns the boxes; it must exist (`hangar registry create-org`). */
  readonly owner?: string;
  readonly webDescription?: string;
  /** Whether the stack declares the db box (removing it from the stack deletes the box). */
  readonly withDb?: boolean;
  /** Whether the stack declares web's version 1.0.0 and its virtualbox provider (default true). */
  readonly withWebVersion?: boolean;
  /** A local box file that web 1.0.0's virtualbox provider uploads; unset: the provider points at a URL. */
  readonly boxFile?: string;
  /** Whether the stack declares the catalog's ACL objects (default true). */
  readonly withCatalog?: boolean;
  /**
   * Whether the stack declares the secrets service's CI login (default true); deploying it needs the
   * CI's PEM public key(s) in the environment variable CI_JWT_PUBKEYS_ENV.
   */
  readonly withSecrets?: boolean;
  /** TTL of the tokens the CI's secrets login issues (default "15m"). */
  readonly ciTokenTtl?: string;
  /** Whether the stack declares the secrets login role "deploy" (default true). */
  readonly withCiRole?: boolean;
}

/** The public key that verifies the CI's JWTs (the catalog's jwt auth method). */
export const CI_JWT_PUBLIC_KEY = `-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEU0nXwxYseregyYhpGiAR+XiAp3JS
Bo0xcYRbC+SawFuj1plNTCWf+5I3tcpSXj6P962UqWy1/qoU9nF30BR0GQ==
-----END PUBLIC KEY-----
`;

/**
 * The environment variable that holds the CI's PEM public key(s) when the secrets login is deployed
 * (e.g. CI_JWT_PUBLIC_KEY): the secrets service's JwtAuthBackend reads keys at deploy time only.
 */
export const CI_JWT_PUBKEYS_ENV = 'HANGAR_EXAMPLE_CI_JWT_PUBKEYS';

/**
 * What Hangar supports so far: boxes in the registry; namespaces, ACL objects and an external service in the catalog; a
 * policy and a JWT login for the CI in the secrets service.
 */
export class ExampleStack extends TerraformStack {
  constructor(scope: Construct, id: string, options: ExampleOptions = {}) {
    super(scope, id);
    const hangar = new Hangar(this, 'Hangar', {
      registryUrl: options.registryUrl,
      catalogUrl: options.catalogUrl,
      secretsUrl: options.secretsUrl,
      dataDir: options.dataDir,
      tokenEnvVar: options.tokenEnvVar,
      batch: options.batch,
    });
    if (options.withRegistry ?? true) {
      const owner = options.owner ?? 'acme';
      const web = new Box(this, 'Web', {
        hangar,
        owner,
        name: 'web',
        shortDescription: options.webDescription ?? 'Nginx on Debian 12',
        description: '# web\n\nA box with nginx, built nightly.',
        private: false,
      });
      if (options.withDb ?? true) new Box(this, 'Db', { hangar, owner, name: 'db', shortDescription: 'PostgreSQL 15' });
      if (options.withWebVersion ?? true) {
        // Released once its provider is ready: the version's release step runs after its providers.
        const version = new BoxVersion(this, 'WebV1', { box: web, version: '1.0.0', description: 'First release', released: true });
        new BoxProvider(this, 'WebV1Virtualbox', {
          version,
          name: 'virtualbox',
          ...(options.boxFile ? { file: options.boxFile } : { url: 'https://boxes.example.com/acme/web-1.0.0-virtualbox.box' }),
        });
      }
    }
    if (options.withCatalog ?? true) {
      // The catalog: a namespace for the team, whose CI logs in with its JWTs as service "deploy-<repo>".
      const namespace = new Namespace(this, 'Team', { hangar, name: 'team-web', description: 'The web team' });
      const policy = new AclPolicy(this, 'KvPolicy', { hangar, namespace, name: 'web-kv', rules: 'key_prefix "web/" { policy = "write" }' });
      new AclRole(this, 'Deployer', { hangar, namespace, name: 'deployer', policies: [policy] });
      const ci = new AclAuthMethod(this, 'Ci', {
        hangar,
        namespace,
        name: 'ci',
        jwtValidationPubKeys: [CI_JWT_PUBLIC_KEY],
        jwtSupportedAlgs: ['ES256'],
        boundIssuer: 'https://ci.example.com',
        claimMappings: { repository: 'repo' },
        maxTokenTtl: '1h',
      });
      new BindingRule(this, 'CiDeploys', {
        hangar,
        authMethod: ci,
        name: 'deploys',
        selector: 'value.repo != ""',
        bindType: BindType.SERVICE,
        bindName: 'deploy-${value.repo}',
      });
      // An external service in the team's namespace, on a node no agent runs on, with a TCP check.
      const lb = new CatalogNode(this, 'LbNode', {
        hangar,
        name: 'web-lb',
        address: '192.0.2.80',
        meta: { 'external-node': 'true', 'external-probe': 'true' },
      });
      new CatalogService(this, 'Lb', {
        hangar,
        node: lb,
        namespace,
        name: 'web',
        port: 443,
        tags: ['lb'],
        checks: [{ checkId: 'web-lb-tcp', name: 'TLS port', tcp: '192.0.2.80:443', interval: '10s', timeout: '2s' }],
      });
    }
    if (options.withSecrets ?? true) {
      // The secrets service: the CI logs in at auth/jwt-ci with its JWTs (audience "hangar") and gets
      // a token with policy ci-deployer. --dev already mounts auth/jwt, hence a mount of its own.
      const policy = new Policy(this, 'CiDeployerPolicy', { hangar, name: 'ci-deployer', policy: 'path "pki/issue/web" { capabilities = ["update"] }' });
      const mount = new AuthMount(this, 'JwtCi', { hangar, path: 'jwt-ci', description: 'CI logins' });
      const backend = new JwtAuthBackend(this, 'JwtCiConfig', {
        hangar,
        authMount: mount,
        jwtValidationPubkeysEnv: CI_JWT_PUBKEYS_ENV,
        jwtSupportedAlgs: ['ES256'],
        boundIssuer: 'https://ci.example.com',
      });
      if (options.withCiRole ?? true) {
        new JwtAuthRole(this, 'JwtCiDeploy', {
          backend,
          name: 'deploy',
          roleType: JwtRoleType.JWT,
          userClaim: 'sub',
          boundAudiences: ['hangar'],
          tokenPolicies: [policy.name],
          tokenTtl: options.ciTokenTtl ?? '15m',
        });
      }
    }
  }
}

// `cdktf synth` / `cdktf deploy` (cdktf.json runs this file). With HANGAR_REGISTRY_URL (and
// HANGAR_CATALOG_URL, HANGAR_SECRETS_URL) set the stack manages that server, with the token from
// HANGAR_TOKEN at deploy time. Deploying also needs HANGAR_EXAMPLE_CI_JWT_PUBKEYS (CI_JWT_PUBKEYS_ENV):
// the PEM public key(s) that verify the CI's JWTs, e.g. CI_JWT_PUBLIC_KEY's text.
if (require.main === module) {
  const app = new App();
  new ExampleStack(app, 'hangar-example', {
    registryUrl: process.env.HANGAR_REGISTRY_URL || undefined,
    catalogUrl: process.env.HANGAR_CATALOG_URL || undefined,
    secretsUrl: process.env.HANGAR_SECRETS_URL || undefined,
    owner: process.env.HANGAR_EXAMPLE_OWNER,
    boxFile: process.env.HANGAR_EXAMPLE_BOX_FILE || undefined,
  });
  app.synth();
}
