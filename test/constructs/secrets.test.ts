import { TerraformStack } from 'cdktf';
import {
  AuthMount,
  BoundClaimsType,
  JwtAuthBackend,
  JwtAuthRole,
  JwtRoleType,
  OidcResponseMode,
  Policy,
  SecretsMount,
  SecretsTokenType,
} from '../../src';
import { decodePayload } from '../../src/reconcile/payload';
import { Synth, synth } from '../helpers/synth';


/** The config resources' payloads by kind and key. */
function payloads(s: Synth) {
  return Object.values(s.resource.null_resource)
    .filter((r) => r.triggers?.identity !== undefined)
    .map((r) => ({ ...decodePayload(r.triggers.payload), dependsOn: r.depends_on as string[] | undefined }));
}

const fullStack = (stack: TerraformStack) => {
  new SecretsMount(stack, 'Pki', { path: '/team/pki/', type: 'pki', description: 'team CA', defaultLeaseTtl: '1h', maxLeaseTtl: '720h' });
  new Policy(stack, 'Deployers', { name: 'Deployers', policy: 'path "team/pki/issue/web" { capabilities = ["update"] }' });
  const sso = new AuthMount(stack, 'Sso', { path: 'sso', description: 'corporate SSO' });
  const backend = new JwtAuthBackend(stack, 'SsoConfig', {
    authMount: sso,
    oidcDiscoveryUrl: 'https://login.example.com',
    oidcClientId: 'hangar',
    oidcClientSecretEnv: 'SSO_CLIENT_SECRET',
    oidcDiscoveryCaPemEnv: 'SSO_CA_PEM',
    oidcResponseMode: OidcResponseMode.FORM_POST,
    defaultRole: 'staff',
  });
  new JwtAuthRole(stack, 'Staff', {
    backend,
    name: 'staff',
    userClaim: 'email',
    allowedRedirectUris: ['https://hangar.example.com/ui/callback'],
    boundClaims: { groups: ['engineering'] },
    boundClaimsType: BoundClaimsType.GLOB,
    claimMappings: { '/org/name': 'org' },
    oidcScopes: ['email'],
    maxAge: '1h',
    tokenTtl: '30m',
    tokenPolicies: ['deployers'],
    tokenType: SecretsTokenType.SERVICE,
  });
};

describe('secrets constructs', () => {
  test('each construct renders a custom resource of its kind with the API-shaped desired state', () => {
    const all = payloads(synth(fullStack));
    const by = (kind: string) => all.find((p) => p.kind === kind)!;
    expect(by('secrets.mount')).toMatchObject({ key: 'team/pki', desired: { type: 'pki', description: 'team CA', defaultLeaseTtl: 3600, maxLeaseTtl: 2592000 } });
    expect(by('secrets.policy')).toMatchObject({ key: 'deployers', desired: { policy: expect.stringContaining('team/pki/issue/web') } });
    expect(by('secrets.auth')).toMatchObject({ key: 'sso', desired: { type: 'jwt', description: 'corporate SSO' } });
    expect(by('secrets.jwt-config')).toMatchObject({
      key: 'sso',
      desired: { oidcDiscoveryUrl: 'https://login.example.com', oidcClientId: 'hangar', oidcClientSecretEnv: 'SSO_CLIENT_SECRET', oidcResponseMode: 'form_post' },
    });
    expect(by('secrets.jwt-role')).toMatchObject({
      key: 'sso/staff',
      desired: {
        role_type: 'oidc',
        user_claim: 'email',
        bound_claims: { groups: ['engineering'] },
        bound_claims_type: 'glob',
        claim_mappings: { '/org/name': 'org' },
        max_age: 3600,
        token_ttl: 1800,
        token_policies: ['deployers'],
        token_type: 'service',
      },
    });
  });

  test('a role waits for its backend, the backend for its auth mount', () => {
    const s = synth(fullStack);
    const identities = Object.entries(s.resource.null_resource).filter(([id]) => id.includes('Identity'));
    const identityOf = (prefix: string) => identities.find(([id]) => id.startsWith(prefix))![1];
    expect(JSON.stringify(identityOf('SsoConfig').depends_on)).toMatch(/Sso_.*Config/);
    expect(JSON.stringify(identityOf('Staff').depends_on)).toMatch(/SsoConfig_.*Config/);
  });

  test('no secret value in the configuration: only the names of environment variables', () => {
    process.env.SSO_CLIENT_SECRET = 'very-secret-client-secret-value';
    try {
      const raw = JSON.stringify(synth(fullStack));
      expect(raw).not.toContain('very-secret-client-secret-value');
      const decoded = payloads(synth(fullStack)).map((p) => JSON.stringify(p)).join('\n');
      expect(decoded).toContain('SSO_CLIENT_SECRET');
      expect(decoded).not.toContain('very-secret');
    } finally {
      delete process.env.SSO_CLIENT_SECRET;
    }
  });

  test('validation at construction names the bad value and the fix', () => {
    const cases: Array<[(stack: TerraformStack) => void, RegExp]> = [
      [(st) => new SecretsMount(st, 'M', { path: 'bad path', type: 'pki' }), /SecretsMount path "bad path" is invalid/],
      [(st) => new SecretsMount(st, 'M', { path: 'sys', type: 'pki' }), /reserved/],
      [(st) => new SecretsMount(st, 'M', { path: 'x', type: 'pki', defaultLeaseTtl: 'forever' }), /defaultLeaseTtl "forever" is not a duration/],
      [(st) => new SecretsMount(st, 'M', { path: 'x', type: 'pki', defaultLeaseTtl: '2h', maxLeaseTtl: '1h' }), /longer than maxLeaseTtl/],
      [(st) => new AuthMount(st, 'A', { path: 'token' }), /built-in token store/],
      [(st) => new Policy(st, 'P', { name: 'root', policy: '' }), /reserved/],
      [(st) => new Policy(st, 'P', { name: 'bad name', policy: '' }), /Policy name "bad name" is invalid/],
      [(st) => new JwtAuthBackend(st, 'B', {}), /exactly one of oidcDiscoveryUrl, jwksUrl and jwtValidationPubkeysEnv \(got 0\)/],
      [(st) => new JwtAuthBackend(st, 'B', { jwksUrl: 'https://x/jwks', jwtValidationPubkeysEnv: 'KEYS' }), /got 2/],
      [(st) => new JwtAuthBackend(st, 'B', { jwtValidationPubkeysEnv: 'not a name' }), /not an environment variable name/],
      [(st) => new JwtAuthBackend(st, 'B', { jwksUrl: 'ftp://x' }), /jwksUrl "ftp:\/\/x" is not an http\(s\) URL/],
      [(st) => new JwtAuthBackend(st, 'B', { jwksUrl: 'https://x/j', oidcResponseTypes: ['id_token'] }), /needs oidcResponseMode FORM_POST/],
      [
        (st) => new JwtAuthRole(st, 'R', { backend: new JwtAuthBackend(st, 'B', { jwksUrl: 'https://x/j' }), name: 'r', roleType: JwtRoleType.JWT, userClaim: 'sub' }),
        /a JWT role needs at least one of boundAudiences/,
      ],
      [(st) => new JwtAuthRole(st, 'R', { backend: new JwtAuthBackend(st, 'B', { jwksUrl: 'https://x/j' }), name: 'r', userClaim: 'sub' }), /needs allowedRedirectUris/],
      [
        (st) =>
          new JwtAuthRole(st, 'R', { backend: new JwtAuthBackend(st, 'B', { jwksUrl: 'https://x/j' }), name: 'r', roleType: JwtRoleType.JWT, userClaim: 'sub', boundSubject: 's', expirationLeeway: -5 }),
        /expirationLeeway -5 is invalid/,
      ],
    ];
    for (const [build, message] of cases) expect(() => synth(build)).toThrow(message);
  });
});
