import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { startServerProcess } from '../../helpers/cli';
import { freshStorage, tempDir } from '../../helpers/storage';

async function putKey(catalog: string, key: string, token?: string): Promise<number> {
  const res = await request(`${catalog}/v1/kv/${key}`, { method: 'PUT', body: 'v', headers: token ? { 'x-consul-token': token } : {} });
  await res.body.dump();
  return res.statusCode;
}

/** Issue 18, "seen to fail": what `hangar server` does by default, started as users start it. */
describe('hardening: hangar server defaults', () => {
  test('outside --dev: the data directory is created 0700, anonymous catalog callers are denied, the key beside the database is warned about', async () => {
    const dataDir = join(tempDir(), 'fresh', 'data');
    const server = await startServerProcess(['--data', dataDir]);
    try {
      expect(statSync(dataDir).mode % 0o1000).toBe(0o700);
      expect(server.stderr()).toMatch(/Warning: the secrets key .*secrets\.key sits beside the database/);
      expect(server.stderr()).not.toMatch(/DEV MODE/);
      expect(await putKey(server.urls.catalog, 'anonymous')).toBe(403);
      const root = readFileSync(join(dataDir, 'root-token'), 'utf8').trim();
      expect(await putKey(server.urls.catalog, 'with-token', root)).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test('--dev keeps allow, and says so in a banner', async () => {
    const server = await startServerProcess(['--dev']);
    try {
      expect(server.stderr()).toMatch(/DEV MODE: not for production/);
      expect(server.stderr()).toMatch(/anonymous callers read and write everything \(--catalog-default-policy allow\)/);
      expect(await putKey(server.urls.catalog, 'anonymous')).toBe(200);
    } finally {
      await server.stop();
    }
  });

  const withPostgres = process.env.HANGAR_TEST_POSTGRES_URL ? test : test.skip;
  withPostgres('--storage postgres creates a missing --data directory (0700) for the root token; a key file elsewhere draws no warning', async () => {
    const storage = await freshStorage('postgres');
    const url = storage.config.kind === 'postgres' ? storage.config.url : '';
    const dataDir = join(tempDir(), 'missing');
    const keyFile = join(tempDir(), 'hangar.key');
    const server = await startServerProcess(['--storage', 'postgres', '--postgres-url', url, '--data', dataDir, '--secrets-key-file', keyFile]);
    try {
      expect(statSync(dataDir).mode % 0o1000).toBe(0o700);
      expect(statSync(join(dataDir, 'root-token')).mode % 0o1000).toBe(0o600);
      expect(server.stderr()).not.toMatch(/Warning/);
      const res = await request(`${server.urls.secrets}/v1/sys/mounts`, { headers: { 'x-vault-token': readFileSync(join(dataDir, 'root-token'), 'utf8').trim() } });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
      expect(statSync(keyFile).mode % 0o1000).toBe(0o600);
    } finally {
      expect(await server.stop()).toBe(0);
      await storage.cleanup();
    }
  });
});
