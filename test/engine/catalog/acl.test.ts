import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CatalogServer, startCatalogServer } from './helpers';
import { ROOT_TOKEN } from '../../helpers/server';
import { STORAGE_KINDS } from '../../helpers/storage';

describe.each(STORAGE_KINDS)('catalog ACL core (%s)', (kind) => {
  let s: CatalogServer;
  beforeAll(async () => {
    s = await startCatalogServer(kind);
  });
  afterAll(() => s.close());

  test('bootstrap is refused once a management token exists (the root token); the reset file allows one more', async () => {
    const refused = await s.as(null, 'PUT', '/v1/acl/bootstrap');
    expect(refused.status).toBe(403);
    const resetIndex = /reset index: (\d+)\)$/.exec(refused.text)![1];
    writeFileSync(join(s.dataDir, 'acl-bootstrap-reset'), 'not the index\n');
    expect((await s.as(null, 'PUT', '/v1/acl/bootstrap')).status).toBe(403);
    writeFileSync(join(s.dataDir, 'acl-bootstrap-reset'), `${resetIndex}\n`);
    expect((await s.as(null, 'PUT', '/v1/acl/bootstrap', { BootstrapSecret: 'not-a-uuid' })).status).toBe(400);
    const chosen = '6a1b2c3d-1111-4222-8333-944455556666';
    const first = await s.as(null, 'PUT', '/v1/acl/bootstrap', { BootstrapSecret: chosen });
    expect(first.status).toBe(200);
    expect(first.body.SecretID).toBe(chosen);
    expect(first.body).toMatchObject({
      Description: 'Bootstrap Token (Global Management)',
      Policies: [{ ID: '00000000-0000-0000-0000-000000000001', Name: 'global-management' }],
      Local: false,
    });
    expect(first.body.SecretID).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.body.ID).toBe(first.body.SecretID);
    const again = await s.as(null, 'PUT', '/v1/acl/bootstrap');
    expect(again.status).toBe(403);
    expect(again.headers['content-type']).toMatch(/^text\/plain/);
    expect(again.text).toMatch(/^Permission denied: ACL bootstrap no longer allowed \(reset index: \d+\)$/);
    // The bootstrap token manages ACLs.
    const self = await s.as(first.body.SecretID, 'GET', '/v1/acl/token/self');
    expect(self.status).toBe(200);
    expect(self.body.AccessorID).toBe(first.body.AccessorID);
    expect((await s.as(first.body.SecretID, 'GET', '/v1/acl/policies')).status).toBe(200);
  });

  test('the root token is a management token; an unknown token is "ACL not found"', async () => {
    const self = await s.root('GET', '/v1/acl/token/self');
    expect(self.status).toBe(200);
    expect(self.body.Policies).toEqual([{ ID: '00000000-0000-0000-0000-000000000001', Name: 'global-management' }]);
    const unknown = await s.as('no-such-token', 'GET', '/v1/acl/token/self');
    expect(unknown.status).toBe(403);
    expect(unknown.text).toBe('ACL not found');
  });

  test('tokens: create, read, read-self, update, clone, list, delete', async () => {
    const policy = await s.root('PUT', '/v1/acl/policy', { Name: 'kv-read', Rules: 'key_prefix "" { policy = "read" }' });
    expect(policy.status).toBe(200);
    const created = await s.root('PUT', '/v1/acl/token', { Description: 'reader', Policies: [{ Name: 'kv-read' }], ServiceIdentities: [{ ServiceName: 'web' }] });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ Description: 'reader', Policies: [{ ID: policy.body.ID, Name: 'kv-read' }], ServiceIdentities: [{ ServiceName: 'web' }], Local: false, Namespace: 'default' });
    const { AccessorID, SecretID } = created.body;

    // acl:write sees the secret (as the public service shows it); acl:read alone does not.
    const read = await s.root('GET', `/v1/acl/token/${AccessorID}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ AccessorID, SecretID, Description: 'reader' });
    const aclReader = await s.tokenWithRules('acl = "read"');
    expect((await s.as(aclReader, 'GET', `/v1/acl/token/${AccessorID}`)).body).toMatchObject({ AccessorID, SecretID: '<hidden>' });
    expect(read.headers['x-consul-index']).toBe(String(read.body.ModifyIndex >= 1 ? read.headers['x-consul-index'] : ''));

    const self = await s.as(SecretID, 'GET', '/v1/acl/token/self');
    expect(self.body).toMatchObject({ AccessorID, SecretID });

    const updated = await s.root('PUT', `/v1/acl/token/${AccessorID}`, { Description: 'reader 2', Policies: [{ ID: policy.body.ID }] });
    expect(updated.status).toBe(200);
    expect(updated.body.Description).toBe('reader 2');
    expect(updated.body.ServiceIdentities).toBeUndefined();
    expect(updated.body.ModifyIndex).toBeGreaterThan(created.body.ModifyIndex);

    const mismatch = await s.root('PUT', `/v1/acl/token/${AccessorID}`, { AccessorID: '11111111-1111-1111-1111-111111111111' });
    expect(mismatch.status).toBe(400);
    expect(mismatch.text).toBe('Token Accessor ID in URL and payload do not match');

    const clone = await s.root('PUT', `/v1/acl/token/${AccessorID}/clone`, { Description: 'copy' });
    expect(clone.status).toBe(200);
    expect(clone.body.AccessorID).not.toBe(AccessorID);
    expect(clone.body.Policies).toEqual(updated.body.Policies);
    expect(clone.body.Description).toBe('copy');

    const list = await s.root('GET', `/v1/acl/tokens?policy=${policy.body.ID}`);
    expect(list.status).toBe(200);
    expect(list.body.map((t: any) => t.AccessorID).sort()).toEqual([AccessorID, clone.body.AccessorID].sort());

    expect((await s.root('DELETE', `/v1/acl/token/${clone.body.AccessorID}`)).body).toBe(true);
    expect((await s.root('DELETE', `/v1/acl/token/${clone.body.AccessorID}`)).body).toBe(true);
    // The public service answers a missing token with 404 "ACL not found" (403 is for an unknown caller).
    const gone = await s.root('GET', `/v1/acl/token/${clone.body.AccessorID}`);
    expect(gone.status).toBe(404);
    expect(gone.text).toBe('ACL not found');
    expect((await s.as(clone.body.SecretID, 'GET', '/v1/acl/token/self')).status).toBe(403);
  });

  test('policies in HCL and JSON are enforced: exact, prefix, deny, default deny', async () => {
    const hcl = await s.tokenWithRules(`
      # comments are fine
      key_prefix "app/" { policy = "write" }
      key_prefix "app/secret/" { policy = "deny" }
      key "readme" { policy = "read" }
      operator = "read"
    `);
    const jsonToken = await s.tokenWithRules(JSON.stringify({ key_prefix: { 'app/': { policy: 'read' } }, acl: 'read' }));
    expect((await s.as(hcl, 'PUT', '/v1/kv/app/x', 'v')).status).toBe(200);
    const denied = await s.as(hcl, 'PUT', '/v1/kv/app/secret/x', 'v');
    expect(denied.status).toBe(403);
    expect(denied.text).toMatch(/^Permission denied: token with AccessorID '[0-9a-f-]+' lacks permission 'key:write' on "app\/secret\/x"$/);
    expect((await s.as(hcl, 'PUT', '/v1/kv/readme', 'v')).status).toBe(403);
    expect((await s.as(jsonToken, 'PUT', '/v1/kv/app/y', 'v')).status).toBe(403);
    expect((await s.as(jsonToken, 'GET', '/v1/acl/policies')).status).toBe(200);
    expect((await s.as(hcl, 'GET', '/v1/acl/policies')).status).toBe(403);
    const anonymous = await s.as(null, 'GET', '/v1/acl/policies');
    expect(anonymous.status).toBe(403);
    expect(anonymous.text).toBe("Permission denied: anonymous token lacks permission 'acl:read'");
  });

  test('roles carry policies and identities', async () => {
    const policy = await s.root('PUT', '/v1/acl/policy', { Name: 'op-write', Rules: 'operator = "write"' });
    const role = await s.root('PUT', '/v1/acl/role', { Name: 'ops', Policies: [{ Name: 'op-write' }], NodeIdentities: [{ NodeName: 'n1', Datacenter: 'dc1' }] });
    expect(role.status).toBe(200);
    expect(role.body).toMatchObject({ Name: 'ops', Policies: [{ ID: policy.body.ID, Name: 'op-write' }], NodeIdentities: [{ NodeName: 'n1', Datacenter: 'dc1' }] });
    expect((await s.root('GET', '/v1/acl/role/name/ops')).body.ID).toBe(role.body.ID);
    expect((await s.root('GET', '/v1/acl/role/00000000-0000-0000-0000-00000000dead')).status).toBe(404);
    const token = await s.root('PUT', '/v1/acl/token', { Roles: [{ Name: 'ops' }] });
    expect(token.body.Roles).toEqual([{ ID: role.body.ID, Name: 'ops' }]);
    // operator:write through the role: may create a namespace.
    const ns = await s.as(token.body.SecretID, 'PUT', '/v1/namespace', { Name: 'from-role' });
    expect([200, 404]).toContain(ns.status);
  });

  test('bad input is refused with 400 and a textual error, and nothing is written', async () => {
    const before = (await s.root('GET', '/v1/acl/policies')).body.length;
    const cases: [string, string, unknown, RegExp][] = [
      ['PUT', '/v1/acl/policy', { Name: 'x', Bogus: 1 }, /unknown field "Bogus"/],
      ['PUT', '/v1/acl/policy', { Name: 5 }, /Name/],
      ['PUT', '/v1/acl/policy', { Name: 'bad name!' }, /^Invalid Policy: invalid Name/],
      ['PUT', '/v1/acl/policy', { Name: 'bad-rules', Rules: 'key_prefix "" { policy = "sometimes" }' }, /^Invalid Policy: Invalid key_prefix policy: "sometimes"/],
      ['PUT', '/v1/acl/policy', { Name: 'bad-hcl', Rules: 'key_prefix "" { policy = ' }, /^Invalid Policy: Failed to parse ACL rules/],
      ['PUT', '/v1/acl/policy', { Name: 'bad-resource', Rules: 'database "x" { policy = "read" }' }, /unknown resource "database"/],
      ['PUT', '/v1/acl/token', { Policies: [{ Name: 'no-such-policy' }] }, /^No such ACL policy with name "no-such-policy"$/],
      ['PUT', '/v1/acl/token', { ServiceIdentities: [{ ServiceName: 'Not Valid' }] }, /invalid name/],
      ['PUT', '/v1/acl/token', { ExpirationTTL: '5s' }, /should be between 1m0s and 24h0m0s/],
      ['PUT', '/v1/acl/token', { Rules: 'key "" {}' }, /^Rules cannot be specified for this token$/],
      ['PUT', '/v1/acl/token', { Rulez: 'key "" {}' }, /unknown field "Rulez"/],
      ['PUT', '/v1/acl/role', { Name: 'r', ServiceIdentities: [{ ServiceName: 'ok', Extra: true }] }, /unknown field "Extra"/],
    ];
    for (const [method, path, body, message] of cases) {
      const res = await s.root(method, path, body);
      expect([res.status, res.text]).toEqual([400, expect.stringMatching(message)]);
    }
    const raw = await s.call('catalog', 'PUT', '/v1/acl/policy', { raw: '{"Name":', headers: { 'x-consul-token': 'test-root-token' } });
    expect(raw.status).toBe(400);
    expect(raw.text).toMatch(/^Request decode failed/);
    expect((await s.root('GET', '/v1/acl/policies')).body.length).toBe(before);
  });

  test('field names match without regard to case, as Go decodes them', async () => {
    const res = await s.root('PUT', '/v1/acl/policy', { name: 'lowercase-fields', rules: 'operator = "read"' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ Name: 'lowercase-fields', Rules: 'operator = "read"' });
  });

  test('the legacy ACL endpoints answer 410 Gone; another datacenter has no path', async () => {
    for (const [method, path] of [['PUT', '/v1/acl/create'], ['GET', '/v1/acl/list'], ['GET', '/v1/acl/info/abc'], ['PUT', '/v1/acl/clone/abc']]) {
      const res = await s.root(method, path);
      expect(res.status).toBe(410);
      expect(res.text).toMatch(/legacy ACL system was removed in version 1\.11\.0/);
    }
    const dc = await s.root('GET', '/v1/acl/policies?dc=dc2');
    expect([dc.status, dc.text]).toEqual([500, 'No path to datacenter']);
    expect((await s.root('GET', '/v1/acl/policies?dc=dc1')).status).toBe(200);
    // Issue 49: nothing else of such a request is processed: no write, whatever the body.
    for (const [method, path, body] of [
      ['PUT', '/v1/kv/dc-elsewhere?dc=dc2', 'value'],
      ['PUT', '/v1/acl/policy?dc=dc2&dc=dc1', JSON.stringify({ Name: 'dc-elsewhere' })],
      ['PUT', '/v1/catalog/register?dc=dc2', `${'['.repeat(5_000)}${']'.repeat(5_000)}`],
      ['PUT', '/v1/session/create?dc=dc2', JSON.stringify({ Node: 'nowhere' })],
    ]) {
      const res = await s.call('catalog', method, path, { raw: body, headers: { 'x-consul-token': ROOT_TOKEN } });
      expect({ path, status: res.status, text: res.text }).toEqual({ path, status: 500, text: 'No path to datacenter' });
    }
    expect((await s.root('GET', '/v1/kv/dc-elsewhere')).status).toBe(404);
    expect((await s.root('GET', '/v1/acl/policy/name/dc-elsewhere')).status).toBe(404);
    expect((await s.root('GET', '/v1/acl/policies?dc=dc1&dc=dc2')).status).toBe(200);
  });

  test('a change of a policy, a role, a token or a namespace default applies to the next request of a token in use', async () => {
    // Authorizers are cached by token version and ACL indexes: every change must still show at once.
    expect((await s.root('PUT', '/v1/kv/cache/a', 'v')).status).toBe(200);
    const policy = await s.root('PUT', '/v1/acl/policy', { Name: 'cache-read', Rules: 'key_prefix "cache/" { policy = "read" }' });
    const role = await s.root('PUT', '/v1/acl/role', { Name: 'cache-role', Policies: [{ ID: policy.body.ID }] });
    const token = await s.root('PUT', '/v1/acl/token', { Roles: [{ ID: role.body.ID }] });
    const read = async () => (await s.as(token.body.SecretID, 'GET', '/v1/kv/cache/a')).status;
    expect(await read()).toBe(200);
    await s.root('PUT', `/v1/acl/policy/${policy.body.ID}`, { Name: 'cache-read', Rules: 'key_prefix "cache/" { policy = "deny" }' });
    expect(await read()).toBe(403);
    await s.root('PUT', `/v1/acl/policy/${policy.body.ID}`, { Name: 'cache-read', Rules: 'key_prefix "cache/" { policy = "read" }' });
    expect(await read()).toBe(200);
    await s.root('PUT', `/v1/acl/role/${role.body.ID}`, { Name: 'cache-role', Policies: [] });
    expect(await read()).toBe(403);
    await s.root('PUT', `/v1/acl/token/${token.body.AccessorID}`, { Policies: [{ ID: policy.body.ID }] });
    expect(await read()).toBe(200);
    await s.root('PUT', `/v1/acl/token/${token.body.AccessorID}`, { Policies: [] });
    expect(await read()).toBe(403);
    // The default namespace's default policies apply to its tokens too.
    await s.root('PUT', '/v1/namespace/default', { ACLs: { PolicyDefaults: [{ ID: policy.body.ID }] } });
    expect(await read()).toBe(200);
    await s.root('PUT', '/v1/namespace/default', { ACLs: { PolicyDefaults: [] } });
    expect(await read()).toBe(403);
  });

  test('the builtin management policy and the anonymous token are protected', async () => {
    const del = await s.root('DELETE', '/v1/acl/policy/00000000-0000-0000-0000-000000000001');
    expect([del.status, del.text]).toEqual([400, 'Delete operation not permitted on the builtin global-management policy']);
    const anon = await s.root('DELETE', '/v1/acl/token/00000000-0000-0000-0000-000000000002');
    expect(anon.status).toBe(400);
    const gm = await s.root('GET', '/v1/acl/policy/name/global-management');
    expect(gm.body.ID).toBe('00000000-0000-0000-0000-000000000001');
  });
});

describe('catalog default policy allow', () => {
  test('allows what no rule decides, except ACL management', async () => {
    const s = await startCatalogServer('sqlite', { defaultPolicy: 'allow' });
    try {
      expect((await s.as(null, 'PUT', '/v1/kv/open', 'v')).status).toBe(200);
      expect((await s.as(null, 'GET', '/v1/acl/policies')).status).toBe(403);
      const limited = await s.tokenWithRules('key_prefix "locked/" { policy = "deny" }');
      expect((await s.as(limited, 'PUT', '/v1/kv/locked/a', 'v')).status).toBe(403);
      expect((await s.as(limited, 'PUT', '/v1/kv/other', 'v')).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
