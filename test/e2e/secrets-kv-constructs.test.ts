import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TerraformStack } from 'cdktf';
import { Hangar, KvMount, KvSecret, KvVersion, SecretsMount, TokenRole, TransitKey, TransitKeyType } from '../../src';
import { openTransport } from '../../src/client/open';
import { SecretsClient } from '../../src/client/secrets';
import { RunningServer, startServerProcess } from '../helpers/cli';
import { terraformEnv, TerraformWorkspace } from '../helpers/terraform';

const tf = terraformEnv();
const describeWithTerraform = tf ? describe : describe.skip;
if (!tf) process.stderr.write('terraform/tofu or the null provider are not available: kv construct e2e tests skipped\n');

/**
 * KvMount, KvSecret (from an environment variable and from a file), TransitKey and TokenRole
 * deployed by Terraform against a running server (HTTP mode): created, updated in place (a v1
 * store upgraded to v2 with its secret, a new value, new role policies, a key setting), one
 * removed, no value or token in the configuration, plan or state, then destroyed.
 */
describeWithTerraform('kv, transit key and token role constructs deployed by Terraform', () => {
  jest.setTimeout(300_000);
  let server: RunningServer;
  let client: SecretsClient;
  const rootToken = `root-${Math.random().toString(36).slice(2)}-secret`;
  const file = join(mkdtempSync(join(tmpdir(), 'kv-e2e-')), 'db.json');

  beforeAll(async () => {
    server = await startServerProcess(['--dev', '--dev-root-token', rootToken]);
    client = new SecretsClient(await openTransport({ endpoints: { secrets: server.urls.secrets } }), rootToken);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    delete process.env.KV_E2E_API;
  }, 60_000);

  test('create, update in place, remove, destroy', async () => {
    const env: Record<string, string> = { DEPLOY_TOKEN: rootToken };
    const ws = new TerraformWorkspace(tf!, env);
    const setApi = (value: string) => (process.env.KV_E2E_API = env.KV_E2E_API = value);
    const declare = (o: { version: KvVersion; policies: string[]; rotate: string; db: boolean }) =>
      ws.synth((stack: TerraformStack) => {
        new Hangar(stack, 'Hangar', { secretsUrl: server.urls.secrets, tokenEnvVar: 'DEPLOY_TOKEN' });
        const kv = new KvMount(stack, 'Kv', { path: 'team/kv', version: o.version });
        new KvSecret(stack, 'Api', { mount: kv, path: 'app/api', valueEnv: 'KV_E2E_API' });
        if (o.db) new KvSecret(stack, 'Db', { mount: kv, path: 'app/db', valueFile: file });
        const transit = new SecretsMount(stack, 'Transit', { path: 'team/transit', type: 'transit' });
        new TransitKey(stack, 'Key', { mount: transit, name: 'orders', type: TransitKeyType.AES256_GCM96, autoRotatePeriod: o.rotate });
        new TokenRole(stack, 'Role', { name: 'ci', allowedPolicies: o.policies, orphan: true, pathSuffix: 'pipelines' });
      });

    setApi('{"token": "api-token-value-1"}');
    writeFileSync(file, '{"password": "db-password-from-file"}');
    declare({ version: KvVersion.V1, policies: ['deploy'], rotate: '0', db: true });
    ws.deploy();
    expect((await client.read('team/kv/app/api'))?.data).toEqual({ token: 'api-token-value-1' });
    expect((await client.read('team/kv/app/db'))?.data).toEqual({ password: 'db-password-from-file' });
    expect((await client.read('team/transit/keys/orders'))?.data).toMatchObject({ type: 'aes256-gcm96', auto_rotate_period: 0 });
    expect((await client.write('auth/token/create/ci', {}))?.auth).toMatchObject({ policies: ['default', 'deploy'], orphan: true });
    expect(ws.deploy()).toMatch(/0 added, 0 changed, 0 destroyed/);

    // Update in place: the store becomes version 2 (its secrets kept), a new value, new policies, key rotation on.
    const accessor = (await client.getMount('team/kv'))!.accessor;
    setApi('{"token": "api-token-value-2"}');
    declare({ version: KvVersion.V2, policies: ['deploy', 'audit'], rotate: '24h', db: true });
    expect(ws.run('plan', '-input=false')).not.toMatch(/Kv_Identity_\w+ must be replaced/);
    ws.deploy();
    expect((await client.getMount('team/kv'))?.accessor).toBe(accessor);
    const api = await client.read('team/kv/data/app/api');
    expect([api?.data?.data, api?.data?.metadata?.version]).toEqual([{ token: 'api-token-value-2' }, 2]);
    expect((await client.read('team/kv/data/app/db'))?.data?.data).toEqual({ password: 'db-password-from-file' });
    expect((await client.read('auth/token/roles/ci'))?.data?.allowed_policies).toEqual(['audit', 'deploy']);
    expect((await client.read('team/transit/keys/orders'))?.data?.auto_rotate_period).toBe(86400);

    // Removal deletes the secret (every version).
    declare({ version: KvVersion.V2, policies: ['deploy', 'audit'], rotate: '24h', db: false });
    ws.deploy();
    expect(await client.read('team/kv/metadata/app/db')).toBeUndefined();

    const stored = ws.everythingStored();
    for (const secret of ['api-token-value-2', 'db-password-from-file', rootToken]) expect(stored).not.toContain(secret);

    ws.destroy();
    expect(await client.getMount('team/kv')).toBeUndefined();
    expect(await client.read('auth/token/roles/ci')).toBeUndefined();
    expect(await client.getMount('team/transit')).toBeUndefined();
  });
});
