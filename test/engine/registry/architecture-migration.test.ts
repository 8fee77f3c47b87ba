import { join } from 'node:path';
import { openStorage, UniqueViolation } from '../../../src/engine/storage';
import { MIGRATIONS } from '../../../src/engine/storage/migrations';
import { PostgresStorage } from '../../../src/engine/storage/postgres/postgres-storage';
import { SqliteStorage } from '../../../src/engine/storage/sqlite/sqlite-storage';
import { freshStorage, STORAGE_KINDS } from '../../helpers/storage';

/** Migration 104 on a database that holds providers and a pending upload from before architectures. */
describe.each(STORAGE_KINDS)('registry migration 104: provider architectures (%s)', (kind) => {
  test('existing providers become architecture unknown and default; uploads survive; one row per architecture, one default', async () => {
    const fresh = await freshStorage(kind);
    const before = MIGRATIONS.filter((m) => m.version < 104 || m.version >= 200);
    const old =
      fresh.config.kind === 'sqlite'
        ? new SqliteStorage(join(fresh.config.dataDir, 'hangar.db'), before)
        : new PostgresStorage(fresh.config.url, before);
    await old.migrate();
    await old.tx(async (db) => {
      await db.run('INSERT INTO registry_owners (id, username, username_lower, kind, created_at, updated_at) VALUES (\'o\', \'alice\', \'alice\', \'user\', 1, 1)');
      await db.run('INSERT INTO registry_boxes (id, owner_id, name, name_lower, created_at, updated_at) VALUES (\'b\', \'o\', \'web\', \'web\', 1, 1)');
      await db.run(
        'INSERT INTO registry_versions (id, box_id, version, sort_key, status, created_at, updated_at) VALUES (\'v\', \'b\', \'1.0.0\', \'k\', \'active\', 1, 1)',
      );
      await db.run(
        `INSERT INTO registry_providers (id, version_id, name, name_lower, original_url, created_at, updated_at)
         VALUES ('p', 'v', 'VirtualBox', 'virtualbox', 'https://example.com/a.box', 1, 1)`,
      );
      await db.run('INSERT INTO registry_uploads (id, provider_id, token_hash, direct, expires_at, created_at) VALUES (\'u\', \'p\', \'h\', 1, 9, 1)');
    });
    await old.close();

    const storage = await openStorage(fresh.config);
    try {
      await storage.tx(async (db) => {
        expect(await db.get('SELECT name, architecture, default_architecture, original_url FROM registry_providers')).toEqual({
          name: 'VirtualBox',
          architecture: 'unknown',
          default_architecture: 1,
          original_url: 'https://example.com/a.box',
        });
        expect(await db.get('SELECT id, provider_id FROM registry_uploads')).toEqual({ id: 'u', provider_id: 'p' });
        await db.run(
          `INSERT INTO registry_providers (id, version_id, name, name_lower, architecture, default_architecture, created_at, updated_at)
           VALUES ('p2', 'v', 'virtualbox', 'virtualbox', 'arm64', 0, 2, 2)`,
        );
      });
      await expect(
        storage.tx((db) =>
          db.run(`INSERT INTO registry_providers (id, version_id, name, name_lower, architecture, created_at, updated_at)
                  VALUES ('p3', 'v', 'virtualbox', 'virtualbox', 'arm64', 3, 3)`),
        ),
      ).rejects.toBeInstanceOf(UniqueViolation);
      // One default per provider name of a version.
      await expect(
        storage.tx((db) =>
          db.run(`INSERT INTO registry_providers (id, version_id, name, name_lower, architecture, default_architecture, created_at, updated_at)
                  VALUES ('p4', 'v', 'virtualbox', 'virtualbox', 'i386', 1, 4, 4)`),
        ),
      ).rejects.toBeInstanceOf(UniqueViolation);
      // The uploads still cascade with their provider.
      await storage.tx((db) => db.run("DELETE FROM registry_providers WHERE id = 'p'"));
      expect(Number((await storage.tx((db) => db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM registry_uploads')))!.n)).toBe(0);
    } finally {
      await storage.close();
      await fresh.cleanup();
    }
  });
});
