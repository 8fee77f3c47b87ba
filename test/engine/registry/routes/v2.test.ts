import { createHash, randomBytes } from 'node:crypto';
import { request } from 'undici';
import { startTestServer, TestServer, userWithToken } from '../../../helpers/server';
import { STORAGE_KINDS } from '../../../helpers/storage';
import { putFile, registry } from '../registry-helpers';

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

/** The fields of "Read a provider" in the public documentation of API v2, in its order. */
const PROVIDER_FIELDS = [
  'name',
  'hosted',
  'hosted_token',
  'original_url',
  'created_at',
  'updated_at',
  'download_url',
  'checksum',
  'checksum_type',
  'architecture',
  'default_architecture',
];

/**
 * API v2 with box architectures, request by request as the public documentation's examples
 * ("Vagrant Cloud API (Version 2)", "Architecture for Vagrant boxes") show them.
 */
describe.each(STORAGE_KINDS)('registry API v2 and box architectures (%s)', (kind) => {
  let server: TestServer;
  let alice: ReturnType<typeof registry>;
  let bob: ReturnType<typeof registry>;
  let anon: ReturnType<typeof registry>;
  let base: string;
  const amd64File = randomBytes(40 * 1024);
  const arm64File = randomBytes(50 * 1024 + 3);

  beforeAll(async () => {
    server = await startTestServer(kind);
    base = server.urls.registry;
    alice = registry(server, await userWithToken(server, 'alice'));
    bob = registry(server, await userWithToken(server, 'bob'));
    anon = registry(server);
  });
  afterAll(() => server.close());

  const V = '/api/v2/box/alice/multi/version/1.2.3';

  test('creating a usable box from scratch (the documented sequence), then the architectures of one provider', async () => {
    // Create a new box, a version, a provider (no architecture: `unknown`, the default of its name).
    let r = await alice.call('POST', '/api/v2/boxes', { box: { username: 'alice', name: 'multi', is_private: false } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ tag: 'alice/multi', versions: [] });
    r = await alice.call('POST', '/api/v2/box/alice/multi/versions', { version: { version: '1.2.3' } });
    expect(r.body).toMatchObject({ version: '1.2.3', status: 'unreleased', release_url: `${base}${V}/release`, providers: [] });
    r = await alice.call('POST', `${V}/providers`, { provider: { name: 'virtualbox' } });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(PROVIDER_FIELDS);
    expect(r.body).toMatchObject({ name: 'virtualbox', architecture: 'unknown', default_architecture: true, hosted: false });

    // The documented create: checksum, URL, amd64 and default_architecture. It takes the default over.
    r = await alice.call('POST', `${V}/providers`, {
      provider: {
        checksum: md5(amd64File),
        checksum_type: 'md5',
        name: 'virtualbox',
        url: 'https://example.com/virtualbox-1.2.3.box',
        architecture: 'amd64',
        default_architecture: true,
      },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      name: 'virtualbox',
      hosted: false,
      hosted_token: null,
      original_url: 'https://example.com/virtualbox-1.2.3.box',
      created_at: expect.any(String),
      updated_at: expect.any(String),
      download_url: `${base}/alice/boxes/multi/versions/1.2.3/providers/virtualbox/amd64/vagrant.box`,
      checksum: md5(amd64File),
      checksum_type: 'md5',
      architecture: 'amd64',
      default_architecture: true,
    });
    expect((await alice.call('GET', `${V}/provider/virtualbox/unknown`)).body.default_architecture).toBe(false);

    // arm64 joins as a non-default architecture of the same name.
    r = await alice.call('POST', `${V}/providers`, { provider: { name: 'virtualbox', architecture: 'arm64' } });
    expect(r.body).toMatchObject({ architecture: 'arm64', default_architecture: false });

    // Read a provider (documented path with the architecture); the documented update (no architecture in the body keeps it).
    r = await alice.call('GET', `${V}/provider/virtualbox/amd64`);
    expect(r.body).toMatchObject({ architecture: 'amd64', default_architecture: true });
    r = await alice.call('PUT', `${V}/provider/virtualbox/amd64`, {
      provider: { checksum: md5(amd64File), checksum_type: 'md5', name: 'virtualbox', url: 'https://example.com/virtualbox-1.2.3.box' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ architecture: 'amd64', default_architecture: true });

    // The unknown one is deleted (documented delete returns the provider).
    r = await alice.call('DELETE', `${V}/provider/virtualbox/unknown`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ architecture: 'unknown' });
    expect((await alice.call('GET', `${V}/provider/virtualbox/unknown`)).status).toBe(404);
  });

  test('the rules: one default per name, bad architectures and flags refused naming the field, duplicates refused', async () => {
    let r = await alice.call('POST', `${V}/providers`, { provider: { name: 'virtualbox', architecture: 'sparc' } });
    expect(r.status).toBe(422);
    expect(r.body.errors.join(' ')).toMatch(/provider\.architecture.*amd64/);
    r = await alice.call('POST', `${V}/providers`, { provider: { name: 'virtualbox', architecture: 'arm64' } });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ success: false, errors: [expect.stringMatching(/provider\.architecture: .*arm64 already exists/)] });
    r = await alice.call('POST', `${V}/providers`, { provider: { name: 'virtualbox', architecture: 'i386', default_architecture: 'yes' } });
    expect(r.status).toBe(422);
    expect(r.body.errors.join(' ')).toMatch(/provider\.default_architecture/);
    expect((await alice.call('GET', `${V}/provider/virtualbox/i386`)).status).toBe(404);
    r = await alice.call('PUT', `${V}/provider/virtualbox/amd64`, { provider: { default_architecture: false } });
    expect(r.status).toBe(422);
    expect(r.body.errors.join(' ')).toMatch(/provider\.default_architecture: amd64 is the default/);
    expect((await alice.call('GET', `${V}/provider/virtualbox/x86`)).status).toBe(422);

    // Flagging arm64 the default clears amd64's flag: v1 now sees arm64.
    r = await alice.call('PUT', `${V}/provider/virtualbox/arm64`, { provider: { default_architecture: true } });
    expect(r.body).toMatchObject({ architecture: 'arm64', default_architecture: true });
    expect((await alice.call('GET', `${V}/provider/virtualbox/amd64`)).body.default_architecture).toBe(false);
    r = await alice.call('GET', '/api/v1/box/alice/multi/version/1.2.3/provider/virtualbox');
    expect(r.body).not.toHaveProperty('architecture');
    expect(r.body).toMatchObject({ original_url: null, download_url: `${base}/alice/boxes/multi/versions/1.2.3/providers/virtualbox.box` });
    // And back, as the architecture page's example does.
    await alice.call('PUT', `${V}/provider/virtualbox/amd64`, { provider: { default_architecture: true } });
    expect((await alice.call('GET', '/api/v1/box/alice/multi/version/1.2.3/provider/virtualbox')).body.original_url).toBe(
      'https://example.com/virtualbox-1.2.3.box',
    );
  });

  test('permissions: anonymous callers get 401, others 403 or 404, for every kind of v2 write', async () => {
    expect((await anon.call('POST', `${V}/providers`, { provider: { name: 'libvirt' } })).status).toBe(401);
    expect((await anon.call('GET', `${V}/provider/virtualbox/amd64/upload`)).status).toBe(401);
    // An unreleased version is invisible to others: 404 (403 once released, in the next test).
    expect((await bob.call('POST', `${V}/providers`, { provider: { name: 'libvirt' } })).status).toBe(404);
    expect((await bob.call('DELETE', `${V}/provider/virtualbox/amd64`)).status).toBe(404);
    expect((await bob.call('PUT', `${V}/provider/virtualbox/amd64`, { provider: { default_architecture: true } })).status).toBe(404);
    expect((await bob.call('GET', `${V}/provider/virtualbox/amd64`)).status).toBe(404);
    expect((await anon.call('GET', '/api/v2/authenticate')).status).toBe(401);
    expect((await alice.call('GET', '/api/v2/authenticate')).body).toEqual({ user: { username: 'alice' } });
  });

  test('uploads per architecture (plain and direct with its callback), release, metadata, downloads by architecture', async () => {
    // Upload a provider: the amd64 build (its URL is replaced by the hosted file).
    let r = await alice.call('GET', `${V}/provider/virtualbox/amd64/upload`);
    expect(Object.keys(r.body)).toEqual(['upload_path']);
    expect((await putFile(r.body.upload_path, amd64File)).status).toBe(200);

    // Upload directly to backend storage: the arm64 build, then the callback with authentication.
    r = await alice.call('GET', `${V}/provider/virtualbox/arm64/upload/direct`);
    expect(Object.keys(r.body).sort()).toEqual(['callback', 'upload_path']);
    expect(r.body.callback).toMatch(new RegExp(`^${base}${V}/provider/virtualbox/arm64/upload/direct/[0-9a-f-]{36}$`));
    expect((await putFile(r.body.upload_path, arm64File)).status).toBe(200);
    expect((await alice.call('GET', `${V}/provider/virtualbox/arm64`)).body.hosted).toBe(false);
    const callback = new URL(r.body.callback).pathname;
    expect((await bob.call('PUT', callback)).status).toBe(404);
    r = await alice.call('PUT', callback);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ architecture: 'arm64', hosted: true });

    r = await alice.call('PUT', `${V}/release`);
    expect(r.body.status).toBe('active');
    expect((await bob.call('DELETE', `${V}/provider/virtualbox/arm64`)).status).toBe(403);
    expect((await bob.call('GET', `${V}/provider/virtualbox/arm64/upload/direct`)).status).toBe(403);
    expect((await bob.call('PUT', `${V}/provider/virtualbox/arm64`, { provider: { default_architecture: true } })).status).toBe(403);
    expect(r.body.providers.map((p: any) => [p.architecture, p.default_architecture])).toEqual([
      ['arm64', false],
      ['amd64', true],
    ]);

    // The metadata document: each architecture once, the default last (Vagrant before 2.4 keeps the last of a name).
    const meta = await anon.call('GET', '/alice/multi');
    expect(meta.body.versions).toEqual([
      {
        version: '1.2.3',
        status: 'active',
        description_html: null,
        description_markdown: '',
        providers: [
          {
            name: 'virtualbox',
            url: `${base}/alice/boxes/multi/versions/1.2.3/providers/virtualbox/arm64/vagrant.box`,
            checksum: null,
            checksum_type: null,
            architecture: 'arm64',
            default_architecture: false,
          },
          {
            name: 'virtualbox',
            url: `${base}/alice/boxes/multi/versions/1.2.3/providers/virtualbox/amd64/vagrant.box`,
            checksum: md5(amd64File),
            checksum_type: 'md5',
            architecture: 'amd64',
            default_architecture: true,
          },
        ],
      },
    ]);
    const fetch = async (url: string) => Buffer.from(await (await request(url)).body.arrayBuffer());
    expect(await fetch(meta.body.versions[0].providers[0].url)).toEqual(arm64File);
    expect(await fetch(meta.body.versions[0].providers[1].url)).toEqual(amd64File);
    // v1's download URL is the default architecture's file.
    expect(await fetch(`${base}/alice/boxes/multi/versions/1.2.3/providers/virtualbox.box`)).toEqual(amd64File);
    expect((await request(`${base}/alice/boxes/multi/versions/1.2.3/providers/virtualbox/i386/vagrant.box`)).statusCode).toBe(404);
  });

  test('reads and search: v2 lists every architecture, v1 the default of each name', async () => {
    const v2 = await anon.call('GET', '/api/v2/box/alice/multi');
    expect(v2.body.current_version.providers.map((p: any) => p.architecture)).toEqual(['arm64', 'amd64']);
    expect(v2.body.current_version.release_url).toBe(`${base}${V}/release`);
    const v1 = await anon.call('GET', '/api/v1/box/alice/multi');
    expect(v1.body.current_version.providers).toHaveLength(1);
    expect(v1.body.current_version.providers[0]).toMatchObject({ name: 'virtualbox', hosted: true });
    expect(v1.body.current_version.providers[0]).not.toHaveProperty('architecture');

    const search = async (api: string, query: string) =>
      (await anon.call('GET', `/api/${api}/search?q=multi${query}`)).body.boxes.map((b: any) => b.tag);
    expect(await search('v2', '&architecture=arm64')).toEqual(['alice/multi']);
    expect(await search('v2', '&architecture=arm64&provider=virtualbox')).toEqual(['alice/multi']);
    expect(await search('v2', '&architecture=i386')).toEqual([]);
    expect(await search('v2', '&architecture=arm64&provider=libvirt')).toEqual([]);
    expect((await anon.call('GET', '/api/v2/search?architecture=pdp11')).status).toBe(422);
    const found = (await anon.call('GET', '/api/v2/search?q=multi')).body.boxes[0];
    expect(found.current_version.providers.map((p: any) => p.architecture)).toEqual(['arm64', 'amd64']);
    expect((await anon.call('GET', '/api/v2/user/alice')).body.boxes[0].current_version.providers).toHaveLength(2);
  });

  test('deleting the default architecture makes the oldest remaining one the default; v1 deletes the default', async () => {
    await alice.call('POST', `${V}/providers`, { provider: { name: 'virtualbox', architecture: 'i386', url: 'https://example.com/i386.box' } });
    let r = await alice.call('DELETE', `${V}/provider/virtualbox/amd64`);
    expect(r.status).toBe(200);
    expect((await alice.call('GET', `${V}/provider/virtualbox/arm64`)).body.default_architecture).toBe(true);
    // v1's delete removes the default (arm64); i386 takes over.
    r = await alice.call('DELETE', '/api/v1/box/alice/multi/version/1.2.3/provider/virtualbox');
    expect(r.status).toBe(200);
    r = await alice.call('GET', '/api/v1/box/alice/multi/version/1.2.3/provider/virtualbox');
    expect(r.body.original_url).toBe('https://example.com/i386.box');
    expect((await alice.call('GET', `${V}/provider/virtualbox/i386`)).body.default_architecture).toBe(true);
    // The last valid provider of a released version stays.
    r = await alice.call('DELETE', `${V}/provider/virtualbox/i386`);
    expect(r.status).toBe(422);
    // A v1 provider is `unknown` and, as the first of its name, its default.
    await alice.createProvider('alice/multi', '1.2.3', { name: 'libvirt', url: 'https://example.com/libvirt.box' });
    expect((await alice.call('GET', `${V}/provider/libvirt/unknown`)).body).toMatchObject({ default_architecture: true });
    // Renaming the architecture (v2's update body names the new one).
    r = await alice.call('PUT', `${V}/provider/libvirt/unknown`, { provider: { architecture: 'amd64' } });
    expect(r.body).toMatchObject({ architecture: 'amd64', default_architecture: true });
    r = await alice.call('DELETE', '/api/v2/box/alice/multi');
    expect(r.status).toBe(200);
    expect((await anon.call('GET', '/alice/multi')).status).toBe(404);
  });
});
