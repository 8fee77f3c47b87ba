import { TerraformStack } from 'cdktf';
import { Hangar, RabbitmqRole, RabbitmqSecretBackend, SecretsMount } from '../../src';
import { openTransport } from '../../src/client/open';
import { SecretsClient } from '../../src/client/secrets';
import { RunningServer, startServerProcess } from '../helpers/cli';
import { haveRabbit, startRabbit, TestRabbit } from '../helpers/rabbitmq';
import { terraformEnv, TerraformWorkspace } from '../helpers/terraform';

const tf = haveRabbit() ? terraformEnv() : undefined;
const describeWithTerraform = tf ? describe : describe.skip;
if (!tf) process.stderr.write('terraform/tofu, the null provider or rabbitmq-server are not available: rabbitmq construct e2e tests skipped\n');

/**
 * The message broker constructs deployed by Terraform against a running server (HTTP mode) and a
 * real RabbitMQ: the mount, the connection (password from the environment) and a role; the role
 * updated in place and removed; no password in the configuration or the state; destroy.
 */
describeWithTerraform('rabbitmq constructs deployed by Terraform', () => {
  jest.setTimeout(300_000);
  let server: RunningServer;
  let rabbit: TestRabbit;
  let client: SecretsClient;
  const rootToken = `root-${Math.random().toString(36).slice(2)}-secret`;

  beforeAll(async () => {
    [server, rabbit] = await Promise.all([startServerProcess(['--dev', '--dev-root-token', rootToken]), startRabbit()]);
    client = new SecretsClient(await openTransport({ endpoints: { secrets: server.urls.secrets } }), rootToken);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await rabbit?.stop();
  }, 60_000);

  test('create, update in place, remove, destroy', async () => {
    const ws = new TerraformWorkspace(tf!, { DEPLOY_TOKEN: rootToken, BROKER_ADMIN_PASSWORD: rabbit.password });
    const declare = (tags: string[] | undefined) =>
      ws.synth((stack: TerraformStack) => {
        new Hangar(stack, 'Hangar', { secretsUrl: server.urls.secrets, tokenEnvVar: 'DEPLOY_TOKEN' });
        const mount = new SecretsMount(stack, 'Broker', { path: 'team/mq', type: 'rabbitmq' });
        const backend = new RabbitmqSecretBackend(stack, 'Connection', {
          mount,
          connectionUri: rabbit.managementUrl,
          username: rabbit.username,
          passwordEnv: 'BROKER_ADMIN_PASSWORD',
          leaseTtl: '30m',
        });
        if (tags) {
          new RabbitmqRole(stack, 'App', {
            backend,
            name: 'app',
            tags,
            vhosts: [{ vhost: '/', configure: '^app-', write: '^app-', read: '^app-' }],
            vhostTopics: [{ vhost: '/', exchange: 'amq.topic', write: '^app\\.' }],
          });
        }
      });

    declare(['management']);
    ws.deploy();
    expect((await client.read('team/mq/config/connection'))?.data).toMatchObject({ connection_uri: rabbit.managementUrl, username: rabbit.username });
    const creds = await client.read('team/mq/creds/app');
    expect(creds?.lease_duration).toBe(1800);
    expect((await rabbit.api('GET', `users/${creds?.data?.username}`)).body.tags).toEqual(['management']);
    expect(ws.deploy()).toMatch(/0 added, 0 changed, 0 destroyed/);

    // Update in place: new tags for the users issued from now on; the mount stays the same one.
    const accessor = (await client.getMount('team/mq'))!.accessor;
    declare(['monitoring']);
    expect(ws.run('plan', '-input=false')).not.toMatch(/Broker_Identity_\w+ must be replaced/);
    ws.deploy();
    expect((await client.read('team/mq/roles/app'))?.data?.tags).toBe('monitoring');
    expect((await client.getMount('team/mq'))?.accessor).toBe(accessor);

    // Removal deletes the role.
    declare(undefined);
    ws.deploy();
    expect(await client.read('team/mq/roles/app')).toBeUndefined();

    const stored = ws.everythingStored();
    expect(stored).not.toContain(rabbit.password);
    expect(stored).not.toContain(rootToken);

    // Destroying the mount revokes its leases: the user issued above is deleted from the broker.
    ws.destroy();
    expect(await client.getMount('team/mq')).toBeUndefined();
    expect((await rabbit.api('GET', `users/${creds?.data?.username}`)).status).toBe(404);
  });
});
