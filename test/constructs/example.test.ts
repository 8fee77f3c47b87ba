import { Testing } from 'cdktf';
import { ExampleStack } from '../../examples/typescript/main';
import { decodeInventory } from '../../src/reconcile/payload';

describe('examples/typescript', () => {
  test.each([
    ['embedded', {}, {}],
    [
      'HTTP',
      { registryUrl: 'http://127.0.0.1:8080', catalogUrl: 'http://127.0.0.1:8500', secretsUrl: 'http://127.0.0.1:8200' },
      { endpoints: { registry: 'http://127.0.0.1:8080', secrets: 'http://127.0.0.1:8200', catalog: 'http://127.0.0.1:8500' } },
    ],
  ])('synthesizes (%s mode) the boxes, catalog and secrets objects it declares, with a null provider and an inventory', (_mode, options, connection) => {
    process.env.HANGAR_TOKEN = 'must-not-appear';
    const stack = new ExampleStack(Testing.app(), 'example', options);
    delete process.env.HANGAR_TOKEN;
    const json = Testing.synth(stack);
    expect(json).not.toContain('must-not-appear');
    const synth = JSON.parse(json);
    expect(Object.keys(synth.provider)).toEqual(['null']);
    const inventory = Object.entries<any>(synth.resource.null_resource).find(([id]) => id.startsWith('Hangar_Inventory_'))![1];
    expect(decodeInventory(inventory.triggers.inventory)).toEqual([
      { v: 1, kind: 'registry.box', key: 'acme/web', connection },
      { v: 1, kind: 'registry.box', key: 'acme/db', connection },
      { v: 1, kind: 'registry.box-version', key: 'acme/web/1.0.0', connection },
      { v: 1, kind: 'registry.box-provider', key: 'acme/web/1.0.0/virtualbox', connection },
      { v: 1, kind: 'catalog.namespace', key: 'team-web', connection },
      { v: 1, kind: 'catalog.policy', key: 'team-web/web-kv', connection },
      { v: 1, kind: 'catalog.role', key: 'team-web/deployer', connection },
      { v: 1, kind: 'catalog.auth-method', key: 'team-web/ci', connection },
      { v: 1, kind: 'catalog.binding-rule', key: 'team-web/ci/deploys', connection },
      { v: 1, kind: 'catalog.node', key: 'web-lb', connection },
      { v: 1, kind: 'catalog.service', key: 'team-web/web-lb/web', connection },
      { v: 1, kind: 'secrets.policy', key: 'ci-deployer', connection },
      { v: 1, kind: 'secrets.auth', key: 'jwt-ci', connection },
      { v: 1, kind: 'secrets.jwt-config', key: 'jwt-ci', connection },
      { v: 1, kind: 'secrets.jwt-role', key: 'jwt-ci/deploy', connection },
    ]);
    expect(Object.keys(synth.resource.null_resource)).toHaveLength(32);
    // The CI's public keys are named, never inlined: they are read at deploy time.
    const config = Object.entries<any>(synth.resource.null_resource).find(([id]) => id.startsWith('JwtCiConfig_Config_'))![1];
    expect(JSON.parse(Buffer.from(config.triggers.payload, 'base64url').toString()).desired).toMatchObject({ jwtValidationPubkeysEnv: 'HANGAR_EXAMPLE_CI_JWT_PUBKEYS' });
  });
});
