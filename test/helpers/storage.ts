import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { openStorage, Storage, StorageConfig } from '../../src/engine/storage';

/** The storage kinds every storage-dependent test runs against. PostgreSQL only when the cluster runs. */
export const STORAGE_KINDS: readonly ('sqlite' | 'postgres')[] = process.env.HANGAR_TEST_POSTGRES_URL
  ? ['sqlite', 'postgres']
  : ['sqlite'];

export function tempDir(prefix = 'hangar-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface FreshStorage {
  readonly config: StorageConfig;
  readonly dataDir: string;
  cleanup(): Promise<void>;
}

/** A fresh, empty storage of the given kind: a new SQLite file or a new PostgreSQL database. */
export async function freshStorage(kind: 'sqlite' | 'postgres'): Promise<FreshStorage> {
  const dataDir = tempDir();
  if (kind === 'sqlite') {
    return { config: { kind, dataDir }, dataDir, cleanup: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const admin = process.env.HANGAR_TEST_POSTGRES_URL!;
  const name = `hangar_${randomBytes(6).toString('hex')}`;
  const client = new Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    config: { kind, url: url.toString() },
    dataDir,
    cleanup: async () => {
      rmSync(dataDir, { recursive: true, force: true });
      const c = new Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * A fresh storage of the given kind, opened before the suite's tests (`beforeAll`) and closed and
 * removed after them (`afterAll`); read `.storage` inside the tests.
 */
export function openedStorage(kind: 'sqlite' | 'postgres'): { readonly storage: Storage } {
  let fresh: FreshStorage | undefined;
  let storage: Storage | undefined;
  beforeAll(async () => {
    fresh = await freshStorage(kind);
    storage = await openStorage(fresh.config);
  });
  afterAll(async () => {
    await storage?.close();
    await fresh?.cleanup();
  });
  return {
    get storage(): Storage {
      if (!storage) throw new Error('the storage opens in beforeAll: read it inside a test');
      return storage;
    },
  };
}
