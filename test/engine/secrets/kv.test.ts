import { ROOT_TOKEN, startSecrets, SecretsTestServer } from './helpers';
import { storedText } from '../../helpers/raw-db';
import { STORAGE_KINDS } from '../../helpers/storage';

describe.each(STORAGE_KINDS)('kv engine (%s)', (kind) => {
  let s: SecretsTestServer;
  const ok = async (method: string, path: string, body?: unknown, status = 204) => {
    const res = await s.v(method, path, body);
    if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };

  beforeAll(async () => {
    s = await startSecrets(kind);
    await ok('POST', 'sys/mounts/kv1', { type: 'kv' });
    await ok('POST', 'sys/mounts/kv2', { type: 'kv', options: { version: 2 } });
    await ok('POST', 'sys/mounts/kvalias', { type: 'kv-v2' });
  });
  afterAll(() => s.close());

  test('v1: write any object, read with the ttl hint, LIST folders, delete, bad input, sealed at rest', async () => {
    await ok('PUT', 'kv1/app/db', { password: 'hunter2-sealed', nested: { a: [1, 2] }, ttl: '30m' });
    await ok('POST', 'kv1/app/api', { key: 'k' });
    await ok('POST', 'kv1/top', { x: 1 });
    const read = await ok('GET', 'kv1/app/db', undefined, 200);
    expect(read.data).toEqual({ password: 'hunter2-sealed', nested: { a: [1, 2] }, ttl: '30m' });
    expect([read.lease_duration, read.lease_id, read.mount_type]).toEqual([1800, '', 'kv']);
    expect((await ok('GET', 'kv1/app/api', undefined, 200)).lease_duration).toBe(2764800);
    expect((await ok('LIST', 'kv1', undefined, 200)).data.keys).toEqual(['app/', 'top']);
    expect((await ok('GET', 'kv1/app?list=true', undefined, 200)).data.keys).toEqual(['api', 'db']);
    expect((await s.v('LIST', 'kv1/none')).status).toBe(404);
    expect(await storedText(s.engine.storage, s.dataDir)).not.toContain('hunter2-sealed');
    for (const [body, message] of [[{}, /no data provided/], [{ ttl: 'soon' }, /^ttl: "soon" is not a duration/], ['text', /body/]] as const) {
      const res = await s.v('POST', 'kv1/bad', body);
      expect([res.status, res.body.errors[0]]).toEqual([400, expect.stringMatching(message)]);
    }
    await ok('DELETE', 'kv1/app/db');
    expect((await s.v('GET', 'kv1/app/db')).status).toBe(404);
    expect((await s.v('GET', 'kv1/bad')).status).toBe(404);
    // A v1 mount has no v2 paths: data/x is just a key.
    expect((await s.v('GET', 'kv1/data/app/api')).status).toBe(404);
  });

  test('v2: versions, cas, read by version, metadata, subkeys, config, LIST', async () => {
    const w1 = await ok('POST', 'kv2/data/app/cfg', { data: { user: 'u', pw: { old: 'p1' } } }, 200);
    expect(w1.data).toEqual({ created_time: expect.stringMatching(/Z$/), custom_metadata: null, deletion_time: '', destroyed: false, version: 1 });
    await ok('PUT', 'kv2/data/app/cfg', { data: { user: 'u', pw: 'p2' }, options: { cas: 1 } }, 200);
    const casBad = await s.v('POST', 'kv2/data/app/cfg', { data: { a: 1 }, options: { cas: 1 } });
    expect([casBad.status, casBad.body.errors[0]]).toEqual([400, expect.stringMatching(/^check-and-set parameter did not match the current version/)]);
    expect((await s.v('POST', 'kv2/data/app/new', { data: { a: 1 }, options: { cas: 1 } })).status).toBe(400);
    await ok('POST', 'kv2/data/app/new', { data: { a: 1 }, options: { cas: 0 } }, 200);
    const latest = await ok('GET', 'kv2/data/app/cfg', undefined, 200);
    expect(latest.data).toMatchObject({ data: { user: 'u', pw: 'p2' }, metadata: { version: 2, destroyed: false } });
    expect((await ok('GET', 'kv2/data/app/cfg?version=1', undefined, 200)).data.data).toEqual({ user: 'u', pw: { old: 'p1' } });
    expect((await s.v('GET', 'kv2/data/app/cfg?version=7')).status).toBe(404);
    expect((await s.v('GET', 'kv2/data/app/cfg?version=x')).body.errors[0]).toMatch(/^version: must be an integer/);
    expect((await ok('GET', 'kv2/subkeys/app/cfg?version=1', undefined, 200)).data.subkeys).toEqual({ user: null, pw: { old: null } });
    expect((await ok('GET', 'kv2/subkeys/app/cfg?version=1&depth=1', undefined, 200)).data.subkeys).toEqual({ user: null, pw: null });

    await ok('POST', 'kv2/metadata/app/cfg', { custom_metadata: { owner: 'ops' }, max_versions: 5, delete_version_after: '1h' });
    const meta = (await ok('GET', 'kv2/metadata/app/cfg', undefined, 200)).data;
    expect(meta).toMatchObject({
      cas_required: false, current_version: 2, oldest_version: 0, max_versions: 5, delete_version_after: '1h0m0s', custom_metadata: { owner: 'ops' },
    });
    expect(Object.keys(meta.versions)).toEqual(['1', '2']);
    expect(meta.versions['1']).toEqual({ created_time: meta.created_time, deletion_time: '', destroyed: false });
    expect((await ok('LIST', 'kv2/metadata', undefined, 200)).data.keys).toEqual(['app/']);
    expect((await ok('LIST', 'kv2/metadata/app/', undefined, 200)).data.keys).toEqual(['cfg', 'new']);

    // delete_version_after schedules a version's deletion; the clock reaches it.
    const w3 = await ok('POST', 'kv2/data/app/cfg', { data: { v: 3 } }, 200);
    expect(w3.data.deletion_time).not.toBe('');
    s.clock.advance(3601_000);
    const gone = await s.v('GET', 'kv2/data/app/cfg');
    expect([gone.status, gone.body.data.data, gone.body.data.metadata.version]).toEqual([404, null, 3]);

    const bad: Array<[string, unknown, RegExp]> = [
      ['kv2/data/x', {}, /^data is required/],
      ['kv2/data/x', { data: 'text' }, /^data: must be a JSON object/],
      ['kv2/data/x', { data: {}, options: { cas: -1 } }, /^options\.cas: must be 0 or more/],
      ['kv2/delete/x', {}, /^versions is required/],
      ['kv2/undelete/x', { versions: [] }, /^versions: no version number provided/],
      ['kv2/metadata/x', { max_versions: 'many' }, /^max_versions: must be an integer/],
      ['kv2/metadata/x', { custom_metadata: { k: 1 } }, /^custom_metadata\.k: /],
      ['kv2/config', { delete_version_after: 'later' }, /^delete_version_after: "later" is not a duration/],
    ];
    for (const [path, body, message] of bad) {
      const res = await s.v('POST', path, body);
      expect([path, res.status, res.body.errors[0]]).toEqual([path, 400, expect.stringMatching(message)]);
    }
    expect((await s.v('GET', 'kv2/metadata/x')).status).toBe(404);
  });

  test('v2: a read serves every change at once, of secrets of any size', async () => {
    const read = async (path: string) => (await ok('GET', `kv2/data/${path}`, undefined, 200)).data;
    for (let n = 1; n <= 3; n++) {
      await ok('POST', 'kv2/data/mem/a', { data: { n } }, 200);
      for (let i = 0; i < 2; i++) expect((await read('mem/a')).data).toEqual({ n });
    }
    await ok('POST', 'kv2/metadata/mem/a', { custom_metadata: { owner: 'ops' } });
    expect((await read('mem/a')).metadata).toMatchObject({ version: 3, custom_metadata: { owner: 'ops' } });
    await ok('DELETE', 'kv2/data/mem/a');
    expect((await s.v('GET', 'kv2/data/mem/a')).body.data).toMatchObject({ data: null, metadata: { version: 3, deletion_time: expect.stringMatching(/Z$/) } });
    await ok('POST', 'kv2/undelete/mem/a', { versions: [3] });
    expect((await read('mem/a')).data).toEqual({ n: 3 });
    // A secret whose versions outgrow what is kept in memory (16 KiB sealed), then shrink again.
    for (const big of ['x'.repeat(40_000), 'y'.repeat(40_000), 'z']) {
      await ok('POST', 'kv2/data/mem/a', { data: { big } }, 200);
      for (let i = 0; i < 2; i++) expect((await read('mem/a')).data).toEqual({ big });
    }
    await ok('DELETE', 'kv2/metadata/mem/a');
    expect((await s.v('GET', 'kv2/data/mem/a')).status).toBe(404);
  });

  test('v2: delete, undelete, destroy, metadata delete, max_versions trimming, cas_required', async () => {
    for (let i = 1; i <= 4; i++) await ok('POST', 'kvalias/data/s', { data: { i } }, 200);
    await ok('DELETE', 'kvalias/data/s');
    expect((await s.v('GET', 'kvalias/data/s')).status).toBe(404);
    await ok('POST', 'kvalias/delete/s', { versions: [1, 2] });
    await ok('POST', 'kvalias/undelete/s', { versions: [1, 4] });
    expect((await ok('GET', 'kvalias/data/s', undefined, 200)).data.data).toEqual({ i: 4 });
    expect((await s.v('GET', 'kvalias/data/s?version=2')).status).toBe(404);
    await ok('PUT', 'kvalias/destroy/s', { versions: [1] });
    await ok('POST', 'kvalias/undelete/s', { versions: [1] });
    const destroyed = await s.v('GET', 'kvalias/data/s?version=1');
    expect([destroyed.status, destroyed.body.data.metadata.destroyed]).toEqual([404, true]);

    await ok('POST', 'kvalias/config', { max_versions: 2, cas_required: true });
    expect((await ok('GET', 'kvalias/config', undefined, 200)).data).toEqual({ cas_required: true, delete_version_after: '0s', max_versions: 2 });
    const noCas = await s.v('POST', 'kvalias/data/s', { data: { i: 5 } });
    expect([noCas.status, noCas.body.errors[0]]).toEqual([400, expect.stringMatching(/^check-and-set parameter required/)]);
    await ok('POST', 'kvalias/data/s', { data: { i: 5 }, options: { cas: 4 } }, 200);
    const meta = (await ok('GET', 'kvalias/metadata/s', undefined, 200)).data;
    expect([Object.keys(meta.versions), meta.oldest_version, meta.current_version]).toEqual([['4', '5'], 4, 5]);

    await ok('DELETE', 'kvalias/metadata/s');
    expect((await s.v('GET', 'kvalias/metadata/s')).status).toBe(404);
    expect((await s.v('LIST', 'kvalias/metadata')).status).toBe(404);
    const mounts = (await ok('GET', 'sys/mounts', undefined, 200)).data;
    expect(mounts['kvalias/']).toMatchObject({ type: 'kv', options: { version: '2' } });
  });

  test('policies on data/ and metadata/ paths; tuning a v1 mount to v2 upgrades it in place', async () => {
    await ok('POST', 'kv2/data/team/a', { data: { k: 'v' } }, 200);
    const reader = await s.tokenWith('path "kv2/data/team/*" { capabilities = ["read"] }\npath "kv2/metadata/*" { capabilities = ["list"] }');
    expect((await s.v('GET', 'kv2/data/team/a', undefined, reader)).status).toBe(200);
    expect((await s.v('LIST', 'kv2/metadata/team', undefined, reader)).body.data.keys).toEqual(['a']);
    expect((await s.v('GET', 'kv2/metadata/team/a', undefined, reader)).status).toBe(403);
    expect((await s.v('POST', 'kv2/data/team/a', { data: {} }, reader)).status).toBe(403);
    const creator = await s.tokenWith('path "kv2/data/*" { capabilities = ["create"] }');
    expect((await s.v('POST', 'kv2/data/team/b', { data: { k: 1 } }, creator)).status).toBe(200);
    expect((await s.v('POST', 'kv2/data/team/a', { data: { k: 1 } }, creator)).status).toBe(403);

    await ok('POST', 'sys/mounts/up', { type: 'kv' });
    await ok('POST', 'up/x/y', { secret: 'old' });
    await ok('POST', 'sys/mounts/up/tune', { options: { version: '2' } });
    expect((await ok('GET', 'up/data/x/y', undefined, 200)).data).toMatchObject({ data: { secret: 'old' }, metadata: { version: 1 } });
    expect((await ok('LIST', 'up/metadata/x', undefined, 200)).data.keys).toEqual(['y']);
    const down = await s.v('POST', 'sys/mounts/up/tune', { options: { version: '1' } });
    expect([down.status, down.body.errors[0]]).toEqual([400, expect.stringMatching(/cannot be downgraded/)]);
    expect((await ok('GET', 'sys/mounts/up/tune', undefined, 200)).data.options).toEqual({ version: '2' });
  });

  test('v2 PATCH: JSON merge patch of data and metadata, the patch capability, cas, 404 and 415', async () => {
    const patch = (path: string, body: unknown, token?: string, type = 'application/merge-patch+json') =>
      s.call('secrets', 'PATCH', `/v1/${path}`, { body, headers: { 'content-type': type, 'x-vault-token': token ?? ROOT_TOKEN } });
    await ok('POST', 'kv2/data/p/app', { data: { user: 'u', pw: 'p1', nested: { a: 1, b: 2 }, gone: true } }, 200);
    const patched = await patch('kv2/data/p/app', { data: { pw: 'p2', nested: { b: null, c: 3 }, gone: null }, options: { cas: 1 } });
    expect([patched.status, patched.body.data.version]).toEqual([200, 2]);
    expect((await ok('GET', 'kv2/data/p/app', undefined, 200)).data.data).toEqual({ user: 'u', pw: 'p2', nested: { a: 1, c: 3 } });
    expect((await patch('kv2/data/p/app', { data: { x: 1 }, options: { cas: 1 } })).body.errors[0]).toMatch(/^check-and-set parameter did not match/);
    expect((await patch('kv2/data/p/none', { data: { x: 1 } })).status).toBe(404);
    expect((await patch('kv2/data/p/app', { nodata: 1 })).body.errors).toEqual(['data is required']);
    const wrongType = await patch('kv2/data/p/app', { data: { x: 1 } }, undefined, 'application/json');
    expect([wrongType.status, wrongType.body.errors]).toEqual([415, ['PATCH requires Content-Type of application/merge-patch+json, provided application/json']]);
    // Deleted current version: nothing to patch.
    await ok('POST', 'kv2/data/p/del', { data: { a: 1 } }, 200);
    await ok('DELETE', 'kv2/data/p/del');
    expect((await patch('kv2/data/p/del', { data: { a: 2 } })).status).toBe(404);

    // `patch` is its own capability: update alone is not enough, and patch alone does not write.
    const updater = await s.tokenWith('path "kv2/data/p/*" { capabilities = ["create", "update", "read"] }');
    const patcher = await s.tokenWith('path "kv2/data/p/*" { capabilities = ["patch"] }');
    expect((await patch('kv2/data/p/app', { data: { x: 1 } }, updater)).status).toBe(403);
    expect((await patch('kv2/data/p/app', { data: { x: 1 } }, patcher)).status).toBe(200);
    expect((await s.v('POST', 'kv2/data/p/app', { data: { x: 1 } }, patcher)).status).toBe(403);
    expect((await ok('POST', 'sys/capabilities', { token: patcher, path: 'kv2/data/p/app' }, 200)).capabilities).toEqual(['patch']);

    // Metadata: given fields change, null resets, custom_metadata merges key by key.
    await ok('POST', 'kv2/metadata/p/app', { custom_metadata: { owner: 'ops', team: 'a' }, max_versions: 4 });
    expect((await patch('kv2/metadata/p/app', { custom_metadata: { team: null, env: 'prod' }, max_versions: null, cas_required: true })).status).toBe(204);
    expect((await ok('GET', 'kv2/metadata/p/app', undefined, 200)).data).toMatchObject({ custom_metadata: { owner: 'ops', env: 'prod' }, max_versions: 0, cas_required: true });
    expect((await patch('kv2/metadata/p/none', { max_versions: 1 })).status).toBe(404);
    expect((await patch('kv2/metadata/p/app', { custom_metadata: { ['k'.repeat(129)]: 'v' } })).body.errors[0]).toMatch(/^custom_metadata: keys must be at most 128/);
    expect((await patch('kv2/metadata/p/app', { max_versions: 'x' })).body.errors[0]).toMatch(/^max_versions: /);
    // PATCH where no engine route takes it.
    expect((await patch('kv1/app/api', { x: 1 })).status).toBe(405);
  });
});
