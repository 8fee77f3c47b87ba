import { TerraformStack } from 'cdktf';
import { DatabaseConnection, DatabasePluginName, DatabaseRole, DatabaseSecretsMount, DatabaseStaticRole, Hangar, PasswordPolicy } from '../../src';
import { openTransport } from '../../src/client/open';
import { SecretsClient } from '../../src/client/secrets';
import { RunningServer, startServerProcess } from '../helpers/cli';
import { havePostgres, startTargetPostgres, TargetPostgres } from '../helpers/postgres-target';
import { terraformEnv, TerraformWorkspace } from '../helpers/terraform';

const tf = havePostgres() ? terraformEnv() : undefined;
const describeWithTerraform = tf ? describe : describe.skip;
if (!tf) process.stderr.write('terraform/tofu, the null provider or PostgreSQL are not available: database construct e2e tests skipped\n');

const CREATE = ['CREATE ROLE "{{name}}" WITH LOGIN PASSWORD \'{{password}}\' VALID UNTIL \'{{expiration}}\';', 'GRANT SELECT ON items TO "{{name}}";'];

/**
 * The database constructs deployed by Terraform against a running server (HTTP mode) and a private
 * PostgreSQL: mount, password policy, connection (root password from the environment), a dynamic
 * and a static role; updated in place; a role removed; no password in the configuration or the
 * state; destroy.
 */
describeWithTerraform('database constructs deployed by Terraform', () => {
  jest.setTimeout(300_000);
  let server: RunningServer;
  let pg: TargetPostgres;
  let client: SecretsClient;
  const rootToken = `root-${Math.random().toString(36).slice(2)}-secret`;

  beforeAll(async () => {
    [server, pg] = await Promise.all([startServerProcess(['--dev', '--dev-root-token', rootToken]), startTargetPostgres()]);
    await pg.admin('CREATE TABLE items (id int); INSERT INTO items VALUES (1); CREATE ROLE app_user LOGIN');
    client = new SecretsClient(await openTransport({ endpoints: { secrets: server.urls.secrets } }), rootToken);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await pg?.stop();
  }, 60_000);

  test('create, update in place, remove, destroy', async () => {
    const ws = new TerraformWorkspace(tf!, { DEPLOY_TOKEN: rootToken, DB_ROOT_PASSWORD: pg.adminPassword });
    const declare = (ttl: string, withStatic: boolean) =>
      ws.synth((stack: TerraformStack) => {
        new Hangar(stack, 'Hangar', { secretsUrl: server.urls.secrets, tokenEnvVar: 'DEPLOY_TOKEN' });
        const mount = new DatabaseSecretsMount(stack, 'Db', { path: 'team/db' });
        const policy = new PasswordPolicy(stack, 'Policy', { name: 'team-db', policy: 'length = 28\nrule "charset" { charset = "abcdefghjkmnpqrstuvwxyz23456789" }' });
        const connection = new DatabaseConnection(stack, 'Pg', {
          mount,
          name: 'pg',
          plugin: DatabasePluginName.POSTGRESQL,
          connectionUrl: pg.urlTemplate,
          username: pg.adminUser,
          passwordEnv: 'DB_ROOT_PASSWORD',
          allowedRoles: ['readonly', 'app'],
          passwordPolicy: policy.name,
        });
        new DatabaseRole(stack, 'ReadOnly', { connection, name: 'readonly', creationStatements: CREATE, defaultTtl: ttl });
        if (withStatic) new DatabaseStaticRole(stack, 'App', { connection, name: 'app', username: 'app_user', rotationPeriod: '24h' });
      });

    declare('1h', true);
    ws.deploy();
    const creds = await client.read('team/db/creds/readonly');
    expect(creds?.lease_duration).toBe(3600);
    expect(creds?.data?.password).toMatch(/^[a-z2-9]{28}$/);
    expect((await pg.psql(creds?.data?.username, creds?.data?.password, 'SELECT count(*) FROM items')).output.trim()).toBe('1');
    const staticCreds = await client.read('team/db/static-creds/app');
    expect((await pg.psql('app_user', staticCreds?.data?.password, 'SELECT 1')).status).toBe(0);
    expect(ws.deploy()).toMatch(/0 added, 0 changed, 0 destroyed/);

    // Update in place: the role's TTL changes, the mount and connection stay the same objects.
    const accessor = (await client.getMount('team/db'))!.accessor;
    declare('30m', true);
    ws.deploy();
    expect((await client.read('team/db/roles/readonly'))?.data?.default_ttl).toBe(1800);
    expect((await client.getMount('team/db'))?.accessor).toBe(accessor);

    // Removal deletes the static role (the database user stays, as the public service does).
    declare('30m', false);
    ws.deploy();
    expect(await client.read('team/db/static-roles/app')).toBeUndefined();

    const stored = ws.everythingStored();
    expect(stored).not.toContain(pg.adminPassword);
    expect(stored).not.toContain(rootToken);

    ws.destroy();
    expect(await client.getMount('team/db')).toBeUndefined();
    expect(await client.read('sys/policies/password/team-db')).toBeUndefined();
  });
});
