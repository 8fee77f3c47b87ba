import { TerraformStack, Testing } from 'cdktf';
import {
  AclAuthMethod, AclPolicy, AclRole, BindingRule, BindType, CatalogCheckStatus, CatalogNode, CatalogService, Namespace, TokenLocality,
} from '../../src';
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

  describe('CatalogNode and CatalogService', () => {
    function nodeAndService(stack: TerraformStack) {
      const ns = new Namespace(stack, 'Team', { name: 'team-a' });
      const node = new CatalogNode(stack, 'Node', {
        name: 'db-1', address: '10.0.0.5', meta: { 'external-node': 'true' }, taggedAddresses: { lan: '10.0.0.5', wan: 'db.example.com' },
      });
      const service = new CatalogService(stack, 'Pg', {
        name: 'postgres',
        serviceId: 'postgres-1',
        node,
        namespace: ns,
        port: 5432,
        tags: ['primary'],
        meta: { version: '16' },
        enableTagOverride: true,
        weights: { passing: 10 },
        checks: [
          { checkId: 'pg-tcp', name: 'TCP', tcp: '10.0.0.5:5432', interval: '10s', timeout: '1s', deregisterCriticalServiceAfter: '1h' },
          { checkId: 'pg-http', name: 'HTTP', http: 'https://10.0.0.5:8008/health', headers: { Accept: ['application/json'] }, tlsSkipVerify: true, interval: '30s', status: CatalogCheckStatus.PASSING },
        ],
      });
      return { node, service };
    }

    test('render their kinds, keys and desired states, valid for the kinds; the service after its node and namespace', () => {
      const s = synth(nodeAndService);
      expect(byPath(s, 'Node/Resource/Identity').triggers).toMatchObject({ kind: 'catalog.node', key: 'db-1' });
      const node = decodePayload(byPath(s, 'Node/Resource/Config').triggers.payload).desired!;
      expect(node).toEqual({ address: '10.0.0.5', meta: { 'external-node': 'true' }, taggedAddresses: { lan: '10.0.0.5', wan: 'db.example.com' } });
      expect(kindOf('catalog.node').desired.safeParse(node).success).toBe(true);

      expect(byPath(s, 'Pg/Resource/Identity').triggers).toMatchObject({ kind: 'catalog.service', key: 'team-a/db-1/postgres-1' });
      const service = decodePayload(byPath(s, 'Pg/Resource/Config').triggers.payload).desired!;
      expect(service).toEqual({
        name: 'postgres',
        address: '',
        port: 5432,
        tags: ['primary'],
        meta: { version: '16' },
        enableTagOverride: true,
        weights: { passing: 10, warning: 1 },
        checks: [
          { checkId: 'pg-tcp', name: 'TCP', tcp: '10.0.0.5:5432', interval: '10s', timeout: '1s', deregisterCriticalServiceAfter: '1h' },
          {
            checkId: 'pg-http', name: 'HTTP', status: 'passing', http: 'https://10.0.0.5:8008/health', method: 'GET', header: { Accept: ['application/json'] }, tlsSkipVerify: true, interval: '30s',
          },
        ],
      });
      expect(kindOf('catalog.service').desired.safeParse(service).success).toBe(true);
      const config = (path: string) => `null_resource.${idOf(s, `${path}/Resource/Config`)}`;
      expect(byPath(s, 'Pg/Resource/Identity').depends_on).toEqual([config('Team'), config('Node')]);
    });

    test('expose their identities; a service on an existing node by name, its ID the name, in default', () => {
      synth((stack) => {
        const { node, service } = nodeAndService(stack);
        expect([node.name, node.address]).toEqual(['db-1', '10.0.0.5']);
        expect([service.serviceId, service.name, service.nodeName, service.namespace, service.port]).toEqual(['postgres-1', 'postgres', 'db-1', 'team-a', 5432]);
        const bare = new CatalogService(stack, 'Web', { name: 'web', nodeName: 'edge/1' });
        expect([bare.serviceId, bare.namespace, bare.port]).toEqual(['web', 'default', 0]);
      });
      const s = synth((stack) => new CatalogService(stack, 'Web', { name: 'web', nodeName: 'edge/1' }));
      expect(byPath(s, 'Web/Resource/Identity').triggers.key).toBe('default/edge%2F1/web');
      expect(byPath(s, 'Web/Resource/Identity').depends_on).toEqual([]);
    });

    test('invalid properties fail at construction naming the property', () => {
      const stack = () => new TerraformStack(Testing.app(), 'x');
      const service = (props: Partial<ConstructorParameters<typeof CatalogService>[2]>) =>
        new CatalogService(stack(), 'S', { name: 'web', nodeName: 'n1', ...props });
      const withCheck = (c: Record<string, unknown>) => service({ checks: [{ checkId: 'c1', name: 'c', ...c }] });
      expect(() => new CatalogNode(stack(), 'N', { name: 'a b', address: '10.0.0.1' })).toThrow(/CatalogNode name "a b" is invalid/);
      expect(() => new CatalogNode(stack(), 'N', { name: 'n', address: 'not an address' })).toThrow(/address "not an address" is neither an IP address nor a host name/);
      expect(() => new CatalogNode(stack(), 'N', { name: 'n', address: '10.0.0.1', taggedAddresses: { wan: '::x' } })).toThrow(/taggedAddresses.wan "::x"/);
      expect(() => new CatalogNode(stack(), 'N', { name: 'n', address: '10.0.0.1', meta: { 'a b': 'x' } })).toThrow(/meta: .*Key contains invalid characters/);
      expect(() => new CatalogNode(stack(), 'N', { name: 'n', address: '10.0.0.1', datacenter: 'dc 2' })).toThrow(/datacenter "dc 2" is invalid/);
      expect(() => service({ nodeName: undefined })).toThrow(/set exactly one of node \(a CatalogNode\) and nodeName/);
      expect(() => service({ name: ' ' })).toThrow(/CatalogService name is empty/);
      expect(() => service({ port: 70000 })).toThrow(/port 70000 is invalid: use an integer from 0 to 65535/);
      expect(() => service({ port: 80.5 })).toThrow(/port 80.5 is invalid/);
      expect(() => service({ address: '0.0.0.0' })).toThrow(/address "0.0.0.0" is not an address a service can be reached at/);
      expect(() => service({ meta: { 'consul-x': '1' } })).toThrow(/meta: .*Key prefix 'consul-' is reserved/);
      expect(() => service({ weights: { passing: 0 } })).toThrow(/weights.passing 0 is invalid/);
      expect(() => withCheck({ http: 'http://x/', tcp: 'x:1', interval: '10s' })).toThrow(/checks\[0\]: http, tcp are set; a check is of one type/);
      expect(() => withCheck({ tcp: 'x', interval: '10s' })).toThrow(/checks\[0\]: tcp "x" is not host:port/);
      expect(() => withCheck({ udp: 'x:99999', interval: '10s' })).toThrow(/udp "x:99999" is not host:port/);
      expect(() => withCheck({ http: 'ftp://x', interval: '10s' })).toThrow(/http "ftp:\/\/x" is not an http\(s\) URL/);
      expect(() => withCheck({ http: 'http://x/' })).toThrow(/interval is missing; a http check runs at an interval/);
      expect(() => withCheck({ tcp: 'x:1', interval: 'often' })).toThrow(/interval "often" is not a duration/);
      expect(() => withCheck({ tcp: 'x:1', interval: '10s', timeout: '1 s' })).toThrow(/timeout "1 s" is not a duration/);
      expect(() => withCheck({ tcp: 'x:1', interval: '10s', deregisterCriticalServiceAfter: 'soon' })).toThrow(/deregisterCriticalServiceAfter "soon"/);
      expect(() => withCheck({ tcp: 'x:1', interval: '10s', method: 'POST' })).toThrow(/method is only for HTTP checks/);
      expect(() => withCheck({ tcp: 'x:1', interval: '10s', headers: { A: ['b'] } })).toThrow(/headers are only for HTTP checks/);
      expect(() => withCheck({ tcp: 'x:1', interval: '10s', tlsSkipVerify: true })).toThrow(/tlsSkipVerify is only for HTTP and gRPC checks/);
      expect(() => withCheck({ interval: '10s' })).toThrow(/interval and timeout are for checks that run/);
      expect(() => withCheck({ tcp: 'x:1', interval: '10s', status: 'up' })).toThrow(/status "up" is invalid/);
      expect(() => withCheck({ checkId: '', tcp: 'x:1', interval: '10s' })).toThrow(/checkId is empty/);
      expect(() => service({ checks: [{ checkId: 'c', name: 'a' }, { checkId: 'c', name: 'b' }] })).toThrow(/checkId "c" is used twice/);
      // A gRPC target may name the service; a status-only check needs nothing else.
      expect(() => withCheck({ grpc: '10.0.0.5:9090/health.v1', interval: '5s', tlsSkipVerify: true })).not.toThrow();
      expect(() => withCheck({ status: CatalogCheckStatus.WARNING, notes: 'set by hand' })).not.toThrow();
    });
  });
});
