import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request } from 'undici';
import { ManualClock } from '../../../../src/engine/clock';
import { configureRegistry } from '../../../../src/engine/registry/config';
import { startTestServer, TestServer, userWithToken } from '../../../helpers/server';
import { STORAGE_KINDS } from '../../../helpers/storage';
import { as, blobFiles, putFile, registry } from '../registry-helpers';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe.each(STORAGE_KINDS)('registry uploads, downloads and box metadata (%s)', (kind) => {
  let server: TestServer;
  let clock: ManualClock;
  let token: string;
  let alice: ReturnType<typeof registry>;
  let anon: ReturnType<typeof registry>;
  const file = randomBytes(300 * 1024 + 17);

  beforeAll(async () => {
    clock = new ManualClock(Date.now());
    server = await startTestServer(kind, { clock });
    token = await userWithToken(server, 'alice');
    alice = registry(server, token);
    anon = registry(server);
  });
  afterAll(() => server.close());

  /** A box with version 1.0.0 and a provider without url, ready for an upload. */
  async function uploadable(name: string, provider: Record<string, unknown> = {}, isPrivate = false) {
    await alice.createBox('alice', name, { is_private: isPrivate });
    await alice.createVersion(`alice/${name}`, '1.0.0');
    await alice.createProvider(`alice/${name}`, '1.0.0', { name: 'virtualbox', ...provider });
    return `/api/v1/box/alice/${name}/version/1.0.0/provider/virtualbox`;
  }

  test('plain upload: the file streams in, the checksum is verified, the provider becomes hosted and releasable', async () => {
    const provider = await uploadable('plain', { checksum: sha256(file).toUpperCase(), checksum_type: 'SHA256' });
    const handle = await alice.call('GET', `${provider}/upload`);
    expect(handle.status).toBe(200);
    expect(Object.keys(handle.body)).toEqual(['upload_path']);
    expect(handle.body.upload_path).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/uploads\/[0-9a-f-]{36}\?token=\S+$/);

    // Sent in chunks without Content-Length or Content-Type, as the vagrant_cloud gem does.
    async function* chunks() {
      for (let i = 0; i < file.length; i += 64 * 1024) yield file.subarray(i, i + 64 * 1024);
    }
    const put = await putFile(handle.body.upload_path, chunks());
    expect(put.status).toBe(200);
    // Single use.
    expect((await putFile(handle.body.upload_path, file)).status).toBe(404);

    const read = await alice.call('GET', provider);
    expect(read.body).toMatchObject({ hosted: true, hosted_token: expect.any(String), original_url: null, checksum_type: 'sha256' });
    expect(blobFiles(server.dataDir)).toEqual({ stored: [read.body.hosted_token], partial: [] });
    await alice.release('alice/plain', '1.0.0');

    const download = await request(read.body.download_url);
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-length']).toBe(String(file.length));
    expect(Buffer.from(await download.body.arrayBuffer()).equals(file)).toBe(true);
    expect((await anon.call('GET', '/api/v1/box/alice/plain')).body.downloads).toBe(1);
  });

  test('downloads answer HEAD and Range requests; only whole downloads count', async () => {
    const provider = await uploadable('ranges');
    await putFile((await alice.call('GET', `${provider}/upload`)).body.upload_path, file);
    await alice.release('alice/ranges', '1.0.0');
    const url = (await alice.call('GET', provider)).body.download_url;

    const head = await request(url, { method: 'HEAD' });
    await head.body.text();
    expect(head.statusCode).toBe(200);
    expect(head.headers).toMatchObject({ 'content-length': String(file.length), 'accept-ranges': 'bytes' });

    const part = await request(url, { headers: { range: 'bytes=100-199' } });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 100-199/${file.length}`);
    expect(Buffer.from(await part.body.arrayBuffer()).equals(file.subarray(100, 200))).toBe(true);

    const tail = await request(url, { headers: { range: 'bytes=-10' } });
    expect(Buffer.from(await tail.body.arrayBuffer()).equals(file.subarray(file.length - 10))).toBe(true);

    const beyond = await request(url, { headers: { range: `bytes=${file.length}-` } });
    await beyond.body.text();
    expect(beyond.statusCode).toBe(416);
    expect(beyond.headers['content-range']).toBe(`bytes */${file.length}`);
    expect((await anon.call('GET', '/api/v1/box/alice/ranges')).body.downloads).toBe(0);
  });

  test('a checksum mismatch is refused and leaves the provider not ready and no file', async () => {
    const provider = await uploadable('mismatch', { checksum: 'ab'.repeat(32), checksum_type: 'sha256' });
    const before = blobFiles(server.dataDir).stored.length;
    const put = await putFile((await alice.call('GET', `${provider}/upload`)).body.upload_path, file);
    expect(put.status).toBe(422);
    expect(put.body.errors[0]).toMatch(/checksum mismatch/);
    expect((await alice.call('GET', provider)).body.hosted).toBe(false);
    expect(blobFiles(server.dataDir)).toEqual({ stored: expect.any(Array), partial: [] });
    expect(blobFiles(server.dataDir).stored.length).toBe(before);
    expect((await alice.call('PUT', '/api/v1/box/alice/mismatch/version/1.0.0/release')).status).toBe(422);
  });

  test('direct upload: the file goes to upload_path, then the authenticated callback finalizes it', async () => {
    const provider = await uploadable('direct', { checksum: createHash('md5').update(file).digest('hex'), checksum_type: 'md5' });
    const handle = (await alice.call('GET', `${provider}/upload/direct`)).body;
    expect(Object.keys(handle).sort()).toEqual(['callback', 'upload_path']);
    const callbackPath = new URL(handle.callback).pathname;
    expect(new URL(handle.callback).search).toBe('');
    // Before the file arrived the callback has nothing to finalize.
    expect((await alice.call('PUT', callbackPath)).status).toBe(422);
    expect((await putFile(handle.upload_path, file)).status).toBe(200);
    expect((await alice.call('GET', provider)).body.hosted).toBe(false);
    expect((await anon.call('PUT', callbackPath)).status).toBe(401);
    const done = await alice.call('PUT', callbackPath);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ name: 'virtualbox', hosted: true });
    expect((await alice.call('PUT', callbackPath)).status).toBe(404);
  });

  test('upload URLs expire; preparing again gives a fresh one', async () => {
    configureRegistry(server.engine, { uploadUrlTtlMs: 60_000 });
    const provider = await uploadable('expiry');
    const first = (await alice.call('GET', `${provider}/upload`)).body.upload_path;
    clock.advance(61_000);
    const late = await putFile(first, file);
    expect(late.status).toBe(404);
    expect(late.body.errors[0]).toMatch(/expired/);
    const second = (await alice.call('GET', `${provider}/upload`)).body.upload_path;
    expect(second).not.toBe(first);
    expect((await putFile(second, file)).status).toBe(200);
    configureRegistry(server.engine, { uploadUrlTtlMs: 600_000 });
  });

  test('a wrong or missing token, a JSON body or an oversized file is refused', async () => {
    const provider = await uploadable('refused');
    const url = new URL((await alice.call('GET', `${provider}/upload`)).body.upload_path);
    const wrong = `${url.origin}${url.pathname}?token=nope`;
    expect((await putFile(wrong, file)).status).toBe(404);
    expect((await putFile(`${url.origin}${url.pathname}`, file)).status).toBe(422);
    expect((await putFile(`${url.origin}/api/v1/uploads/..%2f..%2fetc?token=x`, file)).status).toBe(422);
    const json = await putFile(url.toString(), Buffer.from('{}'), { 'content-type': 'application/json' });
    expect(json.status).toBe(422);
    configureRegistry(server.engine, { maxUploadBytes: 1000 });
    const big = await putFile(url.toString(), file);
    expect(big.status).toBe(413);
    configureRegistry(server.engine, { maxUploadBytes: 64 * 1024 ** 3 });
    expect(blobFiles(server.dataDir).partial).toEqual([]);
    // The URL still works after the refusals.
    expect((await putFile(url.toString(), file)).status).toBe(200);
  });

  test('an interrupted upload leaves no file, and the provider stays not ready', async () => {
    const provider = await uploadable('interrupted');
    const url = new URL((await alice.call('GET', `${provider}/upload`)).body.upload_path);
    const stored = blobFiles(server.dataDir).stored.length;
    await new Promise<void>((resolve) => {
      const req = httpRequest(url, { method: 'PUT', headers: { 'content-length': String(file.length) } });
      req.on('error', () => resolve());
      req.write(file.subarray(0, 100_000), () => setTimeout(() => req.destroy(), 100));
      req.on('close', () => resolve());
    });
    for (let i = 0; i < 50 && blobFiles(server.dataDir).partial.length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(blobFiles(server.dataDir)).toEqual({ stored: expect.any(Array), partial: [] });
    expect(blobFiles(server.dataDir).stored.length).toBe(stored);
    expect((await alice.call('GET', provider)).body.hosted).toBe(false);
  });

  test('a provider with a url redirects its download there and counts it', async () => {
    await alice.publishedBox('alice/external');
    const p = (await anon.call('GET', '/api/v1/box/alice/external/version/1.0.0/provider/virtualbox')).body;
    const res = await request(p.download_url);
    await res.body.text();
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('https://example.com/box.box');
    expect((await anon.call('GET', '/api/v1/box/alice/external')).body.downloads).toBe(1);
  });

  test('the metadata document for vagrant box add: JSON, released versions only, private boxes need the token', async () => {
    await alice.publishedBox('alice/meta', '1.0.0', { short_description: 'Meta box' });
    await alice.createVersion('alice/meta', '2.0.0');
    await alice.createProvider('alice/meta', '2.0.0', { name: 'virtualbox', url: 'https://example.com/2.box' });
    const res = await anon.call('GET', '/alice/meta');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      name: 'alice/meta',
      description: '',
      short_description: 'Meta box',
      versions: [
        {
          version: '1.0.0',
          status: 'active',
          description_html: null,
          description_markdown: '',
          providers: [
            {
              name: 'virtualbox',
              // A provider published through v1: architecture `unknown`, its name's default (Vagrant 2.4 falls back to it).
              url: expect.stringMatching(/\/alice\/boxes\/meta\/versions\/1\.0\.0\/providers\/virtualbox\/unknown\/vagrant\.box$/),
              checksum: null,
              checksum_type: null,
              architecture: 'unknown',
              default_architecture: true,
            },
          ],
        },
      ],
    });
    const head = await request(`${server.urls.registry}/alice/meta`, { method: 'HEAD', headers: { accept: 'application/json' } });
    await head.body.text();
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toMatch(/^application\/json/);

    await uploadable('privmeta', {}, true);
    await alice.call('PUT', '/api/v1/box/alice/privmeta/version/1.0.0/provider/virtualbox', { provider: { url: 'https://example.com/p.box' } });
    await alice.release('alice/privmeta', '1.0.0');
    expect((await anon.call('GET', '/alice/privmeta')).status).toBe(404);
    expect((await alice.call('GET', '/alice/privmeta')).body.versions).toHaveLength(1);
    expect((await server.call('registry', 'GET', '/alice/privmeta', { headers: as(token) })).status).toBe(200);
    const dl = await request(`${server.urls.registry}/alice/boxes/privmeta/versions/1.0.0/providers/virtualbox.box`);
    await dl.body.text();
    expect(dl.statusCode).toBe(404);
  });

  test('deleting a box removes its files (by the background job)', async () => {
    const provider = await uploadable('cleanup');
    await putFile((await alice.call('GET', `${provider}/upload`)).body.upload_path, file);
    const blob = (await alice.call('GET', provider)).body.hosted_token;
    expect(blobFiles(server.dataDir).stored).toContain(blob);
    expect((await alice.call('DELETE', '/api/v1/box/alice/cleanup')).status).toBe(200);
    await server.engine.scheduler.runOnce();
    expect(blobFiles(server.dataDir).stored).not.toContain(blob);
  });
});
