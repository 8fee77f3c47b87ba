import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { blobFiles } from './registry-helpers';
import { CatalogClient } from '../../../src/client/catalog';
import { ApiError } from '../../../src/client/errors';
import { HttpTransport } from '../../../src/client/http-transport';
import { InProcessTransport } from '../../../src/client/in-process-transport';
import { RegistryClient } from '../../../src/client/registry';
import { SecretsClient } from '../../../src/client/secrets';
import { Transport } from '../../../src/client/transport';
import { boxKind } from '../../../src/reconcile/box';
import { boxProviderKind } from '../../../src/reconcile/box-provider';
import { boxVersionKind } from '../../../src/reconcile/box-version';
import { Clients } from '../../../src/reconcile/clients';
import { differences } from '../../../src/reconcile/kind';
import { startTestServer, TestServer, userWithToken } from '../../helpers/server';
import { STORAGE_KINDS, tempDir } from '../../helpers/storage';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

describe.each(STORAGE_KINDS)('registry client and the box reconcilers (%s)', (kind) => {
  let server: TestServer;
  let token: string;
  const transports: Record<string, Transport> = {};
  const dir = tempDir();

  beforeAll(async () => {
    server = await startTestServer(kind);
    token = await userWithToken(server, 'alice');
    transports.http = new HttpTransport({ registry: server.urls.registry });
    // Not closed: closing it would close the test server's engine.
    transports['in-process'] = new InProcessTransport(server.engine);
  });
  afterAll(() => server.close());

  const clientOf = (via: string) => new RegistryClient(transports[via], token);

  test.each(['http', 'in-process'])('versions, providers and uploads (plain and direct, streamed from a file) over %s', async (via) => {
    const registry = clientOf(via);
    const box = `calls-${via}`;
    await registry.createBox('alice', box, { isPrivate: false });
    expect(await registry.getVersion('alice', box, '1.0.0')).toBeUndefined();
    expect(await registry.createVersion('alice', box, '1.0.0', 'first')).toMatchObject({ version: '1.0.0', status: 'unreleased', description_markdown: 'first' });
    expect(await registry.updateVersion('alice', box, '1.0.0', { description: 'First' })).toMatchObject({ description_markdown: 'First' });
    await expect(registry.releaseVersion('alice', box, '1.0.0')).rejects.toThrow(/HTTP 422: version 1.0.0 has no valid provider/);

    const content = randomBytes(200 * 1024 + 3);
    const file = join(dir, `${box}.box`);
    writeFileSync(file, content);
    await registry.createProvider('alice', box, '1.0.0', { name: 'virtualbox', checksum: sha256(content), checksumType: 'sha256' });
    await registry.upload('alice', box, '1.0.0', 'virtualbox', file);
    expect(await registry.getProvider('alice', box, '1.0.0', 'virtualbox')).toMatchObject({ hosted: true, checksum: sha256(content) });

    // Direct: the file, then the callback.
    await registry.createProvider('alice', box, '1.0.0', { name: 'libvirt' });
    const target = await registry.prepareUpload('alice', box, '1.0.0', 'libvirt', true);
    expect(await registry.putFile(target.upload_path, file)).toMatchObject({ success: true, hosted: false });
    expect((await registry.getProvider('alice', box, '1.0.0', 'libvirt'))!.hosted).toBe(false);
    expect(await registry.finishDirectUpload(target.callback!)).toMatchObject({ name: 'libvirt', hosted: true });
    // A refused upload: the envelope's message in the error.
    await registry.updateProvider('alice', box, '1.0.0', 'libvirt', { checksum: sha256(content), checksumType: 'sha256' });
    writeFileSync(file, 'other content');
    await expect(registry.upload('alice', box, '1.0.0', 'libvirt', file)).rejects.toThrow(/HTTP 422: checksum mismatch/);

    expect(await registry.releaseVersion('alice', box, '1.0.0')).toMatchObject({ status: 'active' });
    const download = await request(`${server.urls.registry}/alice/boxes/${box}/versions/1.0.0/providers/virtualbox.box`);
    expect(sha256(Buffer.from(await download.body.arrayBuffer()))).toBe(sha256(content));
    expect(await registry.revokeVersion('alice', box, '1.0.0')).toMatchObject({ status: 'revoked' });
    expect(await registry.updateProvider('alice', box, '1.0.0', 'libvirt', { url: 'https://example.com/l.box', checksum: '' })).toMatchObject({
      hosted: false,
      original_url: 'https://example.com/l.box',
      checksum: null,
    });
    expect(await registry.deleteProvider('alice', box, '1.0.0', 'libvirt')).toBe(true);
    expect(await registry.deleteProvider('alice', box, '1.0.0', 'libvirt')).toBe(false);
    expect(await registry.getProvider('alice', box, '1.0.0', 'libvirt')).toBeUndefined();
    expect(await registry.deleteVersion('alice', box, '1.0.0')).toBe(true);
    expect(await registry.deleteVersion('alice', box, '1.0.0')).toBe(false);
    // A missing file fails before anything is sent.
    await expect(registry.putFile(target.upload_path, join(dir, 'missing.box'))).rejects.toThrow(/ENOENT/);
  });

  test('errors name the field', async () => {
    const registry = clientOf('http');
    await registry.createBox('alice', 'errors', {});
    const err = await registry.createVersion('alice', 'errors', 'v1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(422);
    expect((err as ApiError).messages.join()).toMatch(/version\.version: must be a version number/);
  });

  test.each(['http', 'in-process'])('reconcilers over %s: create, release after the provider, re-upload on a new file, drift, delete', async (via) => {
    const transport = transports[via];
    const clients: Clients = {
      registry: new RegistryClient(transport, token),
      secrets: new SecretsClient(transport, token),
      catalog: new CatalogClient(transport, token),
      target: via,
      close: async () => {},
    };
    const box = `alice/rec-${via}`;
    const version = `${box}/2.0`;
    const provider = `${version}/virtualbox`;
    const file = join(dir, `rec-${via}.box`);
    writeFileSync(file, 'one');
    const desired = (content: string) => ({ file, checksum: sha256(content), checksumType: 'sha256' as const });

    expect(await boxKind.upsert(clients, box, { private: false })).toBe('created');
    expect(await boxVersionKind.upsert(clients, version, { description: 'v2' })).toBe('created');
    expect(await boxVersionKind.upsert(clients, version, { description: 'v2' })).toBe('unchanged');
    expect(await boxProviderKind.upsert(clients, provider, desired('one'))).toBe('created');
    expect(await boxProviderKind.upsert(clients, provider, desired('one'))).toBe('unchanged');
    expect(await boxVersionKind.upsert(clients, version, { description: 'v2', released: true })).toBe('updated');
    const first = await clients.registry.getProvider('alice', `rec-${via}`, '2.0', 'virtualbox');
    expect(first).toMatchObject({ hosted: true, checksum: sha256('one') });

    // A new file: uploaded again, the version stays released, the old file is discarded.
    writeFileSync(file, 'two');
    expect(await boxProviderKind.upsert(clients, provider, desired('two'))).toBe('updated');
    const second = await clients.registry.getProvider('alice', `rec-${via}`, '2.0', 'virtualbox');
    expect(second).toMatchObject({ hosted: true, checksum: sha256('two') });
    expect(second!.hosted_token).not.toBe(first!.hosted_token);
    expect(await clients.registry.getVersion('alice', `rec-${via}`, '2.0')).toMatchObject({ status: 'active', created_at: expect.any(String) });

    // Drift: read() gives the desired shape, so an untouched object has no differences.
    expect(differences<object>(desired('two'), (await boxProviderKind.read(clients, provider, desired('two')))!)).toEqual([]);
    expect(differences<object>(desired('three'), (await boxProviderKind.read(clients, provider, desired('three')))!)).toEqual(['file', 'checksum']);
    expect(await boxVersionKind.read(clients, version)).toEqual({ description: 'v2', released: true });
    await clients.registry.revokeVersion('alice', `rec-${via}`, '2.0');
    expect(differences({ description: 'v2', released: true }, (await boxVersionKind.read(clients, version))!)).toEqual(['released']);
    expect(await boxVersionKind.upsert(clients, version, { description: 'v2', released: true })).toBe('updated');

    // A URL provider: created, updated in place, checksum cleared with "".
    const url = { url: 'https://example.com/web.box', checksum: 'ab'.repeat(20), checksumType: 'sha1' as const };
    expect(await boxProviderKind.upsert(clients, `${version}/libvirt`, url)).toBe('created');
    expect(await boxProviderKind.upsert(clients, `${version}/libvirt`, url)).toBe('unchanged');
    expect(await boxProviderKind.upsert(clients, `${version}/libvirt`, { ...url, checksum: '', checksumType: '' })).toBe('updated');
    expect(await boxProviderKind.read(clients, `${version}/libvirt`)).toEqual({ url: url.url, checksum: '', checksumType: '' });

    // Deleting the last valid provider of a released version revokes the version first.
    expect(await boxProviderKind.delete(clients, `${version}/libvirt`)).toBe(true);
    expect(await boxProviderKind.delete(clients, provider)).toBe(true);
    expect(await boxProviderKind.delete(clients, provider)).toBe(false);
    expect(await boxVersionKind.read(clients, version)).toEqual({ description: 'v2', released: false });
    expect(await boxVersionKind.delete(clients, version)).toBe(true);
    expect(await boxVersionKind.delete(clients, version)).toBe(false);
    expect(await boxKind.delete(clients, box)).toBe(true);
    await server.engine.scheduler.runOnce();
    expect(blobFiles(server.dataDir).partial).toEqual([]);
  });

  test('architectures: providers keyed by architecture go through API v2; defaultArchitecture is applied in place', async () => {
    const transport = transports.http;
    const clients: Clients = {
      registry: new RegistryClient(transport, token),
      secrets: new SecretsClient(transport, token),
      catalog: new CatalogClient(transport, token),
      target: 'http',
      close: async () => {},
    };
    const version = 'alice/arch/1.0.0';
    const amd64 = `${version}/virtualbox/amd64`;
    const arm64 = `${version}/virtualbox/arm64`;
    const file = join(dir, 'arch-arm64.box');
    writeFileSync(file, 'arm64 build');
    expect(await boxKind.upsert(clients, 'alice/arch', { private: false })).toBe('created');
    expect(await boxVersionKind.upsert(clients, version, { description: '' })).toBe('created');
    const url = { url: 'https://example.com/amd64.box', checksum: '', checksumType: '' as const };
    expect(await boxProviderKind.upsert(clients, amd64, url)).toBe('created');
    const uploaded = { file, checksum: sha256('arm64 build'), checksumType: 'sha256' as const, defaultArchitecture: true };
    expect(await boxProviderKind.upsert(clients, arm64, uploaded)).toBe('created');
    expect(await boxProviderKind.upsert(clients, arm64, uploaded)).toBe('unchanged');
    // amd64 was the first, hence the default, until arm64 asked for it; amd64 asks nothing, so no drift.
    expect(await boxProviderKind.upsert(clients, amd64, url)).toBe('unchanged');
    const v1 = await clients.registry.getProvider('alice', 'arch', '1.0.0', 'virtualbox');
    expect(v1).toMatchObject({ hosted: true, checksum: sha256('arm64 build') });
    expect(v1).not.toHaveProperty('architecture');

    // Taking the default over is an update in place.
    expect(await boxProviderKind.upsert(clients, amd64, { ...url, defaultArchitecture: true })).toBe('updated');
    expect(await clients.registry.getProvider('alice', 'arch', '1.0.0', { name: 'virtualbox', architecture: 'amd64' })).toMatchObject({
      architecture: 'amd64',
      default_architecture: true,
    });
    expect(differences(uploaded, (await boxProviderKind.read(clients, arm64, uploaded))!)).toEqual(['defaultArchitecture']);
    // The pre-architecture key (owner/name/version/provider) still means the default architecture.
    expect((await boxProviderKind.read(clients, `${version}/virtualbox`, url))!).toMatchObject({ url: url.url });
    expect(await boxProviderKind.delete(clients, arm64)).toBe(true);
    expect(await boxProviderKind.delete(clients, arm64)).toBe(false);
    expect(await boxProviderKind.delete(clients, amd64)).toBe(true);
    expect(await boxKind.delete(clients, 'alice/arch')).toBe(true);
  });
});
