import http from 'node:http';
import { ApiName } from '../../../src/engine/http/api';
import { jsonLimitBroken, MAX_JSON_DEPTH, MAX_JSON_WIDTH } from '../../../src/engine/http/json-body';
import { ROOT_TOKEN, startTestServer, TestServer } from '../../helpers/server';
import { STORAGE_KINDS } from '../../helpers/storage';

/** One request on `agent`; `reused` tells whether it went over a kept-alive socket. */
function send(agent: http.Agent, url: string, method: string, body: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; reused: boolean; text: string }>((resolve, reject) => {
    const req = http.request(url, { agent, method, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, reused: req.reusedSocket, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const auth = { 'x-registry-token': ROOT_TOKEN, 'x-vault-token': ROOT_TOKEN, 'x-consul-token': ROOT_TOKEN };

/** Issue 18, "seen to fail": hostile input is a 4xx naming the field, and leaves the connection usable. */
describe.each(STORAGE_KINDS)('hardening: hostile input (%s)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server.close());

  describe('a lone UTF-16 surrogate is a 400 naming the field, in all three APIs', () => {
    const raw = (json: string) => ({ raw: json, headers: { 'content-type': 'application/json', ...auth } });
    test.each([
      ['secrets', 'POST', '/v1/identity/group', '{"name":"\\ud800"}', /body\.name: must be well-formed Unicode/],
      ['secrets', 'POST', '/v1/identity/group', '{"name":"g","metadata":{"k":"x\\udfff"}}', /body\.metadata\.k: must be well-formed Unicode/],
      ['catalog', 'PUT', '/v1/acl/role', '{"Name":"\\ud800"}', /body\.Name: must be well-formed Unicode/],
      ['catalog', 'PUT', '/v1/catalog/register', '{"Node":"n","Address":"a","NodeMeta":{"\\ud800":"v"}}', /body\.NodeMeta \(a field name\)/],
      ['registry', 'POST', '/api/v1/boxes', '{"box":{"username":"x","name":"\\udc00"}}', /body\.box\.name: must be well-formed Unicode/],
    ] as const)('%s %s %s %s', async (api, method, path, body, message) => {
      const res = await server.call(api as ApiName, method, path, raw(body));
      expect(res.status).toBe(400);
      expect(res.text).toMatch(message);
    });

    test.each([
      ['secrets', '/v1/secret/data/%ED%A0%80?x=%ED%A0%80'],
      ['catalog', '/v1/kv/%ED%A0%80?x=%ED%A0%80'],
      ['catalog', '/v1/catalog/node/%ED%A0%80'],
      ['registry', '/api/v1/box/%ED%A0%80/x?q=%ED%A0%80'],
    ] as const)('a surrogate encoded in UTF-8 in the URL is no 5xx: %s %s', async (api, path) => {
      const res = await server.call(api, 'GET', path, { headers: auth });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    });

    test('a surrogate pair (an emoji) is well-formed and accepted', async () => {
      const res = await server.call('secrets', 'POST', '/v1/identity/group', raw('{"name":"team-\\ud83d\\ude80"}'));
      expect(res.status).toBe(200);
      expect(res.body.data.name).toBe('team-\u{1f680}');
    });

    test('a deeply nested body is checked without overflowing the stack', async () => {
      const depth = MAX_JSON_DEPTH;
      const res = await server.call('secrets', 'POST', '/v1/identity/group', raw(`${'['.repeat(depth)}"\\ud800"${']'.repeat(depth)}`));
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual(['body.0.0.0.0.0.….0.0.0.0.0: must be well-formed Unicode (it holds a lone UTF-16 surrogate)']);
    });

    test("JSON nested deeper than Vault's max_json_depth is refused before it is parsed, in all three APIs", async () => {
      // 400,000 levels fit in 1 MiB; parsed, each such body held ~100 MB of heap while it was checked.
      for (const depth of [400_000, MAX_JSON_DEPTH + 1]) {
        const deep = raw(`${'['.repeat(depth)}${']'.repeat(depth)}`);
        const message = `Request body is not valid JSON (nested deeper than ${MAX_JSON_DEPTH} levels)`;
        const secrets = await server.call('secrets', 'POST', '/v1/identity/group', deep);
        const catalog = await server.call('catalog', 'PUT', '/v1/catalog/register', deep);
        const registry = await server.call('registry', 'POST', '/api/v1/boxes', deep);
        expect([secrets.status, secrets.body.errors]).toEqual([400, [message]]);
        expect([catalog.status, catalog.text]).toEqual([400, `Request decode failed: nested deeper than ${MAX_JSON_DEPTH} levels`]);
        expect([registry.status, registry.body.errors]).toEqual([400, [message]]);
      }
      // Strings holding brackets do not count, and a body as deep as the limit is parsed.
      expect(jsonLimitBroken(Buffer.from(`["${'['.repeat(20_000)}\\"["]`))).toBeUndefined();
      expect(jsonLimitBroken(Buffer.from(`${'{"a":'.repeat(MAX_JSON_DEPTH)}1${'}'.repeat(MAX_JSON_DEPTH)}`))).toBeUndefined();
      expect(jsonLimitBroken(Buffer.from(`${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1${'}'.repeat(MAX_JSON_DEPTH + 1)}`))).toBe(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    });

    // Issue 49: the pass that drops nulls recursed, and 4,000 nested objects overflowed the stack (500).
    test('a secrets write as deep as the limit, nulls at every level, is stored, patched and read back', async () => {
      const nest = (depth: number, leaf: unknown) => {
        let v = leaf;
        for (let i = 0; i < depth; i++) v = { a: v, gone: null };
        return v;
      };
      // `{"data": ...}` is one level, KV v2's `data` object another.
      const path = '/v1/secret/data/deep';
      const write = await server.call('secrets', 'POST', path, { body: { data: nest(MAX_JSON_DEPTH - 2, 'leaf') }, headers: auth });
      expect(write.status).toBe(200);
      const patch = await server.call('secrets', 'PATCH', path, {
        raw: JSON.stringify({ data: nest(MAX_JSON_DEPTH - 2, 'patched') }),
        headers: { ...auth, 'content-type': 'application/merge-patch+json' },
      });
      expect(patch.status).toBe(200);
      const read = await server.call('secrets', 'GET', path, { headers: auth });
      let v = read.body.data.data;
      for (let i = 0; i < MAX_JSON_DEPTH - 2; i++) v = v.a;
      expect(v).toBe('patched');
      const deeper = await server.call('secrets', 'POST', path, { body: { data: nest(4_000, 'leaf') }, headers: auth });
      expect([deeper.status, deeper.body.errors]).toEqual([400, [`Request body is not valid JSON (nested deeper than ${MAX_JSON_DEPTH} levels)`]]);
      // A form body holding JSON (curl -d) meets the same limit.
      const form = await server.call('secrets', 'POST', path, { raw: JSON.stringify({ data: nest(4_000, 'leaf') }), headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' } });
      expect([form.status, form.body.errors]).toEqual([400, [`Request body is not valid JSON (nested deeper than ${MAX_JSON_DEPTH} levels)`]]);
    });

    test("an array or object wider than Vault's max_json_array_element_count is refused, in all three APIs", async () => {
      const wide = raw(JSON.stringify({ items: Array.from({ length: MAX_JSON_WIDTH + 1 }, () => 1) }));
      const message = `Request body is not valid JSON (an array or object holds more than ${MAX_JSON_WIDTH} items)`;
      const secrets = await server.call('secrets', 'POST', '/v1/identity/group', wide);
      const catalog = await server.call('catalog', 'PUT', '/v1/catalog/register', wide);
      const registry = await server.call('registry', 'POST', '/api/v1/boxes', wide);
      expect([secrets.status, secrets.body.errors]).toEqual([400, [message]]);
      expect([catalog.status, catalog.text]).toEqual([400, `Request decode failed: an array or object holds more than ${MAX_JSON_WIDTH} items`]);
      expect([registry.status, registry.body.errors]).toEqual([400, [message]]);
      const keys = Object.fromEntries(Array.from({ length: MAX_JSON_WIDTH + 1 }, (_, i) => [`k${i}`, 1]));
      expect(jsonLimitBroken(Buffer.from(JSON.stringify(keys)))).toBe(`an array or object holds more than ${MAX_JSON_WIDTH} items`);
      // Exactly the limit, and commas inside strings or spread over sibling containers, pass.
      expect(jsonLimitBroken(Buffer.from(JSON.stringify(Array.from({ length: MAX_JSON_WIDTH }, () => 1))))).toBeUndefined();
      expect(jsonLimitBroken(Buffer.from(JSON.stringify([','.repeat(MAX_JSON_WIDTH * 2)])))).toBeUndefined();
      expect(jsonLimitBroken(Buffer.from(JSON.stringify([Array(6000).fill(1), Array(6000).fill(1)])))).toBeUndefined();
    });

    test('rules and policies nested deeper than the limit are a 400, in HCL and in JSON', async () => {
      const hcl = `a = ${'['.repeat(100_000)}${']'.repeat(100_000)}`;
      const labels = `key_prefix ${'"x" '.repeat(MAX_JSON_DEPTH + 1)}{ policy = "read" }`;
      const json = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
      for (const Rules of [hcl, labels, json]) {
        const res = await server.call('catalog', 'PUT', '/v1/acl/policy', { body: { Name: 'deep', Rules }, headers: auth });
        expect([res.status, res.text]).toEqual([400, expect.stringMatching(new RegExp(`^Invalid Policy: Failed to parse ACL rules: .*nested deeper than ${MAX_JSON_DEPTH} levels`))]);
      }
      const policy = await server.call('secrets', 'PUT', '/v1/sys/policies/acl/deep', { body: { policy: `path "x" { capabilities = ${'['.repeat(100_000)}${']'.repeat(100_000)} }` }, headers: auth });
      expect(policy.status).toBe(400);
      expect(policy.body.errors.join(' ')).toMatch(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    });
  });

  describe('concurrent registers of one node never fail', () => {
    test('20 at once, with a service and a check: all 200, one node, one service', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          server.call('catalog', 'PUT', '/v1/catalog/register', {
            body: { Node: 'racer', ID: '40e4a748-2192-161a-0510-9bf59fe950b5', Address: `10.0.0.${i}`, Service: { Service: 'web', Port: 80 + i }, Check: { CheckID: 'up', Status: 'passing' } },
            headers: auth,
          }),
        ),
      );
      expect(results.map((r) => `${r.status} ${r.text}`)).toEqual(Array(20).fill('200 true'));
      const services = await server.call('catalog', 'GET', '/v1/catalog/service/web', { headers: auth });
      expect(services.body.map((s: { Node: string }) => s.Node)).toEqual(['racer']);
    });

    test("a node named like another node's ID is registered under its own name", async () => {
      const register = (body: object) => server.call('catalog', 'PUT', '/v1/catalog/register', { body, headers: auth });
      // Node IDs are UUIDs (the public service refuses others): the second node is named like one.
      const second = '5c0b7e43-3f0e-4b9a-9d4e-2f1c0a6b8d71';
      expect((await register({ Node: 'first', ID: second, Address: '10.0.1.1' })).status).toBe(200);
      const res = await register({ Node: second, Address: '10.0.1.2', Service: { Service: 'db' } });
      expect(res.text).toBe('true');
      const node = await server.call('catalog', 'GET', `/v1/catalog/node/${second}`, { headers: auth });
      expect(node.body.Services.db.Service).toBe('db');
    });
  });

  describe('keep-alive survives a 400 whose request was read to its end', () => {
    const routes: Record<ApiName, [string, string]> = { registry: ['POST', '/api/v1/boxes'], secrets: ['POST', '/v1/identity/group'], catalog: ['PUT', '/v1/acl/role'] };
    test.each(['registry', 'secrets', 'catalog'] as const)('%s', async (api) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const [method, path] = routes[api];
        const url = `${server.urls[api]}${path}`;
        const first = await send(agent, url, method, '{not json', auth);
        expect(first.status).toBe(400);
        const second = await send(agent, url, method, '{"x":"\\ud800"}', auth);
        expect(second).toMatchObject({ status: 400, reused: true });
        const third = await send(agent, `${server.urls[api]}/no/such/path`, 'GET', '', auth);
        expect(third).toMatchObject({ status: 404, reused: true });
      } finally {
        agent.destroy();
      }
    });
  });

  test.each([
    ['secrets', '/v1/sys/policies/acl/big', {}],
    ['secrets', '/v1/sys/policies/acl/big', { 'content-type': 'application/json' }],
    ['catalog', '/v1/kv/big', {}],
    ['registry', '/api/v1/boxes', { 'content-type': 'text/plain' }],
  ] as const)('%s %s %j: a body declared over 1 MiB is refused (413) before it is sent', async (api, path, headers) => {
    // 10 bytes of the 100 MiB announced: the answer comes without the rest.
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(`${server.urls[api]}${path}`, { method: 'PUT', headers: { ...auth, ...headers, 'content-length': String(100 * 1024 * 1024) } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      });
      req.on('error', reject);
      req.write('{"x":"0123');
    });
    expect(answer.status).toBe(413);
    expect(answer.text).toContain('larger than');
  });
});
