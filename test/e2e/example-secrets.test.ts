import { CI_JWT_PUBKEYS_ENV, ExampleOptions, ExampleStack } from '../../examples/typescript/main';
import { openTransport } from '../../src/client/open';
import { SecretsClient } from '../../src/client/secrets';
import { newKey, sign, TestKey } from '../engine/secrets/jwt-helpers';
import { RunningServer, startServerProcess } from '../helpers/cli';
import { tempDir } from '../helpers/storage';
import { terraformEnv, TerraformWorkspace } from '../helpers/terraform';

const tf = terraformEnv();
const describeWithTerraform = tf ? describe : describe.skip;
if (!tf) process.stderr.write('terraform/tofu and the null provider are not available: example secrets e2e tests skipped\n');

type Connection = Pick<ExampleOptions, 'secretsUrl' | 'dataDir' | 'tokenEnvVar'>;
type WithClient = <T>(fn: (c: SecretsClient) => Promise<T>) => Promise<T>;

/** examples/typescript with only its secrets objects: the registry and catalog parts are left out. */
function declare(ws: TerraformWorkspace, connection: Connection, shape: { ciTokenTtl: string; withCiRole: boolean }) {
  ws.synthStack((app) => new ExampleStack(app, 'stack', { ...connection, ...shape, withRegistry: false, withCatalog: false }));
}

/** A CI login at auth/jwt-ci with role "deploy": the token's policies and TTL, or the error. */
async function login(c: SecretsClient, key: TestKey, claims: Record<string, unknown> = {}) {
  const jwt = await sign(key, { iss: 'https://ci.example.com', aud: 'hangar', sub: 'build-42', ...claims }, Date.now());
  const res = await c.write('auth/jwt-ci/login', { role: 'deploy', jwt });
  return { policies: res?.auth?.policies, ttl: res?.auth?.lease_duration };
}

/**
 * Deploy, converge, update the role in place, remove it, destroy; the CI logs in with a JWT signed
 * by the key whose public half the deploy read from HANGAR_EXAMPLE_CI_JWT_PUBKEYS.
 */
async function lifeCycle(ws: TerraformWorkspace, connection: Connection, key: TestKey, withClient: WithClient, beforeDestroy = () => {}) {
  const pemLine = key.publicPem.split('\n')[1];
  declare(ws, connection, { ciTokenTtl: '15m', withCiRole: true });
  ws.deploy();
  await withClient(async (c) => {
    expect(await c.getPolicy('ci-deployer')).toBe('path "pki/issue/web" { capabilities = ["update"] }');
    expect(await c.getAuth('jwt-ci')).toMatchObject({ type: 'jwt', description: 'CI logins' });
    expect((await c.read('auth/jwt-ci/config'))?.data).toMatchObject({
      bound_issuer: 'https://ci.example.com',
      jwt_supported_algs: ['ES256'],
      jwt_validation_pubkeys: [expect.stringContaining(pemLine)],
    });
    expect((await c.read('auth/jwt-ci/role/deploy'))?.data).toMatchObject({
      role_type: 'jwt',
      user_claim: 'sub',
      bound_audiences: ['hangar'],
      token_policies: ['ci-deployer'],
      token_ttl: 900,
    });
    expect(await login(c, key)).toEqual({ policies: ['ci-deployer', 'default'], ttl: 900 });
    // Another audience, or a key the deploy did not configure: no token.
    await expect(login(c, key, { aud: 'elsewhere' })).rejects.toMatchObject({ status: 400 });
    await expect(login(c, await newKey('other', 'ES256'))).rejects.toMatchObject({ status: 400 });
  });
  // A retried apply converges without changes.
  expect(ws.deploy()).toMatch(/0 added, 0 changed, 0 destroyed/);

  // Update in place: the role's token TTL changes; only its Config step reruns, its identity is kept.
  declare(ws, connection, { ciTokenTtl: '30m', withCiRole: true });
  expect(ws.run('plan', '-input=false')).not.toMatch(/Identity_\w+ must be replaced/);
  ws.deploy();
  await withClient(async (c) => {
    expect((await c.read('auth/jwt-ci/role/deploy'))?.data).toMatchObject({ token_ttl: 1800 });
    expect(await login(c, key)).toEqual({ policies: ['ci-deployer', 'default'], ttl: 1800 });
  });

  // Removal from the stack deletes the role; the mount, its configuration and the policy stay.
  declare(ws, connection, { ciTokenTtl: '30m', withCiRole: false });
  ws.deploy();
  await withClient(async (c) => {
    expect(await c.read('auth/jwt-ci/role/deploy')).toBeUndefined();
    expect(await c.read('auth/jwt-ci/config')).toBeDefined();
    expect(await c.getPolicy('ci-deployer')).toBeDefined();
  });

  // The public key came from the environment at deploy time: neither the configuration nor the state holds it.
  // (Boolean checks: a failure would otherwise print the whole state.)
  expect(ws.everythingStored().includes(pemLine)).toBe(false);
  beforeDestroy();

  ws.destroy();
  await withClient(async (c) => {
    expect(await c.getPolicy('ci-deployer')).toBeUndefined();
    expect(await c.getAuth('jwt-ci')).toBeUndefined();
    expect(await c.read('auth/jwt-ci/config')).toBeUndefined();
  });
}

describeWithTerraform('examples/typescript: its secrets objects deployed by Terraform', () => {
  jest.setTimeout(300_000);
  let key: TestKey;
  beforeAll(async () => {
    key = await newKey('ci', 'ES256');
  });

  test('embedded mode: the custom resources run the engine on a data directory', async () => {
    const data = tempDir();
    const ws = new TerraformWorkspace(tf!, { [CI_JWT_PUBKEYS_ENV]: key.publicPem });
    await lifeCycle(ws, { dataDir: data }, key, async (fn) => {
      const transport = await openTransport({ dataDir: data });
      try {
        return await fn(new SecretsClient(transport));
      } finally {
        await transport.close();
      }
    });
  });

  test('HTTP mode: a running server, the token from the environment, never in the state', async () => {
    const rootToken = `root-${Math.random().toString(36).slice(2)}-secret`;
    let server: RunningServer | undefined;
    try {
      server = await startServerProcess(['--dev', '--dev-root-token', rootToken]);
      const client = new SecretsClient(await openTransport({ endpoints: { secrets: server.urls.secrets } }), rootToken);
      const ws = new TerraformWorkspace(tf!, { DEPLOY_TOKEN: rootToken, [CI_JWT_PUBKEYS_ENV]: key.publicPem });
      await lifeCycle(ws, { secretsUrl: server.urls.secrets, tokenEnvVar: 'DEPLOY_TOKEN' }, key, (fn) => fn(client), () => {
        expect(ws.everythingStored().includes(rootToken)).toBe(false);
      });
    } finally {
      await server?.stop();
    }
  });
});
