import { TerraformStack } from 'cdktf';
import { AuthMount, Hangar, JwtAuthBackend, JwtAuthRole, JwtRoleType, Policy, SecretsMount } from '../../src';
import { openTransport } from '../../src/client/open';
import { SecretsClient } from '../../src/client/secrets';
import { newKey, sign } from '../engine/secrets/jwt-helpers';
import { startProviderProcess, TestProvider } from '../engine/secrets/oidc-provider';
import { RunningServer, startServerProcess } from '../helpers/cli';
import { terraformEnv, TerraformWorkspace } from '../helpers/terraform';

const tf = terraformEnv();
const describeWithTerraform = tf ? describe : describe.skip;
if (!tf) process.stderr.write('terraform/tofu and the null provider are not available: secrets construct e2e tests skipped\n');

interface Shape {
  readonly policy: string;
  readonly maxLeaseTtl: string;
  readonly withRole: boolean;
}

/**
 * The secrets constructs deployed by Terraform against a running server (HTTP mode): a mount, a
 * policy, a JWT login method configured with a public key, an OIDC method whose client secret
 * comes from the environment, and a role; update in place, removal, destroy; no secret in the state.
 */
describeWithTerraform('secrets constructs deployed by Terraform', () => {
  jest.setTimeout(300_000);
  let server: RunningServer;
  let provider: TestProvider;
  let client: SecretsClient;
  const rootToken = `root-${Math.random().toString(36).slice(2)}-secret`;
  const clientSecret = 'oidc-client-secret-never-in-state-5521';

  beforeAll(async () => {
    server = await startServerProcess(['--dev', '--dev-root-token', rootToken]);
    provider = await startProviderProcess([{ client_id: 'hangar', client_secret: clientSecret, redirect_uris: ['http://127.0.0.1:8250/oidc/callback'] }]);
    client = new SecretsClient(await openTransport({ endpoints: { secrets: server.urls.secrets } }), rootToken);
  });
  afterAll(async () => {
    await provider?.close();
    await server?.stop();
  });

  test('create, update in place, remove, destroy', async () => {
    const key = await newKey('deploy');
    const ws = new TerraformWorkspace(tf!, { DEPLOY_TOKEN: rootToken, CI_JWT_PUBKEYS: key.publicPem, SSO_SECRET: clientSecret });
    const declare = (shape: Shape) =>
      ws.synth((stack: TerraformStack) => {
        new Hangar(stack, 'Hangar', { secretsUrl: server.urls.secrets, tokenEnvVar: 'DEPLOY_TOKEN' });
        new SecretsMount(stack, 'Pki', { path: 'team/pki', type: 'pki', maxLeaseTtl: shape.maxLeaseTtl });
        new Policy(stack, 'Deploy', { name: 'deploy', policy: shape.policy });
        const ci = new AuthMount(stack, 'Ci', { path: 'ci' });
        const backend = new JwtAuthBackend(stack, 'CiConfig', { authMount: ci, jwtValidationPubkeysEnv: 'CI_JWT_PUBKEYS', boundIssuer: 'https://ci.example' });
        if (shape.withRole) {
          new JwtAuthRole(stack, 'Pipeline', { backend, name: 'pipeline', roleType: JwtRoleType.JWT, userClaim: 'sub', boundAudiences: ['hangar'], tokenPolicies: ['deploy'], tokenTtl: '15m' });
        }
        const sso = new AuthMount(stack, 'Sso', { path: 'sso' });
        new JwtAuthBackend(stack, 'SsoConfig', { authMount: sso, oidcDiscoveryUrl: provider.issuer, oidcClientId: 'hangar', oidcClientSecretEnv: 'SSO_SECRET' });
      });

    declare({ policy: 'path "team/pki/issue/*" { capabilities = ["update"] }', maxLeaseTtl: '720h', withRole: true });
    ws.deploy();
    expect(await client.getMount('team/pki')).toMatchObject({ type: 'pki', config: { max_lease_ttl: 2592000 } });
    expect(await client.getPolicy('deploy')).toContain('team/pki/issue/*');
    expect(await client.getAuth('ci')).toMatchObject({ type: 'jwt' });
    expect((await client.read('auth/sso/config'))?.data).toMatchObject({ oidc_discovery_url: provider.issuer, oidc_client_id: 'hangar' });
    const jwt = await sign(key, { iss: 'https://ci.example', aud: 'hangar', sub: 'build-7' }, Date.now());
    const login = await client.write('auth/ci/login', { role: 'pipeline', jwt });
    expect(login?.auth).toMatchObject({ policies: ['default', 'deploy'], lease_duration: 900 });
    expect(ws.deploy()).toMatch(/0 added, 0 changed, 0 destroyed/);

    // Update in place: the policy text and the mount's TTL change; the mount is the same one.
    const accessor = (await client.getMount('team/pki'))!.accessor;
    declare({ policy: 'path "team/pki/issue/web" { capabilities = ["update"] }', maxLeaseTtl: '24h', withRole: true });
    const plan = ws.run('plan', '-input=false');
    expect(plan).not.toMatch(/Pki_Identity_\w+ must be replaced/);
    ws.deploy();
    expect(await client.getPolicy('deploy')).toContain('team/pki/issue/web');
    expect(await client.getMount('team/pki')).toMatchObject({ accessor, config: { max_lease_ttl: 86400 } });

    // Removal deletes the role only.
    declare({ policy: 'path "team/pki/issue/web" { capabilities = ["update"] }', maxLeaseTtl: '24h', withRole: false });
    ws.deploy();
    expect(await client.read('auth/ci/role/pipeline')).toBeUndefined();
    expect(await client.getAuth('ci')).toBeDefined();

    const stored = ws.everythingStored();
    expect(stored).not.toContain(clientSecret);
    expect(stored).not.toContain(rootToken);
    expect(stored).not.toContain(key.publicPem.split('\n')[1]);

    ws.destroy();
    expect(await client.getMount('team/pki')).toBeUndefined();
    expect(await client.getPolicy('deploy')).toBeUndefined();
    expect(await client.getAuth('ci')).toBeUndefined();
    expect(await client.getAuth('sso')).toBeUndefined();
  });
});
