import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CI_JWT_PUBKEYS_ENV, ExampleStack } from '../../examples/typescript/main';
import { AclPolicy, AclRole, Hangar, Namespace } from '../../src';
import { CatalogClient } from '../../src/client/catalog';
import { openTransport } from '../../src/client/open';
import { RegistryClient } from '../../src/client/registry';
import { SecretsClient } from '../../src/client/secrets';
import { newKey } from '../engine/secrets/jwt-helpers';
import { hangar } from '../helpers/cli';
import { tempDir } from '../helpers/storage';
import { provisionerRuns, terraformEnv, TerraformWorkspace } from '../helpers/terraform';

const tf = terraformEnv();
const describeWithTerraform = tf ? describe : describe.skip;
if (!tf) process.stderr.write('terraform/tofu and the null provider are not available: batch e2e tests skipped\n');

describeWithTerraform('batch mode (HangarProps.batch) with every service of examples/typescript', () => {
  jest.setTimeout(300_000);

  test('one process deploys the registry, catalog and secrets objects; applied again, each is only read; a stack switches modes without losing objects; one process destroys them', async () => {
    const data = tempDir();
    expect(hangar(['registry', 'create-user', 'alice', '--password', 'password123', '--data', data]).code).toBe(0);
    expect(hangar(['registry', 'create-org', 'acme', '--owner', 'alice', '--data', data]).code).toBe(0);
    const key = await newKey('ci', 'ES256');
    const env = { [CI_JWT_PUBKEYS_ENV]: key.publicPem };
    const ws = new TerraformWorkspace(tf!, env);
    const declare = (batch: boolean) => ws.synthStack((app) => new ExampleStack(app, 'stack', { dataDir: data, batch }));
    const live = async () => {
      const transport = await openTransport({ dataDir: data });
      try {
        return {
          box: await new RegistryClient(transport).getBox('acme', 'web'),
          namespace: await new CatalogClient(transport).getNamespace('team-web'),
          policy: await new SecretsClient(transport).getPolicy('ci-deployer'),
        };
      } finally {
        await transport.close();
      }
    };

    declare(true);
    const deployed = ws.deploy();
    expect(provisionerRuns(deployed)).toBe(1);
    const outcomes = [...deployed.matchAll(/\(local-exec\): ([a-z.-]+) (\S+): (created|updated|unchanged)/g)].map((m) => `${m[1]} ${m[2]}`);
    expect(outcomes).toEqual(expect.arrayContaining(['registry.box acme/web', 'catalog.binding-rule team-web/ci/deploys', 'secrets.jwt-role jwt-ci/deploy']));
    // Parents first, whatever the order of declaration.
    expect(outcomes.indexOf('catalog.namespace team-web')).toBeLessThan(outcomes.indexOf('catalog.policy team-web/web-kv'));
    expect(outcomes.indexOf('secrets.auth jwt-ci')).toBeLessThan(outcomes.indexOf('secrets.jwt-config jwt-ci'));
    expect(ws.deploy()).toMatch(/0 added, 0 changed, 0 destroyed/);
    const first = await live();
    expect(first.box).toBeDefined();

    // What a replaced Hangar/Apply runs when another object changed: every object again. Each one
    // is compared and left alone; only the JWT configuration, whose keys cannot be read back, is
    // written again (with the same keys).
    const config = JSON.parse(readFileSync(join(ws.dir, 'cdk.tf.json'), 'utf8'));
    const applyId = Object.keys(config.resource.null_resource).find((id) => id.startsWith('Hangar_Apply'))!;
    const batchEnv = { ...config.resource.null_resource[applyId].provisioner[0]['local-exec'].environment, ...env };
    delete batchEnv.HANGAR_CLI;
    const again = hangar(['apply'], batchEnv);
    expect(again.code).toBe(0);
    const lines = again.stdout.trim().split('\n');
    expect(lines).toHaveLength(outcomes.length);
    expect(lines.filter((l) => !l.endsWith(': unchanged'))).toEqual(['secrets.jwt-config jwt-ci: updated']);
    expect(hangar(['diff', ws.dir], env)).toMatchObject({ code: 0 });

    // To one process per object and back: every object is applied again, none is deleted or recreated.
    for (const batch of [false, true]) {
      declare(batch);
      const switched = ws.deploy();
      expect(switched).not.toMatch(/: (created|deleted)/);
      expect(await live()).toEqual(first);
    }

    const destroyed = ws.destroy();
    expect(provisionerRuns(destroyed)).toBeLessThanOrEqual(2);
    expect(destroyed).toContain('catalog.namespace team-web: deleted with the stack');
    expect(await live()).toEqual({ box: undefined, namespace: undefined, policy: undefined });
  });

  test('two Hangar constructs, one in batch mode: each object is applied after its parent, whichever construct applies it', async () => {
    const data = tempDir();
    const ws = new TerraformWorkspace(tf!, {});
    ws.synth((stack) => {
      const batched = new Hangar(stack, 'Batched', { batch: true, dataDir: data });
      const single = new Hangar(stack, 'Single', { dataDir: data });
      const ns = new Namespace(stack, 'Team', { name: 'team-a', hangar: batched });
      new AclPolicy(stack, 'Policy', { name: 'kv-app', rules: 'key_prefix "app/" { policy = "write" }', namespace: ns, hangar: single });
      const shared = new AclPolicy(stack, 'Shared', { name: 'shared', rules: 'node_prefix "" { policy = "read" }', hangar: single });
      new AclRole(stack, 'Role', { name: 'reader', policies: [shared], hangar: batched });
    });
    ws.deploy();
    const transport = await openTransport({ dataDir: data });
    try {
      const catalog = new CatalogClient(transport);
      expect(await catalog.getNamespace('team-a')).toBeDefined();
      expect(hangar(['diff', ws.dir])).toMatchObject({ code: 0, stdout: expect.stringContaining('catalog.role default/reader: in sync') });
    } finally {
      await transport.close();
    }
    ws.destroy();
  });
});
