import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, createWriteStream, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { request } from 'undici';
import { writeBackup } from '../../../src/engine/backup/backup';
import { Manifest } from '../../../src/engine/backup/format';
import { restoreBackup, RestoreRefused, verifyBackup } from '../../../src/engine/backup/restore';
import { Engine } from '../../../src/engine/engine';
import { listen } from '../../../src/engine/http/server';
import { collectGarbage } from '../../../src/engine/registry/uploads';
import { masterKeyFingerprint } from '../../../src/engine/secrets/core/barrier';
import { CallResult, httpCaller, ROOT_TOKEN, startTestServer, TestServer, userWithToken } from '../../helpers/server';
import { freshStorage, FreshStorage, STORAGE_KINDS, tempDir } from '../../helpers/storage';
import { blobFiles, putFile, registry } from '../registry/registry-helpers';

const KINDS = STORAGE_KINDS;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** What a server answers for every object the fixture wrote, as clients read it. */
async function readAll(s: TestServer): Promise<Record<string, unknown>> {
  const vault = (path: string) => s.call('secrets', 'GET', `/v1/${path}`, { headers: { 'x-vault-token': ROOT_TOKEN } });
  const consul = (path: string) => s.call('catalog', 'GET', path, { headers: { 'x-consul-token': ROOT_TOKEN } });
  const body = (r: CallResult) => ({ status: r.status, body: r.body });
  const provider = await s.call('registry', 'GET', '/api/v1/box/alice/web/version/1.0.0/provider/virtualbox');
  const token = await consul('/v1/acl/tokens');
  const accessor = (token.body as { Description: string; AccessorID: string }[]).find((t) => t.Description === 'backup test')!.AccessorID;
  const answers = {
    box: body(await s.call('registry', 'GET', '/api/v1/box/alice/web')),
    provider: provider.body,
    kv1: body(await vault('kvb/data/app?version=1')),
    kv2: body(await vault('kvb/data/app')),
    kvMeta: body(await vault('kvb/metadata/app')),
    ca: (await s.call('secrets', 'GET', '/v1/pki/ca/pem')).text,
    certs: body(await s.call('secrets', 'LIST', '/v1/pki/certs', { headers: { 'x-vault-token': ROOT_TOKEN } })),
    role: body(await vault('pki/roles/web')),
    db: body(await vault('db/config/pg')),
    aclToken: body(await consul(`/v1/acl/token/${accessor}`)),
    catalogKv: body(await consul('/v1/kv/config/app')),
    sessions: (await consul('/v1/session/list')).body,
  };
  // The two servers listen on ports of their own; each answer has a request id of its own.
  const text = JSON.stringify(answers, (k, v: unknown) => (k === 'request_id' ? undefined : v));
  return JSON.parse(text.replace(/127\.0\.0\.1:\d+/g, 'HOST')) as Record<string, unknown>;
}

/** Objects of all three services, a box file among them. */
async function populate(s: TestServer, box: Buffer): Promise<void> {
  const expect2xx = async (r: Promise<CallResult>) => {
    const res = await r;
    if (res.status >= 300) throw new Error(`${res.status} ${res.text}`);
    return res.body;
  };
  const vault = (method: string, path: string, body?: unknown) =>
    expect2xx(s.call('secrets', method, `/v1/${path}`, { body, headers: { 'x-vault-token': ROOT_TOKEN } }));
  const consul = (method: string, path: string, body?: unknown) =>
    expect2xx(s.call('catalog', method, path, { body, headers: { 'x-consul-token': ROOT_TOKEN } }));
  const alice = registry(s, await userWithToken(s, 'alice'));
  await alice.createBox('alice', 'web', { is_private: false });
  await alice.createVersion('alice/web', '1.0.0');
  await alice.createProvider('alice/web', '1.0.0', { name: 'virtualbox', checksum: sha256(box), checksum_type: 'sha256' });
  const upload = await alice.call('GET', '/api/v1/box/alice/web/version/1.0.0/provider/virtualbox/upload');
  expect((await putFile(upload.body.upload_path, box)).status).toBe(200);
  await alice.release('alice/web', '1.0.0');

  await vault('POST', 'sys/mounts/kvb', { type: 'kv', options: { version: '2' } });
  await vault('POST', 'kvb/data/app', { data: { password: 'first-FAKEXSECRET' } });
  await vault('POST', 'kvb/data/app', { data: { password: 'second-FAKEXSECRET' } });
  await vault('POST', 'sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '87600h' } });
  await vault('POST', 'pki/root/generate/internal', { common_name: 'Backup Root', key_type: 'ec', ttl: '8760h' });
  await vault('POST', 'pki/roles/web', { allowed_domains: ['example.com'], allow_subdomains: true, max_ttl: '72h' });
  await vault('POST', 'pki/issue/web', { common_name: 'a.example.com' });
  await vault('POST', 'sys/mounts/db', { type: 'database' });
  await vault('POST', 'db/config/pg', {
    plugin_name: 'postgresql-database-plugin',
    connection_url: 'postgresql://{{username}}:{{password}}@127.0.0.1:1/postgres',
    username: 'admin',
    password: 'db-FAKEXSECRET',
    verify_connection: false,
    allowed_roles: ['ro'],
  });

  await consul('PUT', '/v1/acl/token', { Description: 'backup test', Policies: [] });
  await consul('PUT', '/v1/catalog/register', { Node: 'n1', Address: '10.0.0.1' });
  await consul('PUT', '/v1/session/create', { Node: 'n1', Name: 'lock', Checks: [] });
  await s.call('catalog', 'PUT', '/v1/kv/config/app', { raw: 'value', headers: { 'x-consul-token': ROOT_TOKEN, 'content-type': 'text/plain' } });
}

async function backupTo(file: string, source: { storage: FreshStorage['config']; dataDir: string }, includeSecretsKey = false): Promise<Manifest> {
  const out = createWriteStream(file, { mode: 0o600 });
  const manifest = await writeBackup({ storage: source.storage, dataDir: source.dataDir, includeSecretsKey }, out);
  out.end();
  await finished(out);
  return manifest;
}

/** A server over a restored target. */
async function serve(target: FreshStorage): Promise<TestServer> {
  const engine = await Engine.open({ storage: target.config, dataDir: target.dataDir, devRootToken: ROOT_TOKEN });
  const urls = await listen(engine, { registry: '127.0.0.1:0', secrets: '127.0.0.1:0', catalog: '127.0.0.1:0' });
  const probe = await startTestServerLike(engine, urls, target.dataDir);
  return probe;
}

function startTestServerLike(engine: Engine, urls: TestServer['urls'], dataDir: string): TestServer {
  return {
    engine,
    urls,
    dataDir,
    call: httpCaller(urls),
    close: () => engine.close(),
  };
}

describe.each(KINDS)('backup and restore (from %s)', (sourceKind) => {
  let source: TestServer;
  let sourceStorage: FreshStorage;
  let sourceConfig: FreshStorage['config'];
  const box = randomBytes(700 * 1024 + 3);
  const work = tempDir('hangar-backup-');
  const file = join(work, `${sourceKind}.hangar-backup`);
  let manifest: Manifest;
  const loadKeys: string[] = [];

  beforeAll(async () => {
    sourceStorage = await freshStorage(sourceKind);
    sourceConfig = sourceStorage.config;
    source = await startTestServer(sourceKind, { sharedStorage: sourceStorage });
    await populate(source, box);
  }, 60_000);
  afterAll(async () => {
    await source?.close();
    await sourceStorage?.cleanup();
  });

  test('a backup taken under load is one consistent snapshot with every table, the box files and the key fingerprint', async () => {
    // Writes one after the other while the backup runs: a consistent snapshot holds a prefix of them.
    let stop = false;
    const load = (async () => {
      for (let i = 0; !stop; i++) {
        const key = `load/${String(i).padStart(5, '0')}`;
        await source.call('catalog', 'PUT', `/v1/kv/${key}`, { raw: `v${i}`, headers: { 'x-consul-token': ROOT_TOKEN } });
        await source.call('secrets', 'POST', `/v1/kvb/data/load-${i}`, { body: { data: { i } }, headers: { 'x-vault-token': ROOT_TOKEN } });
        loadKeys.push(key);
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 300));
    manifest = await backupTo(file, { storage: sourceConfig, dataDir: source.dataDir });
    stop = true;
    await load;
    expect(statSync(file).mode % 0o1000).toBe(0o600);
    const tables = manifest.tables.map((t) => t.name);
    expect(tables).toEqual(expect.arrayContaining(['settings', 'registry_providers', 'secrets_entries', 'catalog_kv', 'catalog_sessions']));
    expect(tables).not.toContain('schema_migrations');
    // Dependency order: a table comes after those it points to.
    expect(tables.indexOf('registry_boxes')).toBeLessThan(tables.indexOf('registry_versions'));
    expect(manifest.blobs).toEqual({ count: 1, bytes: box.length });
    const key = readFileSync(join(source.dataDir, 'secrets.key'), 'utf8').trim();
    expect(manifest.secretsKey).toEqual({ fingerprint: masterKeyFingerprint(Buffer.from(key, 'base64')), included: false });
    expect(readFileSync(file).includes(Buffer.from(key))).toBe(false);
    expect(manifest.files.every((f) => /^[0-9a-f]{64}$/.test(f.sha256))).toBe(true);
    expect((await verifyBackup(file)).manifest).toEqual(manifest);
  }, 60_000);

  describe.each(KINDS)('restored into %s', (targetKind) => {
    let target: FreshStorage;
    let restored: TestServer;

    beforeAll(async () => {
      target = await freshStorage(targetKind);
      // The backup holds the key's fingerprint only: the target gets the key beside it.
      copyFileSync(join(source.dataDir, 'secrets.key'), join(target.dataDir, 'secrets.key'));
      await restoreBackup(file, { storage: target.config, dataDir: target.dataDir });
      restored = await serve(target);
    }, 60_000);
    afterAll(async () => {
      await restored?.close();
      await target?.cleanup();
    });

    test('every object reads back equal, secrets open with the key, the box downloads byte for byte', async () => {
      const [before, after] = [await readAll(source), await readAll(restored)];
      expect(after).toEqual(before);
      expect((after.kv1 as { body: { data: { data: unknown } } }).body.data.data).toEqual({ password: 'first-FAKEXSECRET' });
      const provider = await restored.call('registry', 'GET', '/api/v1/box/alice/web/version/1.0.0/provider/virtualbox');
      const download = await request(provider.body.download_url);
      expect(Buffer.from(await download.body.arrayBuffer()).equals(box)).toBe(true);
      // The restored CA's private key signs.
      const issued = await restored.call('secrets', 'POST', '/v1/pki/issue/web', {
        body: { common_name: 'b.example.com' },
        headers: { 'x-vault-token': ROOT_TOKEN },
      });
      expect(issued.status).toBe(200);
    });

    test('the load written during the backup is there as a prefix: nothing after a missing write', async () => {
      const keys = await restored.call('catalog', 'GET', '/v1/kv/load/?keys', { headers: { 'x-consul-token': ROOT_TOKEN } });
      const got = keys.status === 404 ? [] : (keys.body as string[]);
      expect(got.length).toBeGreaterThan(0);
      expect(got).toEqual(loadKeys.slice(0, got.length));
    });

    test('a second restore into it is refused and changes nothing', async () => {
      const before = await readAll(restored);
      await expect(restoreBackup(file, { storage: target.config, dataDir: target.dataDir })).rejects.toThrow(/is not empty/);
      expect(await readAll(restored)).toEqual(before);
    });
  });

  test('a corrupted backup is refused before anything changes', async () => {
    const damaged = join(work, 'damaged');
    const bytes = readFileSync(file);
    const entry = manifest.files.find((f) => f.path.startsWith('blobs/'))!;
    const at = bytes.indexOf(box.subarray(1000, 1064));
    expect(at).toBeGreaterThan(0);
    const flipped = Buffer.from(box);
    flipped[1000] = 255 - flipped[1000];
    bytes[at] = 255 - bytes[at];
    writeFileSync(damaged, bytes);
    const target = await freshStorage(sourceKind);
    try {
      copyFileSync(join(source.dataDir, 'secrets.key'), join(target.dataDir, 'secrets.key'));
      await expect(restoreBackup(damaged, { storage: target.config, dataDir: target.dataDir })).rejects.toThrow(
        new RestoreRefused(`the backup is damaged: the SHA-256 of ${entry.path} is ${sha256(flipped)}, its manifest says ${entry.sha256}`),
      );
      await expect(restoreBackup(join(work, 'nothing-here'), { storage: target.config, dataDir: target.dataDir })).rejects.toThrow(/ENOENT/);
      writeFileSync(join(work, 'cut'), readFileSync(file).subarray(0, 5000));
      await expect(restoreBackup(join(work, 'cut'), { storage: target.config, dataDir: target.dataDir })).rejects.toThrow(RestoreRefused);
      expect(readdirSync(target.dataDir)).toEqual(['secrets.key']);
    } finally {
      await target.cleanup();
    }
  });

  test('without the right key the restore is refused, naming the key it needs; with --include-secrets-key it brings its own', async () => {
    const target = await freshStorage(sourceKind);
    try {
      await expect(restoreBackup(file, { storage: target.config, dataDir: target.dataDir })).rejects.toThrow(
        `the backup's secrets are sealed with the key of fingerprint ${manifest.secretsKey.fingerprint}, which it does not hold: put that key in ${join(target.dataDir, 'secrets.key')}`,
      );
      writeFileSync(join(target.dataDir, 'secrets.key'), `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
      await expect(restoreBackup(file, { storage: target.config, dataDir: target.dataDir })).rejects.toThrow(/is not the one the backup was sealed with/);
      expect(readdirSync(target.dataDir)).toEqual(['secrets.key']);

      const withKey = join(work, `${sourceKind}-with-key`);
      const m = await backupTo(withKey, { storage: sourceConfig, dataDir: source.dataDir }, true);
      expect(m.secretsKey.included).toBe(true);
      await expect(restoreBackup(withKey, { storage: target.config, dataDir: target.dataDir })).rejects.toThrow(/is not the one the backup was sealed with/);
    } finally {
      await target.cleanup();
    }
    const empty = await freshStorage(sourceKind);
    try {
      await restoreBackup(join(work, `${sourceKind}-with-key`), { storage: empty.config, dataDir: empty.dataDir });
      expect(readFileSync(join(empty.dataDir, 'secrets.key'))).toEqual(readFileSync(join(source.dataDir, 'secrets.key')));
      expect(statSync(join(empty.dataDir, 'secrets.key')).mode % 0o1000).toBe(0o600);
      const s = await serve(empty);
      try {
        const kv = await s.call('secrets', 'GET', '/v1/kvb/data/app', { headers: { 'x-vault-token': ROOT_TOKEN } });
        expect(kv.body.data.data).toEqual({ password: 'second-FAKEXSECRET' });
      } finally {
        await s.close();
      }
    } finally {
      await empty.cleanup();
    }
  }, 60_000);

  test('a running backup holds off the removal of box files; a finished one leaves no hold', async () => {
    const alice = registry(source, await userWithToken(source, 'bob'));
    await alice.createBox('bob', 'gone', { is_private: false });
    await alice.createVersion('bob/gone', '1.0.0');
    await alice.createProvider('bob/gone', '1.0.0', { name: 'virtualbox' });
    const upload = await alice.call('GET', '/api/v1/box/bob/gone/version/1.0.0/provider/virtualbox/upload');
    await putFile(upload.body.upload_path, randomBytes(1000));
    const stored = blobFiles(source.dataDir).stored.length;
    await source.engine.storage.tx((db) => db.run('INSERT INTO backup_holds (id, expires_at) VALUES (?, ?)', ['held', Date.now() + 60_000]));
    expect((await alice.call('DELETE', '/api/v1/box/bob/gone')).status).toBe(200);
    await collectGarbage(source.engine);
    expect(blobFiles(source.dataDir).stored.length).toBe(stored);
    await source.engine.storage.tx((db) => db.run('DELETE FROM backup_holds WHERE id = ?', ['held']));
    await collectGarbage(source.engine);
    expect(blobFiles(source.dataDir).stored.length).toBe(stored - 1);
    expect(await source.engine.storage.tx((db) => db.all('SELECT * FROM backup_holds'), { readOnly: true })).toEqual([]);
    expect(existsSync(join(work, `${sourceKind}.hangar-backup.partial`))).toBe(false);
  });

  test('a backup whose output fails (a full disk) ends with that error and leaves no hold', async () => {
    let written = 0;
    const out = new Writable({
      write(chunk: Buffer, _encoding, done) {
        written += chunk.length;
        done(written > 200_000 ? new Error('ENOSPC: no space left on device') : null);
      },
    });
    await expect(writeBackup({ storage: sourceConfig, dataDir: source.dataDir }, out)).rejects.toThrow('ENOSPC');
    expect(await source.engine.storage.tx((db) => db.all('SELECT * FROM backup_holds'), { readOnly: true })).toEqual([]);
  });
});
