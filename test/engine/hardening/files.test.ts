import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { BlobStore, BlobUploadStalled } from '../../../src/engine/blobs/blob-store';
import { ManualClock } from '../../../src/engine/clock';
import { Engine } from '../../../src/engine/engine';
import { registryConfig } from '../../../src/engine/registry/config';
import { Barrier, SECRETS_KEY_ENV, SECRETS_KEY_FILE, SECRETS_KEY_FILE_ENV } from '../../../src/engine/secrets/core/barrier';
import { secretsCore } from '../../../src/engine/secrets/service';
import { startupWarnings } from '../../../src/engine/startup-warnings';
import { tempDir } from '../../helpers/storage';

const mode = (path: string) => statSync(path).mode % 0o1000;

/** Issue 18, "seen to fail": file modes, where the secrets key lives, interrupted uploads. */
describe('hardening: files at rest', () => {
  const clock = new ManualClock();
  let parent: string;
  let dataDir: string;
  let engine: Engine;

  beforeAll(async () => {
    parent = tempDir();
    dataDir = join(parent, 'not', 'yet', 'there');
    engine = await Engine.open({ storage: { kind: 'sqlite', dataDir }, dataDir, createRootToken: true, clock });
    await secretsCore(engine);
  });
  afterAll(() => engine.close());

  test('the data directory is created 0700 and every file in it is 0600', async () => {
    const blob = await BlobStore.forDataDir(dataDir).write(Readable.from([Buffer.from('box')]), 'sha256');
    const blobs = join(dataDir, 'blobs');
    expect(mode(dataDir)).toBe(0o700);
    for (const dir of [blobs, join(blobs, 'tmp'), join(blobs, blob.id.slice(0, 2))]) expect([dir, mode(dir)]).toEqual([dir, 0o700]);
    const files = ['hangar.db', 'hangar.db-wal', 'hangar.db-shm', SECRETS_KEY_FILE, 'root-token'].map((f) => join(dataDir, f));
    files.push(BlobStore.forDataDir(dataDir).path(blob.id));
    for (const file of files) expect([file, mode(file)]).toEqual([file, 0o600]);
  });

  test('the server warns when the secrets key sits beside the SQLite database, not when it lives elsewhere', () => {
    expect(startupWarnings({ dataDir, sqlite: true, env: {} })).toEqual([expect.stringMatching(/secrets\.key sits beside the database.*--secrets-key-file/)]);
    expect(startupWarnings({ dataDir, sqlite: true, secretsKeyFile: join(parent, 'elsewhere.key'), env: {} })).toEqual([]);
    expect(startupWarnings({ dataDir, sqlite: true, env: { [SECRETS_KEY_ENV]: 'k' } })).toEqual([]);
    expect(startupWarnings({ dataDir, sqlite: false, env: {} })).toEqual([]);
    const open = join(parent, 'open');
    mkdirSync(open);
    chmodSync(open, 0o755);
    expect(startupWarnings({ dataDir: open, sqlite: false, env: {} })).toEqual([expect.stringMatching(/open to other users: chmod 700/)]);
    writeFileSync(join(open, 'hangar.db'), '');
    chmodSync(join(open, 'hangar.db'), 0o644);
    expect(startupWarnings({ dataDir: open, sqlite: true, env: { [SECRETS_KEY_ENV]: 'k' } })).toEqual([
      expect.stringMatching(/open to other users/),
      expect.stringMatching(/hangar\.db is readable by other users: chmod 600/),
    ]);
  });

  test('--secrets-key-file (or HANGAR_SECRETS_KEY_FILE) keeps the key out of the data directory', async () => {
    const dir = tempDir();
    const keyDir = tempDir();
    const keyFile = join(keyDir, 'hangar.key');
    const other = await Engine.open({ storage: { kind: 'sqlite', dataDir: dir }, dataDir: dir, devRootToken: 'r', secretsKeyFile: keyFile });
    try {
      await secretsCore(other);
      expect(existsSync(join(dir, SECRETS_KEY_FILE))).toBe(false);
      expect(mode(keyFile)).toBe(0o600);
      // The embedded CLI finds the same key through the environment variable.
      const viaEnv = Barrier.fromEnvironment(dir, { [SECRETS_KEY_FILE_ENV]: keyFile });
      await expect(viaEnv.init(other.storage, 0)).resolves.not.toThrow();
    } finally {
      await other.close();
    }
  });

  test('an unseal hook (the KMS seam) supplies the key instead of any file', async () => {
    const dir = tempDir();
    const key = randomBytes(32);
    const other = await Engine.open({ storage: { kind: 'sqlite', dataDir: dir }, dataDir: dir, devRootToken: 'r', unseal: async () => key });
    try {
      await secretsCore(other);
      expect(existsSync(join(dir, SECRETS_KEY_FILE))).toBe(false);
      await expect(new Barrier(key).init(other.storage, 0)).resolves.not.toThrow();
      await expect(new Barrier(randomBytes(32)).init(other.storage, 0)).rejects.toThrow(/does not open keyring/);
    } finally {
      await other.close();
    }
  });

  test('partial files of interrupted uploads are swept once older than an upload URL lifetime, and never served', async () => {
    const tmp = join(dataDir, 'blobs', 'tmp');
    const partial = (name: string, ageMs: number) => {
      const file = join(tmp, `${name}.partial`);
      writeFileSync(file, 'half a box', { mode: 0o600 });
      const at = (clock.now() - ageMs) / 1000;
      utimesSync(file, at, at);
      return file;
    };
    const ttl = registryConfig(engine).uploadUrlTtlMs;
    const dead = partial('2f1b7a0e-0000-4000-8000-000000000001', ttl + 1000);
    const live = partial('2f1b7a0e-0000-4000-8000-000000000002', 1000);
    // A partial's id never names a served blob: served paths are <id[0..2]>/<id>, outside tmp/.
    expect(BlobStore.forDataDir(dataDir).path('2f1b7a0e-0000-4000-8000-000000000001')).not.toContain('/blobs/tmp/');

    await engine.scheduler.runOnce();
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    clock.advance(ttl);
    await engine.scheduler.runOnce();
    expect(readdirSync(tmp)).toEqual([]);
  });

  test('an upload that stalls until its partial file is swept fails with a clear error and stores nothing', async () => {
    const store = BlobStore.forDataDir(dataDir);
    const source = new Readable({ read() {} });
    const writing = store.write(source, 'sha256');
    source.push(Buffer.from('first half of a box'));
    const tmp = join(dataDir, 'blobs', 'tmp');
    // The partial file appears once the write stream has opened it (in the thread pool).
    for (let i = 0; i < 500 && !(existsSync(tmp) && readdirSync(tmp).length > 0); i++) await new Promise((r) => setTimeout(r, 10));
    expect(await store.sweepPartials(Number.MAX_SAFE_INTEGER)).toBe(1);
    source.push(Buffer.from('second half'));
    source.push(null);
    await expect(writing).rejects.toThrow(BlobUploadStalled);
    expect(readdirSync(tmp)).toEqual([]);
  });
});
