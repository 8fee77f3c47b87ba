import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startSecrets, SecretsTestServer } from './helpers';
import { mountTestEngine } from './test-engine';
import { Engine } from '../../../src/engine/engine';
import { Barrier, SECRETS_KEY_ENV, SECRETS_KEY_FILE } from '../../../src/engine/secrets/core/barrier';
import { secretsCore } from '../../../src/engine/secrets/service';
import { storedText } from '../../helpers/raw-db';
import { STORAGE_KINDS, freshStorage } from '../../helpers/storage';

describe.each(STORAGE_KINDS)('barrier (%s)', (kind) => {
  let s: SecretsTestServer;
  beforeAll(async () => {
    s = await startSecrets(kind);
    await mountTestEngine(s.engine, s.v);
  });
  afterAll(() => s.close());

  test('the key file is created with mode 0600 in the data directory', () => {
    const file = join(s.dataDir, SECRETS_KEY_FILE);
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode % 0o1000).toBe(0o600);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')).toHaveLength(32);
  });

  test('generated secrets, private keys, tokens and policies do not appear in the stored bytes', async () => {
    const creds = await s.v('GET', 'test/creds/app');
    expect(creds.status).toBe(200);
    const { password, private_key: privateKey } = creds.body.data;
    const token = await s.tokenWith('path "test/*" { capabilities = ["read"] } # marker-policy-text');
    await s.v('PUT', 'test/items/x', { value: 'item-value-marker-9f3a' });
    const stored = await storedText(s.engine.storage, s.dataDir);
    const keyBody = privateKey.split('\n')[1];
    expect(stored).toContain('test/creds/app/'); // the lease id is an index, in plaintext
    for (const secret of [password, keyBody, token, 'marker-policy-text', 'item-value-marker-9f3a']) {
      expect(stored).not.toContain(secret);
    }
    // The secret can be read back, so it was stored (sealed), not dropped.
    const core = await secretsCore(s.engine);
    const mount = await s.engine.storage.tx(async (db) => core.mounts.get(db, 'test/'));
    const issued = await s.engine.storage.tx(async (db) => core.store(db, mount!).get<{ password: string }>(`issued/${creds.body.data.id}`));
    expect(issued?.password).toBe(password);
  });

  test('rotation adds a keyring term without downtime: old values stay readable, new ones use the new term', async () => {
    await s.v('PUT', 'test/items/before', { value: 'old' });
    const before = await s.v('GET', 'sys/key-status');
    expect(before.status).toBe(200);
    const rotated = await s.v('PUT', 'sys/rotate');
    expect(rotated.status).toBe(204);
    const after = await s.v('GET', 'sys/key-status');
    expect(after.body.data.term).toBe(before.body.data.term + 1);
    expect(after.body.term).toBe(after.body.data.term);
    expect((await s.v('GET', 'test/items/before')).body.data).toEqual({ value: 'old' });
    // The rotating server seals new writes under the new term at once (others within a second).
    await s.v('PUT', 'test/items/after', { value: 'new' });
    const row = await s.engine.storage.tx((db) =>
      db.get<{ sealed: string }>("SELECT sealed FROM secrets_entries WHERE path LIKE '%/items/after'"),
    );
    expect(row!.sealed.split(':')[1]).toBe(String(after.body.data.term));
    expect((await s.v('GET', 'test/items/after')).body.data).toEqual({ value: 'new' });
  });

  test('a value moved to another row does not open', async () => {
    await s.v('PUT', 'test/items/a', { value: 'A' });
    await s.v('PUT', 'test/items/b', { value: 'B' });
    await s.engine.storage.tx(async (db) => {
      const a = await db.get<{ sealed: string }>("SELECT sealed FROM secrets_entries WHERE path LIKE '%/items/a'");
      await db.run("UPDATE secrets_entries SET sealed = ? WHERE path LIKE '%/items/b'", [a!.sealed]);
    });
    const res = await s.v('GET', 'test/items/b');
    expect(res.status).toBe(500);
    expect(JSON.stringify(res.body)).not.toContain('"A"');
  });
});

describe('master key', () => {
  test('HANGAR_SECRETS_KEY replaces the key file; another key does not open the keyring', async () => {
    const storage = await freshStorage('sqlite');
    const key = randomBytes(32).toString('base64');
    const previous = process.env[SECRETS_KEY_ENV];
    process.env[SECRETS_KEY_ENV] = key;
    try {
      const engine = await Engine.open({ storage: storage.config, dataDir: storage.dataDir, devRootToken: 'r' });
      await secretsCore(engine);
      expect(existsSync(join(storage.dataDir, SECRETS_KEY_FILE))).toBe(false);
      await engine.close();
      const wrong = new Barrier(randomBytes(32));
      const engine2 = await Engine.open({ storage: storage.config, dataDir: storage.dataDir });
      await expect(wrong.init(engine2.storage, 0)).rejects.toThrow(/does not open keyring term 1/);
      await engine2.close();
    } finally {
      if (previous === undefined) delete process.env[SECRETS_KEY_ENV];
      else process.env[SECRETS_KEY_ENV] = previous;
      await storage.cleanup();
    }
  });

  test('a malformed key is refused with the fix', () => {
    expect(() => Barrier.fromEnvironment(undefined, { [SECRETS_KEY_ENV]: 'short' })).toThrow(/32 bytes.*openssl rand -base64 32/);
    expect(() => Barrier.fromEnvironment(undefined, {})).toThrow(/no secrets key/);
  });
});
