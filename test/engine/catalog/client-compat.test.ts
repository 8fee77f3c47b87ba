import { CatalogServer, startCatalogServer } from './helpers';
import { STORAGE_KINDS } from '../../helpers/storage';

/**
 * What the official clients send and expect (issue 17): bodies as Go encodes its structs, exact
 * uint64 KV flags, durations as Go strings, 404 for missing ACL objects, filters, the read
 * endpoints the clients call first, and transactions.
 */
describe.each(STORAGE_KINDS)('catalog: what the official clients send and expect (%s)', (kind) => {
  let s: CatalogServer;
  beforeAll(async () => {
    s = await startCatalogServer(kind);
  });
  afterAll(() => s.close());

  test('computed fields (Hash, indexes) and null are accepted as the Go client sends them; unknown fields still are not', async () => {
    const sent = { ID: '', Name: 'go-policy', Description: '', Rules: 'key_prefix "" { policy = "read" }', Datacenters: null, Hash: null, CreateIndex: 0, ModifyIndex: 0 };
    const policy = await s.root('PUT', '/v1/acl/policy', sent);
    expect(policy.status).toBe(200);
    const updated = await s.root('PUT', `/v1/acl/policy/${policy.body.ID}`, { ...policy.body, Description: 'changed', Datacenters: null });
    expect([updated.status, updated.body.Description]).toEqual([200, 'changed']);
    const role = await s.root('PUT', '/v1/acl/role', {
      ID: '',
      Name: 'go-role',
      Description: '',
      Policies: [{ ID: policy.body.ID, Name: '' }],
      ServiceIdentities: null,
      TemplatedPolicies: [{ TemplateName: 'builtin/service', TemplateVariables: { Name: 'api' } }],
      Hash: null,
      CreateIndex: 0,
      ModifyIndex: 0,
    });
    expect(role.status).toBe(200);
    expect(role.body.TemplatedPolicies).toEqual([{ TemplateName: 'builtin/service', TemplateVariables: { Name: 'api' } }]);
    const token = await s.root('PUT', '/v1/acl/token', {
      AccessorID: '',
      SecretID: '',
      Description: 'go',
      Local: false,
      CreateTime: '0001-01-01T00:00:00Z',
      Hash: null,
      CreateIndex: 0,
      ModifyIndex: 0,
      TemplatedPolicies: [{ TemplateName: 'builtin/node', TemplateVariables: { Name: 'web-1' } }],
      ExpirationTTL: 3600e9,
    });
    expect(token.status).toBe(200);
    expect(token.body.TemplatedPolicies).toEqual([{ TemplateName: 'builtin/node', TemplateVariables: { Name: 'web-1' } }]);
    // A builtin/node template grants node write to its node, as a node identity does.
    const nodeToken = token.body.SecretID;
    expect((await s.as(nodeToken, 'PUT', '/v1/catalog/register', { Node: 'web-1', Address: '10.0.0.1' })).status).toBe(200);
    expect((await s.as(nodeToken, 'PUT', '/v1/catalog/register', { Node: 'web-2', Address: '10.0.0.2' })).status).toBe(403);
    const check = await s.root('PUT', '/v1/catalog/register', {
      Node: 'web-1',
      Address: '10.0.0.1',
      NodeMeta: { env: 'prod' },
      Service: null,
      Checks: [{
        Node: 'web-1',
        CheckID: 'disk',
        Name: 'disk',
        Status: 'passing',
        ServiceTags: null,
        Type: 'http',
        ExposedPort: 0,
        Definition: { HTTP: 'http://x', Interval: '10s', Header: null },
        CreateIndex: 0,
        ModifyIndex: 0,
      }],
    });
    expect(check.status).toBe(200);
    for (const [path, body, field] of [
      ['/v1/acl/policy', { Name: 'p-x', Colour: 'red' }, 'Colour'],
      ['/v1/catalog/register', { Node: 'n', Address: 'a', Checks: [{ CheckID: 'c', Colour: 'red' }] }, 'Colour'],
      ['/v1/acl/role', { Name: 'r-x', TemplatedPolicies: [{ TemplateName: 'builtin/dns', Extra: 1 }] }, 'Extra'],
    ] as const) {
      const res = await s.root('PUT', path, body);
      expect([res.status, res.text]).toEqual([400, expect.stringContaining(`unknown field "${field}"`)]);
    }
    const badTemplate = await s.root('PUT', '/v1/acl/role', { Name: 'r-y', TemplatedPolicies: [{ TemplateName: 'builtin/nope' }] });
    expect([badTemplate.status, badTemplate.text]).toEqual([400, expect.stringContaining('"builtin/nope"')]);
  });

  test('auth method MaxTokenTTL is answered as a Go duration string', async () => {
    const created = await s.root('PUT', '/v1/acl/auth-method', {
      Name: 'ttl-method', Type: 'jwt', MaxTokenTTL: '10m', Config: { JWTValidationPubKeys: [PUBLIC_KEY] },
    });
    expect([created.status, created.body.MaxTokenTTL]).toEqual([200, '10m0s']);
    expect((await s.root('GET', '/v1/acl/auth-method/ttl-method')).body.MaxTokenTTL).toBe('10m0s');
    expect((await s.root('GET', '/v1/acl/auth-methods')).body.find((m: any) => m.Name === 'ttl-method').MaxTokenTTL).toBe('10m0s');
    // Go's encoding of the duration it read back (nanoseconds) is accepted on update.
    const again = await s.root('PUT', '/v1/acl/auth-method/ttl-method', { ...created.body, MaxTokenTTL: 600e9 });
    expect([again.status, again.body.MaxTokenTTL]).toEqual([200, '10m0s']);
  });

  test('KV flags are exact unsigned 64-bit integers in storage, in JSON out and in ?flags= in', async () => {
    for (const flags of ['3304740253564472344', '16210313421097356768', '18446744073709551615', '0']) {
      const put = await s.root('PUT', `/v1/kv/flags/${flags}?flags=${flags}`, undefined, {});
      expect([put.status, put.text]).toEqual([200, 'true']);
      const got = await s.root('GET', `/v1/kv/flags/${flags}`);
      expect(got.status).toBe(200);
      expect(got.text).toContain(`"Flags":${flags},`);
    }
    const list = await s.root('GET', '/v1/kv/flags/?recurse');
    expect(list.text).toContain('"Flags":18446744073709551615,');
    for (const bad of ['18446744073709551616', '-1', '1.5', 'x']) {
      const res = await s.root('PUT', `/v1/kv/flags/bad?flags=${bad}`);
      expect([res.status, res.text]).toEqual([400, expect.stringContaining('flags')]);
    }
    expect((await s.root('GET', '/v1/kv/flags/bad')).status).toBe(404);
  });

  test('the root token is readable and listed by its accessor; unknown tokens and policies are 404', async () => {
    const self = await s.root('GET', '/v1/acl/token/self');
    const read = await s.root('GET', `/v1/acl/token/${self.body.AccessorID}`);
    expect([read.status, read.body.SecretID, read.body.Policies[0].Name]).toEqual([200, self.body.SecretID, 'global-management']);
    const list = await s.root('GET', '/v1/acl/tokens');
    expect(list.body.map((t: any) => t.AccessorID)).toContain(self.body.AccessorID);
    const other = await s.tokenWithRules('acl = "read"');
    expect((await s.as(other, 'GET', `/v1/acl/token/${self.body.AccessorID}`)).body.SecretID).toBe('<hidden>');
    for (const path of ['/v1/acl/token/8a4d8f51-0d49-4c2b-9df6-3ff7e1e3e0a1', '/v1/acl/policy/8a4d8f51-0d49-4c2b-9df6-3ff7e1e3e0a1', '/v1/acl/policy/name/nope']) {
      const res = await s.root('GET', path);
      expect([res.status, res.text]).toEqual([404, 'ACL not found']);
    }
    // An unknown caller is still 403.
    expect((await s.as('not-a-token', 'GET', '/v1/acl/policies')).status).toBe(403);
  });

  test('catalog and health reads: node-meta, filter, tags, passing; the agent endpoints', async () => {
    await s.root('PUT', '/v1/catalog/register', {
      Node: 'db-1',
      Address: '10.0.1.1',
      NodeMeta: { env: 'prod', rack: 'r1' },
      Service: { ID: 'pg-1', Service: 'pg', Tags: ['primary'], Port: 5432, Meta: { version: '15' } },
      Checks: [{ CheckID: 'pg-alive', Name: 'pg', Status: 'passing', ServiceID: 'pg-1' }],
    });
    await s.root('PUT', '/v1/catalog/register', {
      Node: 'db-2',
      Address: '10.0.1.2',
      NodeMeta: { env: 'test' },
      Service: { ID: 'pg-2', Service: 'pg', Tags: ['replica'], Port: 5432 },
      Checks: [{ CheckID: 'pg-alive', Name: 'pg', Status: 'warning', ServiceID: 'pg-2' }],
    });
    const names = (res: { body: any[] }) => res.body.map((n) => n.Node);
    expect(names(await s.root('GET', '/v1/catalog/nodes?node-meta=env:prod'))).toEqual(['db-1', 'web-1']);
    expect(names(await s.root('GET', '/v1/catalog/nodes?node-meta=env:prod&node-meta=rack:r1'))).toEqual(['db-1']);
    expect(names(await s.root('GET', `/v1/catalog/nodes?filter=${encodeURIComponent('Meta.env == "test" or Node matches "^web"')}`))).toEqual(['db-2', 'web-1']);
    const bad = await s.root('GET', `/v1/catalog/nodes?filter=${encodeURIComponent('Meta.env ==')}`);
    expect([bad.status, bad.text]).toEqual([400, expect.stringMatching(/^Failed to create boolean expression evaluator/)]);
    // Issue 49: the parser recursed per parenthesis and `not`, the evaluation per term of a chain.
    const deep = await s.root('GET', `/v1/catalog/nodes?filter=${'('.repeat(5_000)}Node == "x"${')'.repeat(5_000)}`);
    expect([deep.status, deep.text]).toEqual([400, expect.stringMatching(/^Failed to create boolean expression evaluator: nested deeper than 500 levels/)]);
    const nots = await s.root('GET', `/v1/catalog/nodes?filter=${encodeURIComponent(`${'not '.repeat(1_000)}Node == "x"`)}`);
    expect(nots.status).toBe(400);
    const chain = (op: string) => encodeURIComponent(Array(300).fill('Node == "nobody"').join(` ${op} `) + ` ${op} Node == "db-2"`);
    expect(names(await s.root('GET', `/v1/catalog/nodes?filter=${chain('or')}`))).toEqual(['db-2']);
    expect(names(await s.root('GET', `/v1/catalog/nodes?filter=${chain('and')}`))).toEqual([]);
    const rule = await s.root('PUT', '/v1/acl/binding-rule', { AuthMethod: 'nowhere', BindType: 'service', BindName: 'x', Selector: `${'('.repeat(5_000)}value.a == "x"${')'.repeat(5_000)}` });
    expect(rule.status).toBe(400);

    expect((await s.root('GET', '/v1/catalog/services')).body).toMatchObject({ pg: ['primary', 'replica'] });
    expect((await s.root('GET', `/v1/catalog/services?filter=${encodeURIComponent('"primary" in ServiceTags')}`)).body).toEqual({ pg: ['primary'] });
    const instances = await s.root('GET', '/v1/catalog/service/pg?tag=replica');
    expect(instances.body.map((i: any) => [i.Node, i.ServiceID, i.ServicePort])).toEqual([['db-2', 'pg-2', 5432]]);

    const health = await s.root('GET', '/v1/health/service/pg');
    expect(health.body.map((e: any) => [e.Node.Node, e.Service.ID, e.Checks.map((c: any) => c.CheckID)])).toEqual([
      ['db-1', 'pg-1', ['pg-alive', 'serfHealth']],
      ['db-2', 'pg-2', ['pg-alive', 'serfHealth']],
    ]);
    expect((await s.root('GET', '/v1/health/service/pg?passing')).body.map((e: any) => e.Node.Node)).toEqual(['db-1']);
    expect((await s.root('GET', `/v1/health/service/pg?filter=${encodeURIComponent('Service.Meta.version == "15"')}`)).body).toHaveLength(1);
    expect((await s.root('GET', '/v1/health/state/warning')).body.map((c: any) => [c.Node, c.CheckID])).toEqual([['db-2', 'pg-alive']]);
    expect((await s.root('GET', '/v1/health/state/any?node-meta=env:test')).body.map((c: any) => c.CheckID)).toEqual(['pg-alive', 'serfHealth']);
    expect((await s.root('GET', '/v1/health/state/bogus')).status).toBe(400);
    expect((await s.root('GET', '/v1/health/node/db-1')).body.map((c: any) => c.CheckID)).toEqual(['pg-alive', 'serfHealth']);
    expect((await s.root('GET', '/v1/health/checks/pg')).body).toHaveLength(2);

    const agent = await s.root('GET', '/v1/agent/self');
    expect(agent.body.Config).toMatchObject({ Datacenter: 'dc1', Server: true });
    for (const value of Object.values(agent.body)) expect(typeof value).toBe('object');
    expect((await s.as(await s.tokenWithRules('key_prefix "" { policy = "read" }'), 'GET', '/v1/agent/self')).status).toBe(403);
    expect((await s.as(null, 'GET', '/v1/agent/version')).body.HumanVersion).toMatch(/^1\.\d+\.\d+$/);
    // The Go client's deregistration sends "" for the service and check it does not name: the whole node goes.
    const deregistered = await s.root('PUT', '/v1/catalog/deregister', { Node: 'db-2', Datacenter: '', ServiceID: '', CheckID: '' });
    expect(deregistered.body).toBe(true);
    expect((await s.root('GET', '/v1/catalog/node/db-2')).body).toBeNull();
    // A reader without node:read sees no nodes and no checks.
    const blind = await s.tokenWithRules('service_prefix "" { policy = "read" }');
    expect((await s.as(blind, 'GET', '/v1/catalog/nodes')).body).toEqual([]);
    expect((await s.as(blind, 'GET', '/v1/health/service/pg')).body).toEqual([]);
  });

  test('ACL lists take a filter too', async () => {
    const res = await s.root('GET', `/v1/acl/policies?filter=${encodeURIComponent('Name == "go-policy"')}`);
    expect(res.body.map((p: any) => p.Name)).toEqual(['go-policy']);
    const tokens = await s.root('GET', `/v1/acl/tokens?filter=${encodeURIComponent('Description == "go"')}`);
    expect(tokens.body).toHaveLength(1);
  });

  test('a transaction applies KV operations all or nothing, with the public service\'s result and error shapes', async () => {
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    // Flags beyond 2^53 are sent as exact digits (JSON.stringify cannot write them).
    const raw = `[{"KV":{"Verb":"set","Key":"txn/a","Value":"${b64('1')}","Flags":16210313421097356768}},{"KV":{"Verb":"cas","Key":"txn/b","Value":"${b64('2')}","Index":0}},{"KV":{"Verb":"get","Key":"txn/a"}}]`;
    const done = await s.call('catalog', 'PUT', '/v1/txn', { raw, headers: { 'x-consul-token': 'test-root-token' } });
    expect(done.status).toBe(200);
    expect(done.body.Errors).toBeNull();
    expect(done.body.Results.map((r: any) => [r.KV.Key, r.KV.Value])).toEqual([['txn/a', null], ['txn/b', null], ['txn/a', b64('1')]]);
    expect(done.text).toContain('"Flags":16210313421097356768');

    const before = (await s.root('GET', '/v1/kv/txn/a')).body[0].ModifyIndex;
    const failed = await s.root('PUT', '/v1/txn', [
      { KV: { Verb: 'set', Key: 'txn/a', Value: b64('changed') } },
      { KV: { Verb: 'check-index', Key: 'txn/b', Index: 1 } },
      { KV: { Verb: 'frobnicate', Key: 'txn/c' } },
    ]);
    expect(failed.status).toBe(409);
    expect(failed.body).toEqual({
      Results: null,
      Errors: [
        { OpIndex: 1, What: expect.stringMatching(/^current modify index \d+ != 1$/) },
        { OpIndex: 2, What: 'unknown KV verb "frobnicate"' },
      ],
    });
    // Nothing was written.
    const after = await s.root('GET', '/v1/kv/txn/a');
    expect([after.body[0].ModifyIndex, after.body[0].Value]).toEqual([before, b64('1')]);
    const tooMany = await s.root('PUT', '/v1/txn', Array.from({ length: 129 }, () => ({ KV: { Verb: 'get', Key: 'txn/a' } })));
    expect(tooMany.status).toBe(413);
    const denied = await s.as(await s.tokenWithRules('key_prefix "txn/" { policy = "read" }'), 'PUT', '/v1/txn', [{ KV: { Verb: 'delete', Key: 'txn/a' } }]);
    expect([denied.status, denied.body.Errors[0].What]).toEqual([409, 'Permission denied']);
  });
});

const PUBLIC_KEY = `-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEFfp2HEoojUnfeHaksRgbS+LNnJZf
7whmszI1EFI15zwvRoOW3AoHq4kUSIBs0LQRZAhOrZopXIWlarUYKmnvNA==
-----END PUBLIC KEY-----`;
