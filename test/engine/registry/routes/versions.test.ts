import { startTestServer, TestServer, userWithToken } from '../../../helpers/server';
import { STORAGE_KINDS } from '../../../helpers/storage';
import { registry } from '../registry-helpers';

describe.each(STORAGE_KINDS)('registry versions and providers (%s)', (kind) => {
  let server: TestServer;
  let alice: ReturnType<typeof registry>;
  let bob: ReturnType<typeof registry>;
  let anon: ReturnType<typeof registry>;

  beforeAll(async () => {
    server = await startTestServer(kind);
    alice = registry(server, await userWithToken(server, 'alice'));
    bob = registry(server, await userWithToken(server, 'bob'));
    anon = registry(server);
  });
  afterAll(() => server.close());

  test('a version starts unreleased with every field of the spec', async () => {
    await alice.createBox('alice', 'v1', { is_private: false });
    const v = await alice.createVersion('alice/v1', '1.0.0', '*first*');
    expect(v).toEqual({
      version: '1.0.0',
      number: '1.0.0',
      status: 'unreleased',
      description_html: '<p><em>first</em></p>\n',
      description_markdown: '*first*',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.any(String),
      release_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/box\/alice\/v1\/version\/1\.0\.0\/release$/),
      revoke_url: expect.stringMatching(/\/api\/v1\/box\/alice\/v1\/version\/1\.0\.0\/revoke$/),
      providers: [],
    });
    const read = await alice.call('GET', '/api/v1/box/alice/v1/version/1.0.0');
    expect(read.body).toEqual(v);
    const box = await alice.call('GET', '/api/v1/box/alice/v1');
    expect(box.body.versions).toEqual([v]);
    expect(box.body.current_version).toBeNull();
  });

  test('release needs a valid provider; then active, revoked, and released again', async () => {
    await alice.createBox('alice', 'states', { is_private: false });
    await alice.createVersion('alice/states', '1.0.0');
    const early = await alice.call('PUT', '/api/v1/box/alice/states/version/1.0.0/release');
    expect(early.status).toBe(422);
    expect(early.body.errors[0]).toMatch(/no valid provider/);
    // A provider without url and without upload is not valid either.
    await alice.createProvider('alice/states', '1.0.0', { name: 'libvirt' });
    expect((await alice.call('PUT', '/api/v1/box/alice/states/version/1.0.0/release')).status).toBe(422);
    await alice.createProvider('alice/states', '1.0.0', { name: 'virtualbox', url: 'https://example.com/a.box' });

    expect((await alice.release('alice/states', '1.0.0')).status).toBe('active');
    const again = await alice.call('PUT', '/api/v1/box/alice/states/version/1.0.0/release');
    expect(again.status).toBe(422);
    expect(again.body.errors[0]).toMatch(/already released/);
    expect((await alice.call('GET', '/api/v1/box/alice/states')).body.current_version.version).toBe('1.0.0');

    expect((await alice.revoke('alice/states', '1.0.0')).status).toBe('revoked');
    expect((await alice.call('PUT', '/api/v1/box/alice/states/version/1.0.0/revoke')).status).toBe(422);
    expect((await alice.call('GET', '/api/v1/box/alice/states')).body.current_version).toBeNull();
    // Others no longer see a revoked version.
    expect((await anon.call('GET', '/api/v1/box/alice/states/version/1.0.0')).status).toBe(404);

    expect((await alice.release('alice/states', '1.0.0')).status).toBe('active');
    expect((await anon.call('GET', '/api/v1/box/alice/states/version/1.0.0')).status).toBe(200);
  });

  test('an unreleased version can be revoked by no one', async () => {
    await alice.createBox('alice', 'norevoke');
    await alice.createVersion('alice/norevoke', '0.1.0');
    const res = await alice.call('PUT', '/api/v1/box/alice/norevoke/version/0.1.0/revoke');
    expect(res.status).toBe(422);
    expect(res.body.errors[0]).toMatch(/only a released version can be revoked/);
  });

  test('current_version is the newest released version by version order, not by time', async () => {
    await alice.createBox('alice', 'order', { is_private: false });
    for (const v of ['1.10.0', '1.9.0', '2.0.0']) {
      await alice.createVersion('alice/order', v);
      await alice.createProvider('alice/order', v, { name: 'virtualbox', url: `https://example.com/${v}.box` });
    }
    await alice.release('alice/order', '1.10.0');
    await alice.release('alice/order', '1.9.0');
    const box = (await anon.call('GET', '/api/v1/box/alice/order')).body;
    expect(box.current_version.version).toBe('1.10.0');
    // Others see released versions only, newest first; the owner sees all.
    expect(box.versions.map((v: any) => v.version)).toEqual(['1.10.0', '1.9.0']);
    const own = (await alice.call('GET', '/api/v1/box/alice/order')).body;
    expect(own.versions.map((v: any) => [v.version, v.status])).toEqual([
      ['2.0.0', 'unreleased'],
      ['1.10.0', 'active'],
      ['1.9.0', 'active'],
    ]);
    expect((await anon.call('GET', '/api/v1/box/alice/order/version/2.0.0')).status).toBe(404);
  });

  test('version numbers are validated, and 1.0 and 1.0.0 are the same version', async () => {
    await alice.createBox('alice', 'numbers');
    for (const bad of ['v1', '1.0.0.0', '1..0', '', '1.0-beta', '../1', '1.0.0 ', 'x'.repeat(40), 5, null]) {
      const res = await alice.call('POST', '/api/v1/box/alice/numbers/versions', { version: { version: bad } });
      expect({ bad, status: res.status }).toEqual({ bad, status: 422 });
      expect(res.body.errors[0]).toMatch(/^version\.version/);
    }
    await alice.createVersion('alice/numbers', '1.0');
    const dup = await alice.call('POST', '/api/v1/box/alice/numbers/versions', { version: { version: '1.0.0' } });
    expect(dup.status).toBe(422);
    expect(dup.body.errors[0]).toMatch(/already exists/);
    // Either spelling finds it; a path that is no version number is a 422.
    expect((await alice.call('GET', '/api/v1/box/alice/numbers/version/1.0.0')).body.version).toBe('1.0');
    expect((await alice.call('GET', '/api/v1/box/alice/numbers/version/1.0.x')).status).toBe(422);
    expect((await alice.call('GET', '/api/v1/box/alice/numbers/version/9.9.9')).status).toBe(404);
  });

  test('edit rules: descriptions always, the number only while unreleased', async () => {
    await alice.createBox('alice', 'edit', { is_private: false });
    await alice.createVersion('alice/edit', '0.1.0');
    const renumbered = await alice.call('PUT', '/api/v1/box/alice/edit/version/0.1.0', { version: { version: '0.2.0', description: 'two' } });
    expect(renumbered.status).toBe(200);
    expect(renumbered.body).toMatchObject({ version: '0.2.0', description_markdown: 'two' });
    await alice.createProvider('alice/edit', '0.2.0', { name: 'virtualbox', url: 'https://example.com/x.box' });
    await alice.release('alice/edit', '0.2.0');
    const locked = await alice.call('PUT', '/api/v1/box/alice/edit/version/0.2.0', { version: { version: '0.3.0' } });
    expect(locked.status).toBe(422);
    expect(locked.body.errors[0]).toMatch(/only an unreleased version can be renumbered/);
    const described = await alice.call('PUT', '/api/v1/box/alice/edit/version/0.2.0', { version: { version: '0.2.0', description: 'changed' } });
    expect(described.body).toMatchObject({ status: 'active', description_markdown: 'changed' });
  });

  test('others may read a public box\'s released versions but not change them (403); private ones are 404', async () => {
    await alice.publishedBox('alice/shared');
    expect((await bob.call('PUT', '/api/v1/box/alice/shared/version/1.0.0/revoke')).status).toBe(403);
    expect((await bob.call('POST', '/api/v1/box/alice/shared/versions', { version: { version: '2.0.0' } })).status).toBe(403);
    expect((await bob.call('DELETE', '/api/v1/box/alice/shared/version/1.0.0/provider/virtualbox')).status).toBe(403);
    expect((await anon.call('POST', '/api/v1/box/alice/shared/versions', { version: { version: '2.0.0' } })).status).toBe(401);

    await alice.createBox('alice', 'hidden');
    await alice.createVersion('alice/hidden', '1.0.0');
    for (const [method, path] of [
      ['GET', '/api/v1/box/alice/hidden/version/1.0.0'],
      ['PUT', '/api/v1/box/alice/hidden/version/1.0.0/release'],
      ['DELETE', '/api/v1/box/alice/hidden/version/1.0.0'],
    ]) {
      expect((await bob.call(method, path)).status).toBe(404);
    }
  });

  test('providers: every field, checksum types in any case stored lower case', async () => {
    await alice.createBox('alice', 'prov', { is_private: false });
    await alice.createVersion('alice/prov', '1.0.0');
    const sum = 'AB'.repeat(32);
    const p = await alice.createProvider('alice/prov', '1.0.0', { name: 'virtualbox', url: 'https://example.com/p.box', checksum: sum, checksum_type: 'SHA256' });
    expect(p).toEqual({
      name: 'virtualbox',
      hosted: false,
      hosted_token: null,
      original_url: 'https://example.com/p.box',
      created_at: expect.any(String),
      updated_at: expect.any(String),
      download_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/alice\/boxes\/prov\/versions\/1\.0\.0\/providers\/virtualbox\.box$/),
      checksum: sum.toLowerCase(),
      checksum_type: 'sha256',
    });
    expect((await alice.call('GET', '/api/v1/box/alice/prov/version/1.0.0/provider/virtualbox')).body).toEqual(p);
    const updated = await alice.call('PUT', '/api/v1/box/alice/prov/version/1.0.0/provider/virtualbox', {
      provider: { name: 'virtualbox', url: 'https://example.com/q.box', checksum: 'cd'.repeat(20), checksum_type: 'Sha1' },
    });
    expect(updated.body).toMatchObject({ original_url: 'https://example.com/q.box', checksum: 'cd'.repeat(20), checksum_type: 'sha1' });
    // null keeps a value, "" clears it.
    const kept = await alice.call('PUT', '/api/v1/box/alice/prov/version/1.0.0/provider/virtualbox', { provider: { url: null, checksum: null } });
    expect(kept.body).toMatchObject({ original_url: 'https://example.com/q.box', checksum_type: 'sha1' });
    const cleared = await alice.call('PUT', '/api/v1/box/alice/prov/version/1.0.0/provider/virtualbox', { provider: { checksum: '' } });
    expect(cleared.body).toMatchObject({ checksum: null, checksum_type: null });
    expect((await alice.call('POST', '/api/v1/box/alice/prov/version/1.0.0/providers', { provider: { name: 'VirtualBox' } })).status).toBe(422);
  });

  test('provider input is validated with messages naming the field', async () => {
    await alice.createBox('alice', 'badprov');
    await alice.createVersion('alice/badprov', '1.0.0');
    const cases: [unknown, RegExp][] = [
      [{}, /^provider is required$/],
      [{ provider: { url: 'https://x/y' } }, /^provider\.name is required$/],
      [{ provider: { name: '../etc' } }, /^provider\.name: may contain only/],
      [{ provider: { name: 'a', url: 'ftp://x/y' } }, /^provider\.url: must be an http or https URL$/],
      [{ provider: { name: 'a', url: 5 } }, /^provider\.url/],
      [{ provider: { name: 'a', checksum: 'ab', checksum_type: 'crc32' } }, /^provider\.checksum_type: must be one of md5/],
      [{ provider: { name: 'a', checksum: 'ab', checksum_type: 'md5' } }, /^provider\.checksum: must be 32 hexadecimal digits for md5$/],
      [{ provider: { name: 'a', checksum: 'ab'.repeat(16) } }, /^provider\.checksum_type is required/],
      [{ provider: { name: 'a', checksum_type: 'md5' } }, /^provider\.checksum is required/],
      [{ provider: { name: 'a', checksum: 'z'.repeat(32), checksum_type: 'md5' } }, /hexadecimal/],
    ];
    for (const [body, message] of cases) {
      const res = await alice.call('POST', '/api/v1/box/alice/badprov/version/1.0.0/providers', body);
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
      expect(res.body.errors[0]).toMatch(message);
    }
    expect((await alice.call('GET', '/api/v1/box/alice/badprov/version/1.0.0')).body.providers).toEqual([]);
  });

  test('delete rules: the last valid provider of a released version stays; versions and boxes go with their children', async () => {
    await alice.publishedBox('alice/del');
    const last = await alice.call('DELETE', '/api/v1/box/alice/del/version/1.0.0/provider/virtualbox');
    expect(last.status).toBe(422);
    expect(last.body.errors[0]).toMatch(/revoke the version first/);
    await alice.revoke('alice/del', '1.0.0');
    const gone = await alice.call('DELETE', '/api/v1/box/alice/del/version/1.0.0/provider/virtualbox');
    expect(gone.status).toBe(200);
    expect(gone.body.name).toBe('virtualbox');
    const deleted = await alice.call('DELETE', '/api/v1/box/alice/del/version/1.0.0');
    expect(deleted.body.version).toBe('1.0.0');
    expect((await alice.call('GET', '/api/v1/box/alice/del/version/1.0.0')).status).toBe(404);

    // A released version may be deleted outright, as on the public registry.
    await alice.createVersion('alice/del', '2.0.0');
    await alice.createProvider('alice/del', '2.0.0', { name: 'virtualbox', url: 'https://example.com/2.box' });
    await alice.release('alice/del', '2.0.0');
    expect((await alice.call('DELETE', '/api/v1/box/alice/del/version/2.0.0')).status).toBe(200);
    expect((await alice.call('GET', '/api/v1/box/alice/del')).body.current_version).toBeNull();
  });

  test('the Vagrant CLI\'s box bodies (fields at the top level) work like the spec\'s', async () => {
    const created = await alice.call('POST', '/api/v1/boxes', { username: 'alice', name: 'flat', short_description: 'flat', is_private: false });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ tag: 'alice/flat', private: false, short_description: 'flat' });
    const updated = await alice.call('PUT', '/api/v1/box/alice/flat', { short_description: 'changed', description: 'd', is_private: true });
    expect(updated.body).toMatchObject({ short_description: 'changed', description_markdown: 'd', private: true });
  });
});
