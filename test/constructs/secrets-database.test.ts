import { TerraformStack } from 'cdktf';
import { DatabaseConnection, DatabasePluginName, DatabaseRole, DatabaseSecretsMount, DatabaseStaticRole, PasswordPolicy, SecretsMount } from '../../src';
import { decodePayload } from '../../src/reconcile/payload';
import { byPath, Synth, synth } from '../helpers/synth';

function payloads(s: Synth) {
  return Object.values(s.resource.null_resource)
    .filter((r) => r.triggers?.identity !== undefined)
    .map((r) => decodePayload(r.triggers.payload));
}

const URL_TEMPLATE = 'postgresql://{{username}}:{{password}}@db.internal:5432/app';

const stack = (st: TerraformStack) => {
  const mount = new DatabaseSecretsMount(st, 'Db', { path: 'team/db', maxLeaseTtl: '24h' });
  new PasswordPolicy(st, 'Policy', { name: 'db-passwords', policy: 'length = 24\nrule "charset" { charset = "abcdefghijklmnopqrstuvwxyz0123456789" }' });
  const connection = new DatabaseConnection(st, 'Pg', {
    mount,
    name: 'pg',
    plugin: DatabasePluginName.POSTGRESQL,
    connectionUrl: URL_TEMPLATE,
    username: 'vault_admin',
    passwordEnv: 'DB_ROOT_PASSWORD',
    allowedRoles: ['readonly', 'app'],
    passwordPolicy: 'db-passwords',
    maxOpenConnections: 2,
  });
  new DatabaseRole(st, 'ReadOnly', {
    connection,
    name: 'readonly',
    creationStatements: ['CREATE ROLE "{{name}}" WITH LOGIN PASSWORD \'{{password}}\' VALID UNTIL \'{{expiration}}\';'],
    defaultTtl: '1h',
    maxTtl: '8h',
  });
  new DatabaseStaticRole(st, 'App', { connection, name: 'app', username: 'app_user', rotationPeriod: '24h' });
};

describe('database constructs', () => {
  test('mount, policy, connection and roles render their kinds with the desired state', () => {
    const all = payloads(synth(stack));
    expect(all.find((p) => p.kind === 'secrets.mount')).toMatchObject({ key: 'team/db', desired: { type: 'database', maxLeaseTtl: 86400 } });
    expect(all.find((p) => p.kind === 'secrets.password-policy')).toMatchObject({ key: 'db-passwords' });
    expect(all.find((p) => p.kind === 'secrets.database-connection')).toMatchObject({
      key: 'team/db/pg',
      desired: {
        pluginName: 'postgresql-database-plugin',
        connectionUrl: URL_TEMPLATE,
        username: 'vault_admin',
        passwordEnv: 'DB_ROOT_PASSWORD',
        allowedRoles: ['readonly', 'app'],
        verifyConnection: true,
        passwordPolicy: 'db-passwords',
        maxOpenConnections: 2,
        maxIdleConnections: 2,
        maxConnectionLifetime: 0,
      },
    });
    expect(all.find((p) => p.kind === 'secrets.database-role')).toMatchObject({ key: 'team/db/readonly', desired: { dbName: 'pg', defaultTtl: 3600, maxTtl: 28800 } });
    expect(all.find((p) => p.kind === 'secrets.database-static-role')).toMatchObject({
      key: 'team/db/app',
      desired: { dbName: 'pg', username: 'app_user', rotationPeriod: 86400, rotationStatements: [] },
    });
  });

  test('roles wait for the connection, the connection for its mount', () => {
    const s = synth(stack);
    expect(JSON.stringify(byPath(s, 'Pg/Resource/Identity').depends_on)).toMatch(/Db_.*Config/);
    expect(JSON.stringify(byPath(s, 'Pg/Resource/Identity').depends_on)).toMatch(/Policy_.*Config/);
    expect(JSON.stringify(byPath(s, 'ReadOnly/Resource/Identity').depends_on)).toMatch(/Pg_.*Config/);
    expect(JSON.stringify(byPath(s, 'App/Resource/Identity').depends_on)).toMatch(/Pg_.*Config/);
  });

  test('no password in the configuration: only the name of its environment variable', () => {
    process.env.DB_ROOT_PASSWORD = 'very-secret-database-password';
    try {
      const raw = JSON.stringify(synth(stack)) + payloads(synth(stack)).map((p) => JSON.stringify(p)).join('\n');
      expect(raw).toContain('DB_ROOT_PASSWORD');
      expect(raw).not.toContain('very-secret-database-password');
    } finally {
      delete process.env.DB_ROOT_PASSWORD;
    }
  });

  test('validation at construction names the bad value and the fix', () => {
    const mount = (st: TerraformStack) => new DatabaseSecretsMount(st, 'M');
    const base = { name: 'pg', plugin: DatabasePluginName.POSTGRESQL, connectionUrl: URL_TEMPLATE, username: 'admin', passwordEnv: 'PW' };
    const conn = (st: TerraformStack) => new DatabaseConnection(st, 'C', { mount: mount(st), ...base });
    const cases: Array<[(st: TerraformStack) => void, RegExp]> = [
      [(st) => new DatabaseConnection(st, 'C', { mount: new SecretsMount(st, 'P', { path: 'pki', type: 'pki' }), ...base }), /"pki" mount/],
      [(st) => new DatabaseConnection(st, 'C', { mount: mount(st), ...base, name: 'bad name' }), /DatabaseConnection name "bad name" is invalid/],
      [(st) => new DatabaseConnection(st, 'C', { mount: mount(st), ...base, connectionUrl: 'mysql://x' }), /not a postgresql:\/\/ URL/],
      [(st) => new DatabaseConnection(st, 'C', { mount: mount(st), ...base, connectionUrl: 'postgresql://admin:hunter2@db/app' }), /holds a literal password/],
      [(st) => new DatabaseConnection(st, 'C', { mount: mount(st), ...base, passwordEnv: 'the password' }), /not an environment variable name/],
      [(st) => new DatabaseConnection(st, 'C', { mount: mount(st), ...base, maxOpenConnections: 2, maxIdleConnections: 3 }), /maxIdleConnections 3 must be between 0 and maxOpenConnections \(2\)/],
      [(st) => new DatabaseConnection(st, 'C', { mount: mount(st), ...base, maxConnectionLifetime: 'soon' }), /"soon" is not a duration/],
      [(st) => new DatabaseRole(st, 'R', { connection: conn(st), name: 'r', creationStatements: [] }), /creationStatements is empty/],
      [(st) => new DatabaseRole(st, 'R', { connection: conn(st), name: 'r', creationStatements: ['x'], defaultTtl: '2h', maxTtl: '1h' }), /longer than maxTtl/],
      [(st) => new DatabaseStaticRole(st, 'S', { connection: conn(st), name: 's', username: 'u', rotationPeriod: '4' }), /shorter than 5 seconds/],
      [(st) => new DatabaseStaticRole(st, 'S', { connection: conn(st), name: 's', username: 'o\'brien', rotationPeriod: '1h' }), /holds quotes/],
      [(st) => new PasswordPolicy(st, 'P', { name: 'p', policy: 'length = 10' }), /at least one rule "charset"/],
    ];
    for (const [build, message] of cases) expect(() => synth(build)).toThrow(message);
  });
});
