import { request } from 'undici';
import { ROOT_TOKEN, startSecrets, SecretsTestServer } from './helpers';
import { mountTestEngine } from './test-engine';
import { parseDuration } from '../../../src/engine/secrets/core/durations';
import { VERSION } from '../../../src/engine/version';

describe('durations', () => {
  test('integer seconds, numeric strings and Go duration strings', () => {
    expect(parseDuration(90)).toBe(90);
    expect(parseDuration('90')).toBe(90);
    expect(parseDuration('1h')).toBe(3600);
    expect(parseDuration('1h30m')).toBe(5400);
    expect(parseDuration('1.5h')).toBe(5400);
    expect(parseDuration('2d')).toBe(172800);
    expect(parseDuration('500ms')).toBe(0);
    expect(parseDuration('-1')).toBe(-1);
    expect(parseDuration('')).toBe(0);
    for (const bad of ['1 h', 'h', '1y', '1h-', 1.5, null, {}, [1]]) expect(parseDuration(bad)).toBeUndefined();
  });
});

describe('protocol', () => {
  let s: SecretsTestServer;
  beforeAll(async () => {
    s = await startSecrets('sqlite');
    await mountTestEngine(s.engine, s.v);
    await s.v('PUT', 'test/items/a', { value: '1' });
  });
  afterAll(() => s.close());

  test('the envelope of a read', async () => {
    const res = await s.v('GET', 'test/items/a');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      data: { value: '1' },
      wrap_info: null,
      warnings: null,
      auth: null,
      mount_type: 'hangar-test',
    });
  });

  test('writes without a result answer 204; errors are {"errors": [...]}', async () => {
    const w = await s.v('PUT', 'test/items/b', { value: '2' });
    expect(w.status).toBe(204);
    expect(w.text).toBe('');
    const missing = await s.v('GET', 'test/items/nothing');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ errors: [] });
    const unknownMount = await s.v('GET', 'nowhere/x');
    expect(unknownMount.status).toBe(404);
    expect(unknownMount.body.errors).toEqual(['No such endpoint: GET /v1/nowhere/x']);
    const unknownPath = await s.v('GET', 'test/nothing/here/at/all');
    expect(unknownPath.body).toEqual({ errors: ['unsupported path: nothing/here/at/all'] });
    const unsupported = await s.v('DELETE', 'test/creds/x');
    expect(unsupported.status).toBe(405);
    expect(unsupported.body).toEqual({ errors: ['unsupported operation'] });
    // PATCH is a JSON merge patch (KV v2): another media type is 415, a path without a patch handler 405.
    const patch = await s.v('PATCH', 'test/items/a', { value: 'x' });
    expect([patch.status, patch.body.errors]).toEqual([415, ['PATCH requires Content-Type of application/merge-patch+json, provided application/json']]);
    const merge = await s.call('secrets', 'PATCH', '/v1/test/items/a', { body: { value: 'x' }, headers: { 'x-vault-token': ROOT_TOKEN, 'content-type': 'application/merge-patch+json' } });
    expect(merge.status).toBe(405);
  });

  // Issue 49: a 405 (or 404) before the token check told an anonymous caller which routes exist.
  test('an unknown mount, path or operation is 403 without a token or the capability; 404 and 405 only past the ACL, as in Vault', async () => {
    const readOnly = await s.tokenWith('path "test/*" { capabilities = ["read"] }\npath "nowhere/*" { capabilities = ["read"] }');
    const deleter = await s.tokenWith('path "test/*" { capabilities = ["delete"] }');
    const cases = [
      ['GET', 'nowhere/x', 404, readOnly],
      ['GET', 'test/nothing/here/at/all', 404, readOnly],
      ['DELETE', 'test/creds/x', 405, deleter],
      ['POST', 'test/nothing', 404, undefined],
    ] as const;
    for (const [method, path, status, allowed] of cases) {
      for (const token of [null, 'not-a-token', await s.tokenWith(undefined), ...(allowed === deleter ? [readOnly] : [])]) {
        const res = await s.v(method, path, undefined, token);
        expect({ method, path, token, status: res.status, body: res.body }).toEqual({ method, path, token, status: 403, body: { errors: ['permission denied'] } });
      }
      for (const token of [ROOT_TOKEN, ...(allowed ? [allowed] : [])]) {
        expect({ method, path, status: (await s.v(method, path, undefined, token)).status }).toEqual({ method, path, status });
      }
    }
    // A path open to all answers its 405 to anyone, as Vault's unauthenticated paths do.
    const health = await s.v('DELETE', 'sys/health', undefined, null);
    expect([health.status, health.body]).toEqual([405, { errors: ['unsupported operation'] }]);
  });

  test('LIST verb over a real socket, ?list=true, keep-alive afterwards', async () => {
    const viaVerb = await s.v('LIST', 'test/items');
    expect(viaVerb.status).toBe(200);
    expect(viaVerb.body.data.keys).toEqual(['a', 'b']);
    expect((await s.v('GET', 'test/items?list=true')).body.data.keys).toEqual(['a', 'b']);
    expect((await s.v('GET', 'test/items?list=1')).body.data.keys).toEqual(['a', 'b']);
    // The next request on the same connection is an ordinary GET again.
    expect((await s.v('GET', 'test/items/a')).body.data).toEqual({ value: '1' });
    const long = await s.v('LIST', `test/${'x'.repeat(3000)}`);
    expect(long.status).toBe(404);
  });

  test('bodies: JSON whatever the Content-Type (curl -d), form fields, bad JSON', async () => {
    const curlStyle = await s.call('secrets', 'POST', '/v1/test/items/c', {
      raw: '{"value":"3"}',
      headers: { 'x-vault-token': ROOT_TOKEN, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(curlStyle.status).toBe(204);
    expect((await s.v('GET', 'test/items/c')).body.data).toEqual({ value: '3' });
    const form = await s.call('secrets', 'POST', '/v1/test/items/d', {
      raw: 'value=4',
      headers: { 'x-vault-token': ROOT_TOKEN, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(204);
    const bad = await s.call('secrets', 'POST', '/v1/test/items/e', {
      raw: '{"value":',
      headers: { 'x-vault-token': ROOT_TOKEN, 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/^Request body is not valid JSON/);
    const wrongType = await s.v('PUT', 'test/items/e', { value: 5 });
    expect(wrongType.body).toEqual({ errors: ['value: must be a string'] });
    const array = await s.v('PUT', 'test/items/e', [1, 2]);
    expect(array.status).toBe(400);
    expect((await s.v('GET', 'test/items/e')).status).toBe(404);
  });

  test('sys/health (GET and HEAD), sys/seal-status and sys/init need no token', async () => {
    const health = await s.v('GET', 'sys/health', undefined, null);
    // The public service's version whose API Hangar implements, and Hangar's own beside it.
    expect(health.body).toMatchObject({ initialized: true, sealed: false, standby: false, version: '1.21.1', hangar_version: VERSION, enterprise: false });
    const head = await request(`${s.urls.secrets}/v1/sys/health`, { method: 'HEAD' });
    expect(head.statusCode).toBe(200);
    await head.body.text();
    expect((await s.v('GET', 'sys/seal-status', undefined, null)).body).toMatchObject({ sealed: false, t: 1, n: 1, progress: 0, version: '1.21.1', hangar_version: VERSION });
    expect((await s.v('GET', 'sys/init', undefined, null)).body).toEqual({ initialized: true });
  });

  test('the `vault operator` commands of one server: members, step-down, unseal, key-status; raft and seal refused', async () => {
    const members = (await s.v('GET', 'sys/ha-status')).body.data.nodes;
    expect(members).toEqual([expect.objectContaining({ active_node: true, api_address: s.urls.secrets, version: '1.21.1', last_echo: null })]);
    expect((await s.v('PUT', 'sys/step-down')).status).toBe(204);
    expect((await s.v('PUT', 'sys/unseal', { key: 'abcd' }, null)).body).toMatchObject({ sealed: false, version: '1.21.1' });
    expect((await s.v('PUT', 'sys/unseal', { reset: true }, null)).body).toEqual({ errors: ['vault is unsealed'] });
    expect((await s.v('PUT', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, null)).body).toEqual({ errors: ['Vault is already initialized'] });
    expect((await s.v('GET', 'sys/key-status')).body.data).toEqual({ term: expect.any(Number), install_time: expect.stringMatching(/Z$/), encryptions: 0 });
    const history = (await s.v('LIST', 'sys/version-history')).body.data;
    expect(history).toEqual({ keys: ['1.21.1'], key_info: { '1.21.1': { timestamp_installed: expect.stringMatching(/^\d{4}-.*Z$/), build_date: '', previous_version: null } } });
    for (const [method, path] of [['GET', 'sys/storage/raft/configuration'], ['POST', 'sys/storage/raft/remove-peer'], ['GET', 'sys/storage/raft/autopilot/state']]) {
      expect((await s.v(method, path, method === 'POST' ? { server_id: 'x' } : undefined)).body).toEqual({ errors: ['raft storage is not in use'] });
    }
    for (const [method, path] of [['PUT', 'sys/seal'], ['GET', 'sys/generate-root/attempt'], ['PUT', 'sys/rekey/init']]) {
      const res = await s.v(method, path, method === 'PUT' ? {} : undefined);
      expect([path, res.status, res.body.errors[0]]).toEqual([path, 400, expect.stringMatching(/^Hangar has no seal/)]);
    }
  });

  test('sys/plugins/reload/backend: checked as Vault checks it, answered with a reload_id (nothing to restart)', async () => {
    const ok = await s.v('PUT', 'sys/plugins/reload/backend', { mounts: ['cubbyhole/'] });
    expect([ok.status, ok.body.data]).toEqual([200, { reload_id: expect.any(String) }]);
    expect((await s.v('PUT', 'sys/plugins/reload/backend', { plugin: 'transit' })).status).toBe(200);
    const refusals: [Record<string, unknown>, string][] = [
      [{}, 'plugin or mounts must be provided'],
      [{ plugin: 'transit', mounts: 'cubbyhole' }, 'plugin and mounts cannot be set at the same time'],
      [{ plugin: 'transit', scope: 'cluster' }, "reload scope must be omitted or 'global'"],
      [{ mounts: 'nowhere/' }, 'cannot fetch mount entry on "nowhere/"'],
    ];
    for (const [body, message] of refusals) expect((await s.v('PUT', 'sys/plugins/reload/backend', body)).body).toEqual({ errors: [message] });
  });

  test('JSON answers carry Vault\'s bare application/json, errors included (hvac parses no other)', async () => {
    expect((await s.v('GET', 'sys/mounts')).headers['content-type']).toBe('application/json');
    expect((await s.v('GET', 'sys/mounts', undefined, null)).headers['content-type']).toBe('application/json');
  });

  test('paths are percent-decoded; a broken encoding is a 400', async () => {
    await s.v('PUT', 'test/items/with%20space', { value: 's' });
    expect((await s.v('LIST', 'test/items')).body.data.keys).toContain('with space');
    expect((await s.v('GET', 'test/items/%E0%A4%A')).status).toBe(400);
  });
});
