import { AclPolicy, AclRole, Box, BoxProvider, BoxVersion, Hangar, Namespace } from '../../src';
import { decodeInventory, decodePayload } from '../../src/reconcile/payload';
import { ResourcePayload } from '../../src/reconcile/payload-format';
import { byPath, idOf, Synth, synth } from '../helpers/synth';

/** The payloads the batch applies, in order: HANGAR_PAYLOADS, then HANGAR_PAYLOADS_2, ... */
function batchOf(s: Synth): ResourcePayload[] {
  const env = byPath(s, 'Hangar/Apply').provisioner[0]['local-exec'].environment as Record<string, string>;
  const names = Object.keys(env).filter((n) => n.startsWith('HANGAR_PAYLOADS'));
  const ordered = ['HANGAR_PAYLOADS', ...names.filter((n) => n !== 'HANGAR_PAYLOADS').sort((a, b) => Number(a.split('_')[2]) - Number(b.split('_')[2]))];
  expect(ordered).toHaveLength(names.length);
  return ordered.flatMap((n) => decodeInventory(env[n]));
}

const steps = (s: Synth) => batchOf(s).map((p) => `${p.kind} ${p.key}${p.desired?.released !== undefined ? ' (release)' : ''}`);

describe('Hangar batch mode', () => {
  test('each object is one null_resource that runs nothing; Hangar/Apply applies them all, parents first', () => {
    const s = synth((stack) => {
      const hangar = new Hangar(stack, 'Hangar', { registryUrl: 'http://127.0.0.1:8080', batch: true });
      const web = new Box(stack, 'Web', { owner: 'acme', name: 'web', hangar });
      const version = new BoxVersion(stack, 'V1', { box: web, version: '1.0.0', released: true });
      new BoxProvider(stack, 'Vbox', { version, name: 'virtualbox', url: 'https://boxes.example.com/web.box' });
      new Box(stack, 'Db', { owner: 'acme', name: 'db', hangar });
    });
    // No Identity resources, and no provisioner on any object's resource.
    expect(Object.keys(s.resource.null_resource).filter((id) => id.includes('Identity'))).toEqual([]);
    for (const path of ['Web/Resource/Config', 'V1/Resource/Config', 'V1/Release', 'Vbox/Resource/Config', 'Db/Resource/Config']) {
      expect(byPath(s, path).provisioner).toBeUndefined();
    }
    const config = byPath(s, 'Web/Resource/Config');
    expect(decodePayload(config.triggers.identity)).toEqual({ v: 1, kind: 'registry.box', key: 'acme/web', connection: { endpoints: { registry: 'http://127.0.0.1:8080' } } });
    expect(decodePayload(config.triggers.payload).desired).toEqual({ shortDescription: '', description: '', private: true });

    // The release step after the provider declared after it; the payloads are the Configs' own.
    expect(steps(s)).toEqual([
      'registry.box acme/web',
      'registry.box-version acme/web/1.0.0',
      'registry.box-provider acme/web/1.0.0/virtualbox',
      'registry.box-version acme/web/1.0.0 (release)',
      'registry.box acme/db',
    ]);
    expect(batchOf(s)[0]).toEqual(decodePayload(config.triggers.payload));
    const apply = byPath(s, 'Hangar/Apply');
    expect(apply.provisioner[0]['local-exec']).toMatchObject({ command: '$${HANGAR_NODE:-node} "$HANGAR_CLI" apply' });
    expect(apply.provisioner[0]['local-exec'].when).toBeUndefined();
    // Replaced whenever any object's resource is: its trigger lists their ids.
    const ids = apply.triggers.steps.split(',');
    expect(ids).toHaveLength(5);
    expect(ids).toContain(`\${null_resource.${idOf(s, 'V1/Release')}.id}`);

    // The inventory (removals) runs after the batch; the teardown deletes everything on destroy.
    expect(byPath(s, 'Hangar/Inventory').depends_on).toContain(`null_resource.${idOf(s, 'Hangar/Apply')}`);
    const teardown = byPath(s, 'Hangar/Teardown');
    expect(teardown.triggers).toBeUndefined();
    const exec = teardown.provisioner[0]['local-exec'];
    expect(exec).toMatchObject({ when: 'destroy', command: '$${HANGAR_NODE:-node} "$HANGAR_CLI" prune' });
    expect(exec.environment.HANGAR_CURRENT).toBeUndefined();
    expect(decodeInventory(exec.environment.HANGAR_PREVIOUS).map((p) => p.key)).toEqual([
      'acme/web',
      'acme/web/1.0.0',
      'acme/web/1.0.0/virtualbox',
      'acme/db',
    ]);
  });

  test('a version\'s release trigger changes with its providers\' identities, not with their files', () => {
    const build = (url: string) =>
      synth((stack) => {
        const hangar = new Hangar(stack, 'Hangar', { batch: true, dataDir: '/srv/hangar' });
        const version = new BoxVersion(stack, 'V1', { box: new Box(stack, 'Web', { owner: 'acme', name: 'web', hangar }), version: '1.0.0', released: true });
        new BoxProvider(stack, 'Vbox', { version, name: 'virtualbox', url });
      });
    expect(byPath(build('https://a/1.box'), 'V1/Release').triggers).toEqual(byPath(build('https://a/2.box'), 'V1/Release').triggers);
  });

  test('namespace defaults come after the policies they name, even those declared later', () => {
    const s = synth((stack) => {
      new Hangar(stack, 'Hangar', { batch: true, dataDir: '/srv/hangar' });
      const ns = new Namespace(stack, 'Team', { name: 'team-a', policyDefaults: ['kv-app'] });
      new AclPolicy(stack, 'Policy', { name: 'kv-app', rules: 'key_prefix "app/" { policy = "write" }', namespace: ns });
    });
    expect(steps(s)).toEqual(['catalog.namespace team-a', 'catalog.policy team-a/kv-app', 'catalog.namespace-defaults team-a']);
    // No Terraform dependency is needed between objects that run nothing.
    expect(byPath(s, 'Team/Defaults/Config').depends_on).toBeUndefined();
  });

  test('with two Hangar constructs in one stack, an object waits for the one that applies its parent', () => {
    const rules = 'key_prefix "app/" { policy = "write" }';
    // A namespace in a batch, its policy applied by a process of its own: the policy after the batch.
    const first = synth((stack) => {
      const batched = new Hangar(stack, 'Batched', { batch: true, dataDir: '/srv/hangar' });
      const single = new Hangar(stack, 'Single', { dataDir: '/srv/hangar' });
      const ns = new Namespace(stack, 'Team', { name: 'team-a', hangar: batched });
      new AclPolicy(stack, 'Policy', { name: 'kv-app', rules, namespace: ns, hangar: single });
    });
    expect(byPath(first, 'Policy/Resource/Identity').depends_on).toEqual([`null_resource.${idOf(first, 'Batched/Apply')}`]);
    expect(byPath(first, 'Batched/Apply').depends_on).toEqual([]);
    // The other way round: a batch holding a role waits for the policy it names.
    const second = synth((stack) => {
      const batched = new Hangar(stack, 'Batched', { batch: true, dataDir: '/srv/hangar' });
      const single = new Hangar(stack, 'Single', { dataDir: '/srv/hangar' });
      const policy = new AclPolicy(stack, 'Policy', { name: 'kv-app', rules, hangar: single });
      new AclRole(stack, 'Role', { name: 'app', policies: [policy], hangar: batched });
    });
    expect(byPath(second, 'Batched/Apply').depends_on).toEqual([`null_resource.${idOf(second, 'Policy/Resource/Config')}`]);
  });

  test('a long batch is split over several variables of at most 96 KiB, in order', () => {
    const s = synth((stack) => {
      const hangar = new Hangar(stack, 'Hangar', { batch: true, dataDir: '/srv/hangar' });
      for (let i = 0; i < 300; i++) new Box(stack, `B${i}`, { owner: 'acme', name: `box-${i}`, description: 'd'.repeat(1000), hangar });
    });
    const env = byPath(s, 'Hangar/Apply').provisioner[0]['local-exec'].environment as Record<string, string>;
    const names = Object.keys(env).filter((n) => n.startsWith('HANGAR_PAYLOADS'));
    expect(names.length).toBeGreaterThanOrEqual(4);
    for (const n of names) expect(env[n].length).toBeLessThanOrEqual(96 * 1024);
    expect(batchOf(s).map((p) => p.key)).toEqual(Array.from({ length: 300 }, (_, i) => `acme/box-${i}`));
  });

  test('one process per object stays the default', () => {
    const s = synth((stack) => new Box(stack, 'Web', { owner: 'acme', name: 'web' }));
    expect(byPath(s, 'Web/Resource/Config').provisioner).toHaveLength(1);
    expect(Object.keys(s.resource.null_resource).some((id) => id.startsWith('Hangar_Apply') || id.startsWith('Hangar_Teardown'))).toBe(false);
  });
});
