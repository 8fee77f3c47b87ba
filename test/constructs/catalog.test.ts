import { TerraformStack, Testing } from 'cdktf';
import { AclAuthMethod, AclPolicy, AclRole, BindingRule, BindType, Namespace, TokenLocality } from '../../src';
import { kindOf } from '../../src/reconcile';
import { decodePayload } from '../../src/reconcile/payload';
import { byPath, idOf, synth } from '../helpers/synth';


const PEM = '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n';

function example(stack: TerraformStack) {
  const ns = new Namespace(stack, 'Team', { name: 'team-a', description: 'Team A', meta: { owner: 'a' } });
  const policy = new AclPolicy(stack, 'Policy', { name: 'kv-app', rules: 'key_prefix "app/" { policy = "write" }', namespace: ns });
  new AclRole(stack, 'Role', { name: 'app', policies: [policy], serviceIdentities: ['web'], nodeIdentities: ['n1'], namespace: ns });
  const method = new AclAuthMethod(stack, 'Jwt', {
    name: 'ci',
    namespace: ns,
    jwtValidationPubKeys: [PEM],
    boundIssuer: 'https://ci.example',
    claimMappings: { sub: 'user' },
    maxTokenTtl: '1h',
    tokenLocality: TokenLocality.GLOBAL,
  });
  new BindingRule(stack, 'Rule', { name: 'users', authMethod: method, bindType: BindType.SERVICE, bindName: 'svc-${value.user}', selector: 'value.user != ""' });
}

describe('catalog constructs', () => {
  test('each renders a custom resource with its kind, key and desired state, valid for its kind', () => {
    const s = synth(example);
    const expected: [string, string, string, Record<string, unknown>][] = [
      ['Team', 'catalog.namespace', 'team-a', { description: 'Team A', meta: { owner: 'a' } }],
      ['Policy', 'catalog.policy', 'team-a/kv-app', { description: '', rules: 'key_prefix "app/" { policy = "write" }' }],
      ['Role', 'catalog.role', 'team-a/app', { policies: ['kv-app'], serviceIdentities: ['web'], nodeIdentities: ['n1'] }],
      ['Jwt', 'catalog.auth-method', 'team-a/ci', {
        maxTokenTtl: '1h',
        tokenLocality: 'global',
        config: { JWTValidationPubKeys: [PEM], BoundIssuer: 'https://ci.example', ClaimMappings: { sub: 'user' } },
      }],
      ['Rule', 'catalog.binding-rule', 'team-a/ci/users', { bindType: 'service', bindName: 'svc-${value.user}', selector: 'value.user != ""' }],
    ];
    for (const [path, kind, key, desired] of expected) {
      const identity = byPath(s, `${path}/Resource/Identity`);
      expect(identity.triggers).toMatchObject({ kind, key });
      const payload = decodePayload(byPath(s, `${path}/Resource/Config`).triggers.payload);
      expect(payload.desired).toMatchObject(desired);
      expect(kindOf(kind).desired.safeParse(payload.desired).success).toBe(true);
    }
    // The template is not read as a Terraform interpolation.
    expect(JSON.stringify(s)).not.toContain('${value.user}');
  });

  test('parents come first: namespace before its objects, policies before roles, the method before its rules', () => {
    const s = synth(example);
    const dependsOn = (path: string) => byPath(s, `${path}/Resource/Identity`).depends_on as string[];
    const config = (path: string) => `null_resource.${idOf(s, `${path}/Resource/Config`)}`;
    expect(dependsOn('Policy')).toEqual([config('Team')]);
    expect(dependsOn('Role')).toEqual([config('Team'), config('Policy')]);
    expect(dependsOn('Jwt')).toEqual([config('Team')]);
    expect(dependsOn('Rule')).toEqual([config('Jwt')]);
  });

  test('namespace ACL defaults are a separate step after the namespace and the policies and roles they name', () => {
    const s = synth((stack) => {
      const ns = new Namespace(stack, 'Team', { name: 'team-a', policyDefaults: ['kv-app', 'shared'], roleDefaults: ['app'] });
      const policy = new AclPolicy(stack, 'Policy', { name: 'kv-app', rules: 'key_prefix "app/" { policy = "write" }', namespace: ns });
      new AclPolicy(stack, 'Shared', { name: 'shared', rules: 'node_prefix "" { policy = "read" }' });
      new AclPolicy(stack, 'Unrelated', { name: 'other', rules: 'node_prefix "" { policy = "read" }', namespace: ns });
      new AclRole(stack, 'Role', { name: 'app', policies: [policy], namespace: ns });
    });
    const identity = byPath(s, 'Team/Defaults/Identity');
    expect(identity.triggers).toMatchObject({ kind: 'catalog.namespace-defaults', key: 'team-a' });
    const payload = decodePayload(byPath(s, 'Team/Defaults/Config').triggers.payload);
    expect(payload.desired).toEqual({ policyDefaults: ['kv-app', 'shared'], roleDefaults: ['app'] });
    expect(kindOf('catalog.namespace-defaults').desired.safeParse(payload.desired).success).toBe(true);
    const config = (path: string) => `null_resource.${idOf(s, `${path}/Resource/Config`)}`;
    expect((identity.depends_on as string[]).sort()).toEqual([config('Team'), config('Policy'), config('Shared'), config('Role')].sort());
    // The namespace itself does not carry the defaults, so that its objects can depend on it.
    expect(decodePayload(byPath(s, 'Team/Resource/Config').triggers.payload).desired).toEqual({ description: '', meta: {} });
    // Without defaults there is no such step (removing them destroys it, which clears them).
    expect(JSON.stringify(synth((stack) => new Namespace(stack, 'N', { name: 'n' })))).not.toContain('namespace-defaults');
  });

  test('objects without a namespace go to default', () => {
    const s = synth((stack) => new AclPolicy(stack, 'P', { name: 'p', rules: 'node_prefix "" { policy = "read" }' }));
    expect(byPath(s, 'P/Resource/Identity').triggers.key).toBe('default/p');
  });

  test('invalid properties fail at construction with the bad value and the fix', () => {
    const stack = () => new TerraformStack(Testing.app(), 'x');
    expect(() => new Namespace(stack(), 'N', { name: 'no_underscores' })).toThrow(/Namespace name "no_underscores" is invalid: use a DNS label/);
    expect(() => new Namespace(stack(), 'N', { name: 'default' })).toThrow(/"default" is reserved/);
    expect(() => new Namespace(stack(), 'N', { name: 'n', policyDefaults: ['a b'] })).toThrow(/policyDefaults entry "a b" is not a valid name/);
    expect(() => new AclPolicy(stack(), 'P', { name: 'a b', rules: 'x' })).toThrow(/AclPolicy name "a b" is invalid/);
    expect(() => new AclPolicy(stack(), 'P', { name: 'p', rules: ' ' })).toThrow(/rules are empty/);
    expect(() => new AclRole(stack(), 'R', { name: 'r', serviceIdentities: ['Web'] })).toThrow(/serviceIdentities entry "Web" is invalid/);
    const other = stack();
    const p = new AclPolicy(other, 'P', { name: 'p', rules: 'x', namespace: new Namespace(other, 'N', { name: 'n' }) });
    expect(() => new AclRole(other, 'R', { name: 'r', policies: [p] })).toThrow(/policy "p" is in namespace "n", not "default"/);
    expect(() => new AclAuthMethod(stack(), 'M', { name: 'm' })).toThrow(/set exactly one of jwtValidationPubKeys, jwksUrl and oidcDiscoveryUrl \(0 set\)/);
    expect(() => new AclAuthMethod(stack(), 'M', { name: 'm', jwksUrl: 'ftp://x' })).toThrow(/jwksUrl "ftp:\/\/x" is not an http\(s\) URL/);
    expect(() => new AclAuthMethod(stack(), 'M', { name: 'm', jwtValidationPubKeys: ['nope'] })).toThrow(/jwtValidationPubKeys\[0\] is not a PEM public key/);
    expect(() => new AclAuthMethod(stack(), 'M', { name: 'm', jwksUrl: 'https://x', maxTokenTtl: 'forever' })).toThrow(/maxTokenTtl "forever" is not a duration/);
    const m = new AclAuthMethod(other, 'M', { name: 'm', jwksUrl: 'https://x' });
    expect(() => new BindingRule(other, 'B', { name: 'a/b', authMethod: m, bindType: BindType.ROLE, bindName: 'x' })).toThrow(/BindingRule name "a\/b" is invalid/);
    expect(() => new BindingRule(other, 'C', { name: 'c', authMethod: m, bindType: 'group' as BindType, bindName: 'x' })).toThrow(/bindType "group" is invalid/);
    expect(() => new BindingRule(other, 'D', { name: 'd', authMethod: m, bindType: BindType.ROLE, bindName: '' })).toThrow(/bindName is empty/);
  });
});
