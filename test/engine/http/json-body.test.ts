import { Readable } from 'node:stream';
import { request } from 'undici';
import { ROOT_TOKEN, startTestServer, TestServer } from '../../helpers/server';

/** Bodies without a JSON media type are JSON to the public services (DESIGN: decoding), on every API. */
describe('request bodies without Content-Type or with text/plain are JSON', () => {
  let server: TestServer;
  const vault = { 'x-vault-token': ROOT_TOKEN };
  const admin = { authorization: `Bearer ${ROOT_TOKEN}` };

  beforeAll(async () => {
    server = await startTestServer('sqlite');
  });
  afterAll(() => server.close());

  test.each([
    ['no Content-Type', {}],
    ['text/plain', { 'content-type': 'text/plain; charset=utf-8' }],
  ])('secrets: a write with %s is parsed as JSON', async (label, type) => {
    const name = label === 'text/plain' ? 'plain' : 'untyped';
    const raw = JSON.stringify({ policy: 'path "secret/*" { capabilities = ["read"] }' });
    const put = await server.call('secrets', 'PUT', `/v1/sys/policies/acl/${name}`, { raw, headers: { ...vault, ...type } });
    expect(put.status).toBe(204);
    const read = await server.call('secrets', 'GET', `/v1/sys/policies/acl/${name}`, { headers: vault });
    expect(read.body.data.policy).toContain('secret/*');
  });

  test('secrets: an empty body without Content-Type is an empty object (plain and chunked)', async () => {
    const res = await server.call('secrets', 'POST', '/v1/auth/token/create', { headers: vault });
    expect(res.status).toBe(200);
    const chunked = await request(`${server.urls.secrets}/v1/auth/token/create`, {
      method: 'POST',
      headers: vault,
      body: Readable.from([]), // no length: sent chunked
    });
    expect(chunked.statusCode).toBe(200);
    expect(((await chunked.body.json()) as { auth: { client_token: string } }).auth.client_token).toBeTruthy();
  });

  test('registry: a JSON route takes an untyped body; an empty one names the missing field', async () => {
    const user = { user: { username: 'untyped', password: 'correct horse battery', email: 'u@example.com' } };
    const created = await server.call('registry', 'POST', '/api/v1/admin/users', { raw: JSON.stringify(user), headers: admin });
    expect(created.status).toBe(200);
    const empty = await server.call('registry', 'POST', '/api/v1/admin/users', { raw: '', headers: { ...admin, 'content-type': 'text/plain' } });
    expect(empty.status).toBe(422);
    expect(empty.body.errors.join(' ')).toMatch(/user is required/);
  });

  test('catalog: a write without Content-Type is JSON', async () => {
    const raw = JSON.stringify({ Name: 'untyped', Rules: 'key_prefix "" { policy = "read" }' });
    const res = await server.call('catalog', 'PUT', '/v1/acl/policy', { raw, headers: { 'x-consul-token': ROOT_TOKEN } });
    expect(res.status).toBe(200);
    expect(res.body.Name).toBe('untyped');
  });

  test('malformed, oversized and binary bodies keep their errors', async () => {
    const bad = await server.call('secrets', 'PUT', '/v1/sys/policies/acl/bad', { raw: '{"policy":', headers: vault });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/not valid JSON/);
    const big = await server.call('secrets', 'PUT', '/v1/sys/policies/acl/big', { raw: `"${'x'.repeat(1024 * 1024 + 10)}"`, headers: vault });
    expect(big.status).toBe(413);
    const binary = await server.call('registry', 'POST', '/api/v1/admin/users', { raw: '{}', headers: { ...admin, 'content-type': 'application/octet-stream' } });
    expect(binary.status).toBe(415);
  });

  // Large answers are sent as bytes (engine/http/json-body.ts, encodeJsonAnswer): the same JSON and length as a small one's.
  test.each([
    ['ASCII', 'a'.repeat(40_000)],
    ['non-ASCII', `${'é'.repeat(10_000)}😀\u2028${'x'.repeat(20_000)}`],
  ])('a large %s answer arrives whole, typed JSON, with its UTF-8 length', async (label, value) => {
    const path = `/v1/secret/data/large-${label}`;
    expect((await server.call('secrets', 'POST', path, { body: { data: { value } }, headers: vault })).status).toBe(200);
    const read = await server.call('secrets', 'GET', path, { headers: vault });
    expect(read.status).toBe(200);
    expect(read.headers['content-type']).toBe('application/json');
    expect(Number(read.headers['content-length'])).toBe(Buffer.byteLength(read.text));
    expect(read.body.data.data.value).toBe(value);
  });
});
