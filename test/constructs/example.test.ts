import { Testing } from 'cdktf';
import { ExampleStack } from '../../examples/typescript/main';
import { decodeInventory } from '../../src/reconcile/payload';

describe('examples/typescript', () => {
  test.each([
    ['embedded', {}, {}],
    ['HTTP', { registryUrl: 'http://127.0.0.1:8080' }, { endpoints: { registry: 'http://127.0.0.1:8080' } }],
  ])('synthesizes (%s mode) the boxes it declares, with a null provider and an inventory', (_mode, options, connection) => {
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
    ]);
    expect(Object.keys(synth.resource.null_resource)).toHaveLength(5);
  });
});
