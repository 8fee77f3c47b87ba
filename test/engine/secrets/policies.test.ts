import { startSecrets, SecretsTestServer } from './helpers';
import { mountTestEngine } from './test-engine';
import { Acl, DEFAULT_POLICY_TEXT, parsePolicy } from '../../../src/engine/secrets/core/policies';
import { STORAGE_KINDS } from '../../helpers/storage';

const acl = (text: string) => new Acl([{ name: 'p', text, rules: parsePolicy(text) }]);

describe('policy language', () => {
  test('HCL blocks, comments, old-style policy, JSON form', () => {
    const hcl = `
      # comment
      path "secret/*" { capabilities = ["read", "list"] } // another
      /* block
         comment */
      path "secret/super" {
        capabilities = ["create", "read", "update", "delete", "list", "sudo"]
        allowed_parameters = { "ttl" = [] }
      }
      path "old/*" { policy = "write" }`;
    expect(parsePolicy(hcl)).toEqual([
      { path: 'secret/*', capabilities: ['read', 'list'] },
      { path: 'secret/super', capabilities: ['create', 'read', 'update', 'delete', 'list', 'sudo'], parameters: { allowed: { ttl: [] } } },
      { path: 'old/*', capabilities: ['create', 'read', 'update', 'delete', 'list'] },
    ]);
    expect(parsePolicy('{"path": {"a/+/b": {"capabilities": ["deny", "read"]}}}')).toEqual([{ path: 'a/+/b', capabilities: ['deny'] }]);
    expect(parsePolicy(DEFAULT_POLICY_TEXT).length).toBeGreaterThan(5);
  });

  test('errors name the problem and the line', () => {
    expect(() => parsePolicy('path "a" { capabilities = ["fly"] }')).toThrow(/invalid capability "fly"/);
    expect(() => parsePolicy('path "a" {\n capabilities = [read] }')).toThrow(/line 2: unexpected "read": strings need double quotes/);
    expect(() => parsePolicy('path "a/*/b" { capabilities = ["read"] }')).toThrow(/only allowed at the end/);
    expect(() => parsePolicy('path "a/x+/b" { capabilities = ["read"] }')).toThrow(/whole path segment/);
    expect(() => parsePolicy('path "a" { capabilities = ["read"]')).toThrow(/missing "}"/);
    expect(() => parsePolicy('paths "a" { }')).toThrow(/unknown top-level key "paths"/);
    expect(() => parsePolicy('{"path": ')).toThrow(/not valid JSON/);
  });

  test('globs, + segments and Vault priority', () => {
    const a = acl(`
      path "secret/*" { capabilities = ["read"] }
      path "secret/+/config" { capabilities = ["update"] }
      path "secret/team/config" { capabilities = ["delete"] }
      path "secret/team/*" { capabilities = ["list"] }
      path "secret/deny/*" { capabilities = ["deny"] }
      path "kv/+/+/x" { capabilities = ["create"] }
      path "kv/a/+/x" { capabilities = ["read"] }
    `);
    expect(a.capabilities('secret/foo')).toEqual(['read']);
    expect(a.capabilities('secret/foo/bar/baz')).toEqual(['read']);
    expect(a.capabilities('secret/app/config')).toEqual(['update']);
    expect(a.capabilities('secret/team/config')).toEqual(['delete']);
    expect(a.capabilities('secret/team/other')).toEqual(['list']);
    expect(a.capabilities('secret/deny/x')).toEqual(['deny']);
    expect(a.capabilities('secret')).toEqual(['deny']);
    expect(a.capabilities('kv/a/b/x')).toEqual(['read']);
    expect(a.capabilities('kv/z/b/x')).toEqual(['create']);
    expect(a.capabilities('kv/z/b/y')).toEqual(['deny']);
    expect(a.allows('secret/foo', 'read')).toBe(true);
    expect(a.allows('secret/foo', 'update')).toBe(false);
  });

  test('policies merge per path and deny wins', () => {
    const merged = new Acl([
      { name: 'a', text: '', rules: parsePolicy('path "x/*" { capabilities = ["read"] }') },
      { name: 'b', text: '', rules: parsePolicy('path "x/*" { capabilities = ["list"] }\npath "y" { capabilities = ["read"] }') },
      { name: 'c', text: '', rules: parsePolicy('path "y" { capabilities = ["deny"] }') },
    ]);
    expect(merged.capabilities('x/1')).toEqual(['list', 'read']);
    expect(merged.capabilities('y')).toEqual(['deny']);
  });

  test('parameter constraints: allowed, denied, required, globs, lists (as Vault)', () => {
    const a = acl(`path "t/*" {
      capabilities = ["create", "update", "read"]
      allowed_parameters = { "Name" = ["app-*", "*-svc", "exact"], "ttl" = [], "count" = [3] }
      denied_parameters = { "name" = ["app-admin"] }
      required_parameters = ["name"]
    }`);
    const ok = (body: unknown, cap: 'create' | 'update' | 'read' = 'update') => a.allows('t/x', cap, body);
    expect(ok({ name: 'app-web' })).toBe(true);
    expect(ok({ NAME: 'db-svc', ttl: '1h', count: 3 })).toBe(true);
    expect(ok({ name: 'exact' }, 'create')).toBe(true);
    expect(ok({ name: 'other' })).toBe(false); // value not allowed
    expect(ok({ name: 'app-admin' })).toBe(false); // denied wins over the allowed glob
    expect(ok({ name: 'app-web', extra: 1 })).toBe(false); // parameter not allowed
    expect(ok({ name: 'app-web', count: 4 })).toBe(false);
    expect(ok({ ttl: '1h' })).toBe(false); // required parameter missing
    expect(ok({})).toBe(false);
    expect(ok(['name'])).toBe(false);
    expect(ok({ name: ['app-a', 'exact'] })).toBe(true); // a list: every element allowed
    expect(ok({ name: ['app-a', 'app-admin'] })).toBe(false); // ... and none denied
    expect(ok({ name: 'exact,other' })).toBe(false); // a comma-separated string is a list
    expect(ok({ name: 'exact, app-b' })).toBe(true);
    expect(ok({ name: 'x' }, 'read')).toBe(true); // only create and update are checked
    expect(a.allows('t/x', 'update')).toBe(true); // no body given: capabilities only

    const open = acl('path "o" { capabilities = ["update"] \n allowed_parameters = { "*" = [] } \n denied_parameters = { "policies" = ["root", "admin*"] } }');
    expect(open.allows('o', 'update', { anything: 1, policies: ['dev'] })).toBe(true);
    expect(open.allows('o', 'update', { policies: ['dev', 'Admin-2'] })).toBe(false); // policy names compared lowercased
    expect(open.allows('o', 'update', { policies: 'dev,ROOT' })).toBe(false);
    expect(open.allows('o', 'update', {})).toBe(true); // no data: allowed
    expect(open.allows('o', 'update', { constructor: 1 })).toBe(true);

    const none = acl('path "n" { capabilities = ["update"] \n denied_parameters = { "*" = [] } }');
    expect(none.allows('n', 'update', { a: 1 })).toBe(false);
    expect(none.allows('n', 'update', {})).toBe(true);

    // Merged policies: value lists append; an empty list (any value) wins; required ones add up.
    const merged = new Acl([
      { name: 'a', text: '', rules: parsePolicy('path "m" { capabilities = ["update"] \n allowed_parameters = { "x" = ["1"] } }') },
      { name: 'b', text: '', rules: parsePolicy('path "m" { capabilities = ["update"] \n allowed_parameters = { "x" = ["2"], "y" = [] } \n required_parameters = ["y"] }') },
    ]);
    expect(merged.allows('m', 'update', { x: '2', y: 'z' })).toBe(true);
    expect(merged.allows('m', 'update', { x: '1' })).toBe(false);
    expect(merged.allows('m', 'update', { x: '3', y: 'z' })).toBe(false);

    expect(() => parsePolicy('path "a" { allowed_parameters = ["x"] }')).toThrow(/allowed_parameters must be a map/);
    expect(() => parsePolicy('path "a" { denied_parameters = { "x" = "y" } }')).toThrow(/denied_parameters."x" must be a list/);
    expect(() => parsePolicy('path "a" { required_parameters = "x" }')).toThrow(/required_parameters must be a list/);
  });
});

describe.each(STORAGE_KINDS)('sys/policies and enforcement (%s)', (kind) => {
  let s: SecretsTestServer;
  beforeAll(async () => {
    s = await startSecrets(kind);
    await mountTestEngine(s.engine, s.v);
  });
  afterAll(() => s.close());

  test('sys/policies/acl: write, read, list, delete; names are case-insensitive', async () => {
    const text = 'path "test/*" { capabilities = ["read"] }';
    expect((await s.v('PUT', 'sys/policies/acl/Reader', { policy: text })).status).toBe(204);
    const read = await s.v('GET', 'sys/policies/acl/reader');
    expect(read.body.data).toEqual({ name: 'reader', policy: text });
    const list = await s.v('LIST', 'sys/policies/acl');
    expect(list.body.data.keys).toEqual(expect.arrayContaining(['default', 'reader', 'root']));
    const viaQuery = await s.v('GET', 'sys/policies/acl?list=true');
    expect(viaQuery.body.data.keys).toEqual(list.body.data.keys);
    expect((await s.v('GET', 'sys/policies/acl/default')).body.data.policy).toContain('auth/token/lookup-self');
    expect((await s.v('DELETE', 'sys/policies/acl/reader')).status).toBe(204);
    expect((await s.v('GET', 'sys/policies/acl/reader')).status).toBe(404);
  });

  test('sys/policy, the older paths clients use', async () => {
    expect((await s.v('PUT', 'sys/policy/legacy', { rules: 'path "test/*" { capabilities = ["list"] }' })).status).toBe(204);
    const one = await s.v('GET', 'sys/policy/legacy');
    expect(one.body).toMatchObject({ name: 'legacy', rules: 'path "test/*" { capabilities = ["list"] }' });
    const all = await s.v('GET', 'sys/policy');
    expect(all.body.policies).toEqual(expect.arrayContaining(['default', 'legacy', 'root']));
    expect(all.body.data.keys).toEqual(all.body.policies);
    expect((await s.v('DELETE', 'sys/policy/legacy')).status).toBe(204);
  });

  test('bad policies and reserved names: clear errors, nothing stored', async () => {
    const bad = await s.v('PUT', 'sys/policies/acl/broken', { policy: 'path "a" { capabilities = ["fly"] }' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/failed to parse policy: .*invalid capability "fly"/);
    expect((await s.v('GET', 'sys/policies/acl/broken')).status).toBe(404);
    expect((await s.v('PUT', 'sys/policies/acl/x', {})).body.errors[0]).toMatch(/policy is required/);
    expect((await s.v('PUT', 'sys/policies/acl/x', { policy: 7 })).body.errors[0]).toMatch(/^policy/);
    expect((await s.v('PUT', 'sys/policies/acl/root', { policy: '' })).body.errors[0]).toMatch(/cannot update the root policy/);
    expect((await s.v('DELETE', 'sys/policies/acl/default')).body.errors[0]).toMatch(/cannot delete the default policy/);
    expect((await s.v('PUT', 'sys/policies/acl/bad name!', { policy: '' })).body.errors[0]).toMatch(/policy name "bad name!" is invalid/);
    expect((await s.v('PUT', 'sys/policies/acl/huge', { policy: `# ${'x'.repeat(300 * 1024)}` })).status).toBe(400);
  });

  test('create and update are told apart by whether the target exists', async () => {
    await s.v('PUT', 'test/items/existing', { value: '1' });
    const creator = await s.tokenWith('path "test/items/*" { capabilities = ["create", "read"] }');
    const updater = await s.tokenWith('path "test/items/*" { capabilities = ["update", "read"] }');
    expect((await s.v('PUT', 'test/items/fresh', { value: 'c' }, creator)).status).toBe(204);
    expect((await s.v('PUT', 'test/items/existing', { value: 'c' }, creator)).status).toBe(403);
    expect((await s.v('PUT', 'test/items/new2', { value: 'u' }, updater)).status).toBe(403);
    expect((await s.v('PUT', 'test/items/existing', { value: 'u' }, updater)).status).toBe(204);
    expect((await s.v('GET', 'test/items/existing', undefined, updater)).body.data).toEqual({ value: 'u' });
    expect((await s.v('GET', 'test/items/new2')).status).toBe(404);
  });

  test('list needs list on the path with a trailing slash; + and * in real requests', async () => {
    const lister = await s.tokenWith('path "test/items/" { capabilities = ["list"] }\npath "test/+/existing" { capabilities = ["read"] }');
    expect((await s.v('LIST', 'test/items', undefined, lister)).body.data.keys).toEqual(expect.arrayContaining(['existing']));
    expect((await s.v('GET', 'test/items?list=true', undefined, lister)).status).toBe(200);
    expect((await s.v('GET', 'test/items/existing', undefined, lister)).status).toBe(200);
    expect((await s.v('GET', 'test/items/fresh', undefined, lister)).status).toBe(403);
  });

  test('sys/capabilities-self, sys/capabilities and sys/capabilities-accessor', async () => {
    const token = await s.tokenWith(
      'path "test/items/*" { capabilities = ["read", "list"] }\npath "test/deny" { capabilities = ["deny"] }\npath "sys/capabilities-self" { capabilities = ["update"] }',
    );
    const one = await s.v('POST', 'sys/capabilities-self', { path: 'test/items/a' }, token);
    expect(one.body.capabilities).toEqual(['list', 'read']);
    expect(one.body.data['test/items/a']).toEqual(['list', 'read']);
    const many = await s.v('POST', 'sys/capabilities-self', { paths: ['test/items/a', 'test/deny', 'elsewhere'] }, token);
    expect(many.body.data).toMatchObject({ 'test/items/a': ['list', 'read'], 'test/deny': ['deny'], 'elsewhere': ['deny'] });
    expect((await s.v('POST', 'sys/capabilities-self', { paths: ['x'] })).body.capabilities).toEqual(['root']);
    const other = await s.v('POST', 'sys/capabilities', { token, paths: ['test/items/b'] });
    expect(other.body.capabilities).toEqual(['list', 'read']);
    const accessor = (await s.v('POST', 'auth/token/lookup', { token: await s.tokenWith(undefined) })).body.data.accessor;
    const viaAccessor = await s.v('POST', 'sys/capabilities-accessor', { accessor, paths: ['test/items/b'] });
    expect(viaAccessor.body.capabilities).toEqual(['deny']);
    expect((await s.v('POST', 'sys/capabilities-self', {}, token)).body.errors[0]).toMatch(/paths is required/);
    // Without the default policy the token may not even ask.
    expect((await s.v('POST', 'sys/capabilities-self', { path: 'x' }, await s.tokenWith(undefined))).status).toBe(403);
  });

  test('parameter constraints are enforced on writes: 403 and nothing stored', async () => {
    const token = await s.tokenWith(
      'path "test/items/*" { capabilities = ["create", "update", "read"] \n allowed_parameters = { "value" = ["ok-*"] } }\n' +
        'path "auth/token/create" { capabilities = ["update"] \n denied_parameters = { "no_default_policy" = [] } }',
      { no_default_policy: false },
    );
    expect((await s.v('PUT', 'test/items/param', { value: 'ok-1' }, token)).status).toBe(204);
    const refused = await s.v('PUT', 'test/items/param', { value: 'bad' }, token);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ errors: ['permission denied'] });
    expect((await s.v('PUT', 'test/items/param2', { value: 'ok-2', other: 'x' }, token)).status).toBe(403);
    expect((await s.v('GET', 'test/items/param2')).status).toBe(404);
    expect((await s.v('GET', 'test/items/param', undefined, token)).body.data).toEqual({ value: 'ok-1' });
    expect((await s.v('POST', 'auth/token/create', { ttl: '1h' }, token)).status).toBe(200);
    expect((await s.v('POST', 'auth/token/create', { no_default_policy: true }, token)).status).toBe(403);
  });

  test('a policy change applies to existing tokens at once', async () => {
    await s.v('PUT', 'sys/policies/acl/live', { policy: 'path "test/items/*" { capabilities = ["read"] }' });
    const token = (await s.v('POST', 'auth/token/create', { policies: ['live'] })).body.auth.client_token;
    expect((await s.v('GET', 'test/items/existing', undefined, token)).status).toBe(200);
    await s.v('PUT', 'sys/policies/acl/live', { policy: 'path "other/*" { capabilities = ["read"] }' });
    expect((await s.v('GET', 'test/items/existing', undefined, token)).status).toBe(403);
    await s.v('DELETE', 'sys/policies/acl/live');
    expect((await s.v('GET', 'test/items/existing', undefined, token)).status).toBe(403);
  });
});
