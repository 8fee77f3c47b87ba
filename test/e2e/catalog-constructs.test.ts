import { generateKeyPairSync } from 'node:crypto';
import { App, TerraformStack } from 'cdktf';
import { CI_JWT_PUBLIC_KEY, ExampleStack } from '../../examples/typescript/main';
import {
  AclAuthMethod, AclPolicy, AclRole, BindingRule, BindType, CatalogCheckStatus, CatalogNode, CatalogService, Hangar, Namespace,
} from '../../src';
import { CatalogClient } from '../../src/client/catalog';
import { openTransport } from '../../src/client/open';
import { hangar, RunningServer, startServerProcess } from '../helpers/cli';
import { tempDir } from '../helpers/storage';
import { terraformEnv, TerraformWorkspace } from '../helpers/terraform';

const tf = terraformEnv();
const describeWithTerraform = tf ? describe : describe.skip;
if (!tf) process.stderr.write('terraform/tofu and the null provider are not available: catalog construct e2e tests skipped\n');

const PEM = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();

interface Options {
  readonly catalogUrl?: string;
  readonly dataDir?: string;
  readonly tokenEnvVar?: string;
  readonly policyDescription: string;
  readonly ruleSelector: string;
  readonly withNodeRule: boolean;
  readonly policyDefaults?: string[];
  readonly roleDefaults?: string[];
}

/** A namespace with a policy, a role, a jwt auth method and binding rules. */
function declare(ws: TerraformWorkspace, o: Options) {
  ws.synthStack((app: App) => {
    const stack = new TerraformStack(app, 'stack');
    const conn = new Hangar(stack, 'Hangar', { catalogUrl: o.catalogUrl, dataDir: o.dataDir, tokenEnvVar: o.tokenEnvVar });
    const namespace = new Namespace(stack, 'Team', { hangar: conn, name: 'team-a', description: 'Team A', policyDefaults: o.policyDefaults, roleDefaults: o.roleDefaults });
    const policy = new AclPolicy(stack, 'Policy', { hangar: conn, namespace, name: 'kv-app', description: o.policyDescription, rules: 'key_prefix "app/" { policy = "write" }' });
    new AclRole(stack, 'Role', { hangar: conn, namespace, name: 'app', policies: [policy], serviceIdentities: ['web'] });
    const method = new AclAuthMethod(stack, 'Jwt', { hangar: conn, namespace, name: 'ci', jwtValidationPubKeys: [PEM], claimMappings: { sub: 'user' }, maxTokenTtl: '1h' });
    new BindingRule(stack, 'Users', { hangar: conn, authMethod: method, name: 'users', bindType: BindType.SERVICE, bindName: 'svc-${value.user}', selector: o.ruleSelector });
    if (o.withNodeRule) new BindingRule(stack, 'Nodes', { hangar: conn, authMethod: method, name: 'nodes', bindType: BindType.NODE, bindName: '${value.user}' });
    return stack;
  });
}

async function lifeCycle(ws: TerraformWorkspace, connection: Pick<Options, 'catalogUrl' | 'dataDir' | 'tokenEnvVar'>, withClient: <T>(fn: (c: CatalogClient) => Promise<T>) => Promise<T>,
  beforeDestroy = () => {},
) {
  const base = { ...connection, policyDescription: 'one', ruleSelector: 'value.user != ""', withNodeRule: true, policyDefaults: ['kv-app'], roleDefaults: ['app'] };
  declare(ws, base);
  ws.deploy();
  const first = await withClient(async (c) => ({
    ns: await c.getNamespace('team-a'),
    policy: await c.getPolicyByName('team-a', 'kv-app'),
    role: await c.getRoleByName('team-a', 'app'),
    method: await c.getAuthMethod('team-a', 'ci'),
    rules: await c.listBindingRules('team-a', 'ci'),
  }));
  expect(first.ns).toMatchObject({
    Name: 'team-a',
    Description: 'Team A',
    ACLs: { PolicyDefaults: [{ ID: first.policy!.ID, Name: 'kv-app' }], RoleDefaults: [{ ID: first.role!.ID, Name: 'app' }] },
  });
  expect(first.policy).toMatchObject({ Name: 'kv-app', Description: 'one' });
  expect(first.role).toMatchObject({ Name: 'app', Policies: [{ ID: first.policy!.ID, Name: 'kv-app' }], ServiceIdentities: [{ ServiceName: 'web' }] });
  expect(first.method).toMatchObject({ Name: 'ci', Type: 'jwt', MaxTokenTTL: '1h0m0s' });
  expect(first.rules.map((r) => r.Description).sort()).toEqual(['[hangar:nodes]', '[hangar:users]']);

  // A retried apply converges without changes.
  expect(ws.deploy()).toMatch(/0 added, 0 changed, 0 destroyed/);
  if (connection.dataDir) {
    // hangar diff reports the defaults: in sync, then drifted when changed by hand, until --fix.
    expect(hangar(['diff', ws.dir]).stdout).toContain('catalog.namespace-defaults team-a: in sync');
    // An update replaces the whole namespace (as the public service's does): send it back with the role defaults cleared.
    await withClient(async (c) => {
      const live = (await c.getNamespace('team-a'))!;
      await c.putNamespace('team-a', { Description: live.Description, Meta: live.Meta, ACLs: { PolicyDefaults: live.ACLs?.PolicyDefaults, RoleDefaults: [] } }, true);
    });
    expect(hangar(['diff', ws.dir])).toMatchObject({ code: 2, stdout: expect.stringContaining('~ catalog.namespace-defaults team-a: roleDefaults') });
    expect(hangar(['diff', ws.dir, '--fix']).code).toBe(0);
  }

  // Update in place: the same policy and rule IDs, new values; identities are kept.
  declare(ws, { ...base, policyDescription: 'two', ruleSelector: 'value.user == "alice"', roleDefaults: [] });
  const plan = ws.run('plan', '-input=false');
  expect(plan).not.toMatch(/Identity_\w+ must be replaced/);
  ws.deploy();
  await withClient(async (c) => {
    expect(await c.getPolicyByName('team-a', 'kv-app')).toMatchObject({ ID: first.policy!.ID, Description: 'two' });
    expect((await c.getNamespace('team-a'))?.ACLs).toEqual({ PolicyDefaults: [{ ID: first.policy!.ID, Name: 'kv-app' }], RoleDefaults: [] });
    const users = (await c.listBindingRules('team-a', 'ci')).find((r) => r.Description === '[hangar:users]');
    expect(users).toMatchObject({ ID: first.rules.find((r) => r.Description === '[hangar:users]')!.ID, Selector: 'value.user == "alice"' });
  });

  // Removal from the stack deletes the rule and clears the namespace's defaults; the others stay.
  declare(ws, { ...base, policyDescription: 'two', ruleSelector: 'value.user == "alice"', withNodeRule: false, policyDefaults: undefined, roleDefaults: undefined });
  ws.deploy();
  await withClient(async (c) => {
    expect((await c.listBindingRules('team-a', 'ci')).map((r) => r.Description)).toEqual(['[hangar:users]']);
    expect(await c.getNamespace('team-a')).toMatchObject({ Description: 'Team A', ACLs: { PolicyDefaults: [], RoleDefaults: [] } });
  });

  beforeDestroy();
  // Destroy deletes everything (the namespace is marked; the server's job removes it).
  ws.destroy();
  await withClient(async (c) => {
    expect(await c.getAuthMethod('team-a', 'ci')).toBeUndefined();
    expect(await c.getRoleByName('team-a', 'app')).toBeUndefined();
    expect(await c.getPolicyByName('team-a', 'kv-app')).toBeUndefined();
    // Marked for deletion, or already removed by a running server's job.
    const ns = await c.getNamespace('team-a');
    if (ns) expect(ns).toHaveProperty('DeletedAt');
  });
}

describeWithTerraform('catalog constructs deployed by Terraform', () => {
  jest.setTimeout(300_000);

  test('embedded mode: the custom resources run the engine on a data directory; deploy, destroy, deploy again', async () => {
    const data = tempDir();
    const ws = new TerraformWorkspace(tf!);
    const withClient = async <T>(fn: (c: CatalogClient) => Promise<T>): Promise<T> => {
      const transport = await openTransport({ dataDir: data });
      try {
        return await fn(new CatalogClient(transport));
      } finally {
        await transport.close();
      }
    };
    await lifeCycle(ws, { dataDir: data }, withClient);
    // No server runs: the CLI finishes the namespace's removal (due background work) before it
    // applies, so the same stack deploys again at once.
    declare(ws, { dataDir: data, policyDescription: 'again', ruleSelector: 'value.user != ""', withNodeRule: false });
    ws.deploy();
    await withClient(async (c) => {
      const ns = await c.getNamespace('team-a');
      expect(ns).toMatchObject({ Name: 'team-a' });
      expect(ns).not.toHaveProperty('DeletedAt');
      expect(await c.getPolicyByName('team-a', 'kv-app')).toMatchObject({ Description: 'again' });
    });
  });

  test('a node and a service with an HTTP and a TCP check: deployed, read back whole, a new tag updates it in place, destroyed', async () => {
    const data = tempDir();
    const ws = new TerraformWorkspace(tf!);
    const declareService = (tags: string[]) =>
      ws.synthStack((app: App) => {
        const stack = new TerraformStack(app, 'stack');
        new Hangar(stack, 'Hangar', { dataDir: data });
        const node = new CatalogNode(stack, 'Node', { name: 'ext-db', address: '192.0.2.10', meta: { 'external-node': 'true' }, taggedAddresses: { lan: '192.0.2.10' } });
        new CatalogService(stack, 'Pg', {
          node,
          name: 'postgres',
          serviceId: 'postgres-1',
          port: 5432,
          tags,
          meta: { version: '16' },
          checks: [
            {
              checkId: 'pg-http',
              name: 'Patroni',
              notes: 'leader check',
              http: 'http://192.0.2.10:8008/leader',
              method: 'HEAD',
              headers: { 'X-Probe': ['hangar'] },
              tlsSkipVerify: true,
              interval: '10s',
              timeout: '2s',
              status: CatalogCheckStatus.PASSING,
            },
            { checkId: 'pg-tcp', name: 'Port', tcp: '192.0.2.10:5432', interval: '1m', timeout: '1s', deregisterCriticalServiceAfter: '90m' },
          ],
        });
        return stack;
      });
    const read = async (path: string) => {
      const transport = await openTransport({ dataDir: data });
      try {
        return (await transport.request('catalog', 'GET', path)).body as Record<string, unknown>[];
      } finally {
        await transport.close();
      }
    };

    declareService(['primary']);
    ws.deploy();
    const [instance] = await read('/v1/catalog/service/postgres');
    expect(instance).toEqual({
      ID: '',
      Node: 'ext-db',
      Address: '192.0.2.10',
      Datacenter: 'dc1',
      TaggedAddresses: { lan: '192.0.2.10' },
      NodeMeta: { 'external-node': 'true' },
      ServiceKind: '',
      ServiceID: 'postgres-1',
      ServiceName: 'postgres',
      ServiceTags: ['primary'],
      ServiceAddress: '',
      ServiceWeights: { Passing: 1, Warning: 1 },
      ServiceMeta: { version: '16' },
      ServicePort: 5432,
      ServiceEnableTagOverride: false,
      Namespace: 'default',
      CreateIndex: expect.any(Number),
      ModifyIndex: expect.any(Number),
    });
    const checks = await read('/v1/health/checks/postgres');
    const common = { Node: 'ext-db', Output: '', ServiceID: 'postgres-1', ServiceName: 'postgres', ServiceTags: ['primary'], Namespace: 'default', ExposedPort: 0 };
    expect(checks).toEqual([
      {
        ...common,
        CheckID: 'pg-http',
        Name: 'Patroni',
        Status: 'passing',
        Notes: 'leader check',
        Type: 'http',
        Interval: '',
        Timeout: '',
        Definition: { HTTP: 'http://192.0.2.10:8008/leader', Method: 'HEAD', Header: { 'X-Probe': ['hangar'] }, TLSSkipVerify: true, Interval: '10s', Timeout: '2s' },
        CreateIndex: expect.any(Number),
        ModifyIndex: expect.any(Number),
      },
      {
        ...common,
        CheckID: 'pg-tcp',
        Name: 'Port',
        Status: 'critical',
        Notes: '',
        Type: 'tcp',
        Interval: '',
        Timeout: '',
        Definition: { TCP: '192.0.2.10:5432', Interval: '1m0s', Timeout: '1s', DeregisterCriticalServiceAfter: '1h30m0s' },
        CreateIndex: expect.any(Number),
        ModifyIndex: expect.any(Number),
      },
    ]);
    expect(ws.deploy()).toMatch(/0 added, 0 changed, 0 destroyed/);
    expect(hangar(['diff', ws.dir])).toMatchObject({ code: 0, stdout: expect.stringContaining('catalog.service default/ext-db/postgres-1: in sync') });

    // A new tag: the service is registered again in place (its identity is kept, its ID and creation the same).
    declareService(['primary', 'v16']);
    expect(ws.run('plan', '-input=false')).not.toMatch(/Identity_\w+ must be replaced/);
    ws.deploy();
    const [updated] = await read('/v1/catalog/service/postgres');
    expect(updated).toMatchObject({ ServiceID: 'postgres-1', ServiceTags: ['primary', 'v16'], CreateIndex: instance.CreateIndex });
    expect((await read('/v1/health/checks/postgres')).map((c) => [c.CheckID, c.Status, c.ServiceTags])).toEqual([
      ['pg-http', 'passing', ['primary', 'v16']],
      ['pg-tcp', 'critical', ['primary', 'v16']],
    ]);

    ws.destroy();
    expect(await read('/v1/catalog/service/postgres')).toEqual([]);
    expect((await read('/v1/catalog/nodes')).map((n) => n.Node)).not.toContain('ext-db');
  });

  test('examples/typescript: its catalog objects deploy and are destroyed', async () => {
    const data = tempDir();
    expect(hangar(['registry', 'create-user', 'alice', '--password', 'password123', '--data', data]).code).toBe(0);
    expect(hangar(['registry', 'create-org', 'acme', '--owner', 'alice', '--data', data]).code).toBe(0);
    const ws = new TerraformWorkspace(tf!);
    ws.synthStack((app) => new ExampleStack(app, 'stack', { dataDir: data, withSecrets: false }));
    ws.deploy();
    const read = async () => {
      const transport = await openTransport({ dataDir: data });
      try {
        const c = new CatalogClient(transport);
        return {
          role: await c.getRoleByName('team-web', 'deployer'),
          method: await c.getAuthMethod('team-web', 'ci'),
          rules: await c.listBindingRules('team-web', 'ci'),
          services: (await c.nodeServices('web-lb', 'team-web')).map((x) => [x.ID, x.Port, x.Tags]),
        };
      } finally {
        await transport.close();
      }
    };
    const deployed = await read();
    expect(deployed.role).toMatchObject({ Policies: [{ Name: 'web-kv' }] });
    expect(deployed.method?.Config).toMatchObject({ JWTValidationPubKeys: [CI_JWT_PUBLIC_KEY], BoundIssuer: 'https://ci.example.com' });
    expect(deployed.rules).toEqual([expect.objectContaining({ BindName: 'deploy-${value.repo}', Description: '[hangar:deploys]' })]);
    expect(deployed.services).toEqual([['web', 443, ['lb']]]);

    // hangar diff: in sync; a policy changed by hand is drift, which --fix undoes.
    const clean = hangar(['diff', ws.dir]);
    expect(clean).toMatchObject({ code: 0, stdout: expect.stringMatching(/catalog\.auth-method team-web\/ci: in sync/) });
    const transport = await openTransport({ dataDir: data });
    const c = new CatalogClient(transport);
    const policy = await c.getPolicyByName('team-web', 'web-kv');
    await c.putPolicy('team-web', { Name: 'web-kv', Rules: 'key_prefix "" { policy = "write" }' }, policy!.ID);
    await transport.close();
    const drift = hangar(['diff', ws.dir]);
    expect(drift).toMatchObject({ code: 2, stdout: expect.stringContaining('~ catalog.policy team-web/web-kv: rules') });
    expect(hangar(['diff', ws.dir, '--fix']).code).toBe(0);
    expect(hangar(['diff', ws.dir]).code).toBe(0);
    ws.destroy();
    expect(await read()).toEqual({ role: undefined, method: undefined, rules: [], services: [] });
  });

  test('HTTP mode: a running server, the token from the environment, never in the state', async () => {
    const rootToken = `root-${Math.random().toString(36).slice(2)}-secret`;
    let server: RunningServer | undefined;
    try {
      server = await startServerProcess(['--dev', '--dev-root-token', rootToken]);
      const client = new CatalogClient(await openTransport({ endpoints: { catalog: server.urls.catalog } }), rootToken);
      const ws = new TerraformWorkspace(tf!, { DEPLOY_TOKEN: rootToken });
      const connection = { catalogUrl: server.urls.catalog, tokenEnvVar: 'DEPLOY_TOKEN' };
      await lifeCycle(ws, connection, (fn) => fn(client), () => {
        const stored = ws.everythingStored();
        expect(stored).toContain('team-a/kv-app');
        expect(stored).not.toContain(rootToken);
      });
    } finally {
      await server?.stop();
    }
  });
});
