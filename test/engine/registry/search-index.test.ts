import { join } from 'node:path';
import { registry } from './registry-helpers';
import { boxTerms, matchingBoxIds, searchDocument } from '../../../src/engine/registry/search-index';
import { openStorage } from '../../../src/engine/storage';
import { MIGRATIONS } from '../../../src/engine/storage/migrations';
import { PostgresStorage } from '../../../src/engine/storage/postgres/postgres-storage';
import { SqliteStorage } from '../../../src/engine/storage/sqlite/sqlite-storage';
import { ROOT_TOKEN, startTestServer, TestServer, userWithToken } from '../../helpers/server';
import { freshStorage, STORAGE_KINDS } from '../../helpers/storage';

/**
 * The full-text index of search (registry_search) is kept in step by every write that changes what
 * search matches; these check the answers of search after each kind of write, for the owner, another
 * user, an organization member and anonymous callers.
 */
describe.each(STORAGE_KINDS)('registry search index maintenance (%s)', (kind) => {
  let server: TestServer;
  let alice: ReturnType<typeof registry>;
  let bob: ReturnType<typeof registry>;
  let anonymous: ReturnType<typeof registry>;

  beforeAll(async () => {
    server = await startTestServer(kind);
    alice = registry(server, await userWithToken(server, 'alice'));
    bob = registry(server, await userWithToken(server, 'bob'));
    anonymous = registry(server);
  });
  afterAll(() => server.close());

  const tags = async (client: ReturnType<typeof registry>, query: string) => {
    const res = await client.call('GET', `/api/v1/search?${query}`);
    expect(res.status).toBe(200);
    return (res.body.boxes as { tag: string }[]).map((b) => b.tag).sort();
  };

  test('a box is found once released, by its words and providers, and no longer after a revoke', async () => {
    await alice.createBox('alice', 'zephyr-web', { is_private: false, short_description: 'Quokka server' });
    await alice.createVersion('alice/zephyr-web', '1.0.0');
    await alice.createProvider('alice/zephyr-web', '1.0.0', { name: 'libvirt', url: 'https://example.com/a.box' });
    expect(await tags(anonymous, 'q=zephyr')).toEqual([]);
    await alice.release('alice/zephyr-web', '1.0.0');
    for (const q of ['q=zephyr', 'q=zep%20web', 'q=quok', 'q=ALICE%20zephyr', 'q=zephyr&provider=libvirt', 'q=zephyr&architecture=unknown']) {
      expect([q, await tags(anonymous, q)]).toEqual([q, ['alice/zephyr-web']]);
    }
    expect(await tags(anonymous, 'q=zephyr&provider=virtualbox')).toEqual([]);
    expect(await tags(anonymous, 'q=zephyr%20nope')).toEqual([]);

    // A provider added to the current version, renamed, given an architecture, deleted.
    await alice.createProvider('alice/zephyr-web', '1.0.0', { name: 'hyperv', url: 'https://example.com/b.box' });
    expect(await tags(anonymous, 'q=zephyr&provider=hyperv')).toEqual(['alice/zephyr-web']);
    const renamed = await alice.call('PUT', '/api/v1/box/alice/zephyr-web/version/1.0.0/provider/hyperv', { provider: { name: 'vmware_desktop' } });
    expect(renamed.status).toBe(200);
    expect(await tags(anonymous, 'q=zephyr&provider=hyperv')).toEqual([]);
    expect(await tags(anonymous, 'q=zephyr&provider=vmware_desktop')).toEqual(['alice/zephyr-web']);
    const v2 = await alice.call('POST', '/api/v2/box/alice/zephyr-web/version/1.0.0/providers', {
      provider: { name: 'libvirt', architecture: 'arm64', url: 'https://example.com/c.box' },
    });
    expect(v2.status).toBe(200);
    expect(await tags(anonymous, 'provider=libvirt&architecture=arm64&q=zephyr')).toEqual(['alice/zephyr-web']);
    expect(await tags(anonymous, 'provider=vmware_desktop&architecture=arm64&q=zephyr')).toEqual([]);
    expect((await alice.call('DELETE', '/api/v1/box/alice/zephyr-web/version/1.0.0/provider/vmware_desktop')).status).toBe(200);
    expect(await tags(anonymous, 'q=zephyr&provider=vmware_desktop')).toEqual([]);

    // A newer released version without libvirt becomes current: the filter follows it.
    await alice.createVersion('alice/zephyr-web', '2.0.0');
    await alice.createProvider('alice/zephyr-web', '2.0.0', { name: 'virtualbox', url: 'https://example.com/d.box' });
    await alice.release('alice/zephyr-web', '2.0.0');
    expect(await tags(anonymous, 'q=zephyr&provider=libvirt')).toEqual([]);
    expect(await tags(anonymous, 'q=zephyr&provider=virtualbox')).toEqual(['alice/zephyr-web']);
    await alice.revoke('alice/zephyr-web', '2.0.0');
    expect(await tags(anonymous, 'q=zephyr&provider=libvirt')).toEqual(['alice/zephyr-web']);
    await alice.revoke('alice/zephyr-web', '1.0.0');
    expect(await tags(anonymous, 'q=zephyr')).toEqual([]);
    expect(await tags(alice, 'q=zephyr')).toEqual([]);
  });

  test('renaming a box or changing its description changes the words it is found by; deleting it removes it', async () => {
    await alice.publishedBox('alice/wombat', '1.0.0', { short_description: 'first words' });
    expect(await tags(anonymous, 'q=wombat%20first')).toEqual(['alice/wombat']);
    const changed = await alice.call('PUT', '/api/v1/box/alice/wombat', { box: { name: 'numbat', short_description: 'second words' } });
    expect(changed.status).toBe(200);
    expect(await tags(anonymous, 'q=wombat')).toEqual([]);
    expect(await tags(anonymous, 'q=first')).toEqual([]);
    expect(await tags(anonymous, 'q=numbat%20second')).toEqual(['alice/numbat']);
    expect((await alice.call('DELETE', '/api/v1/box/alice/numbat')).status).toBe(200);
    expect(await tags(anonymous, 'q=numbat')).toEqual([]);
    // The index holds no document of a box that is gone.
    const left = await server.engine.storage.tx((db) => db.all('SELECT s.box_id FROM registry_search s LEFT JOIN registry_boxes b ON b.id = s.box_id WHERE b.id IS NULL'));
    expect(left).toEqual([]);
  });

  test('private boxes are found only by their owner and its organizations’ members, also after visibility changes', async () => {
    const org = await server.call('registry', 'POST', '/api/v1/admin/organizations', {
      body: { organization: { username: 'crew', owner: 'alice' } },
      headers: { authorization: `Bearer ${ROOT_TOKEN}` },
    });
    expect(org.status).toBe(200);
    await alice.publishedBox('alice/secretive', '1.0.0', { is_private: true, short_description: 'hidden gem' });
    await alice.publishedBox('crew/cabin', '1.0.0', { is_private: true, short_description: 'hidden cabin' });
    expect(await tags(alice, 'q=hidden')).toEqual(['alice/secretive', 'crew/cabin']);
    expect(await tags(bob, 'q=hidden')).toEqual([]);
    expect(await tags(anonymous, 'q=hidden')).toEqual([]);
    expect(await tags(anonymous, 'q=hid&provider=virtualbox')).toEqual([]);
    expect(await tags(anonymous, 'provider=virtualbox&q=secretive')).toEqual([]);
    expect((await alice.call('PUT', '/api/v1/organization/crew/members/bob', { member: { role: 'member' } })).status).toBe(200);
    expect(await tags(bob, 'q=hidden')).toEqual(['crew/cabin']);
    expect((await alice.call('DELETE', '/api/v1/organization/crew/members/bob')).status).toBe(200);
    expect(await tags(bob, 'q=hidden')).toEqual([]);

    await alice.call('PUT', '/api/v1/box/alice/secretive', { box: { is_private: false } });
    expect(await tags(anonymous, 'q=hidden')).toEqual(['alice/secretive']);
    expect(await tags(bob, 'q=hidden')).toEqual(['alice/secretive']);
    await alice.call('PUT', '/api/v1/box/alice/secretive', { box: { is_private: true } });
    expect(await tags(anonymous, 'q=hidden')).toEqual([]);
    expect(await tags(bob, 'q=hidden')).toEqual([]);
    expect(await tags(registry(server, ROOT_TOKEN), 'q=hidden')).toEqual(['alice/secretive', 'crew/cabin']);
  });
});

/** Migration 105 fills the index from the term table and the providers as the application writes it. */
describe.each(STORAGE_KINDS)('registry migration 105: search index (%s)', (kind) => {
  test('documents of existing released boxes have the tokens the application would write', async () => {
    const fresh = await freshStorage(kind);
    const before = MIGRATIONS.filter((m) => m.version < 105 || m.version >= 200);
    const old =
      fresh.config.kind === 'sqlite'
        ? new SqliteStorage(join(fresh.config.dataDir, 'hangar.db'), before)
        : new PostgresStorage(fresh.config.url, before);
    await old.migrate();
    const terms = boxTerms('Alice', 'my_web.box-1', 'Ünïcode wörds, café 42');
    await old.tx(async (db) => {
      await db.run("INSERT INTO registry_owners (id, username, username_lower, kind, created_at, updated_at) VALUES ('o', 'Alice', 'alice', 'user', 1, 1)");
      for (const [id, name, isPrivate, current] of [['b1', 'my_web.box-1', 0, 'v1'], ['b2', 'draft', 1, null], ['b3', 'hush', 1, 'v3']] as const) {
        await db.run(
          'INSERT INTO registry_boxes (id, owner_id, name, name_lower, short_description, is_private, current_version_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, 1)',
          [id, 'o', name, name.toLowerCase(), id === 'b1' ? 'Ünïcode wörds, café 42' : '', isPrivate, current],
        );
      }
      await db.run("INSERT INTO registry_versions (id, box_id, version, sort_key, status, created_at, updated_at) VALUES ('v1', 'b1', '1.0.0', 'k', 'active', 1, 1)");
      await db.run("INSERT INTO registry_versions (id, box_id, version, sort_key, status, created_at, updated_at) VALUES ('v3', 'b3', '1.0.0', 'k', 'active', 1, 1)");
      await db.run(
        "INSERT INTO registry_providers (id, version_id, name, name_lower, architecture, default_architecture, created_at, updated_at) VALUES ('p1', 'v1', 'VMware_Desktop', 'vmware_desktop', 'arm64', 1, 1, 1)",
      );
      await db.run(
        "INSERT INTO registry_providers (id, version_id, name, name_lower, architecture, default_architecture, created_at, updated_at) VALUES ('p2', 'v1', 'libvirt', 'libvirt', 'unknown', 1, 1, 1)",
      );
      await db.run(
        "INSERT INTO registry_providers (id, version_id, name, name_lower, architecture, default_architecture, created_at, updated_at) VALUES ('p3', 'v1', 'libvirt', 'libvirt', 'amd64', 0, 1, 1)",
      );
      for (const term of terms) await db.run("INSERT INTO registry_box_terms (term, box_id) VALUES (?, 'b1')", [term]);
      for (const term of boxTerms('Alice', 'hush', '')) await db.run("INSERT INTO registry_box_terms (term, box_id) VALUES (?, 'b3')", [term]);
    });
    await old.close();

    const storage = await openStorage(fresh.config);
    try {
      const docs = await storage.tx((db) => db.all<{ box_id: string; doc: string }>('SELECT box_id, doc FROM registry_search ORDER BY box_id'));
      const tokens = (doc: string) => doc.split(' ').sort();
      const unique = (doc: string) => [...new Set(doc.split(' '))].sort();
      expect(docs.map((d) => d.box_id)).toEqual(['b1', 'b3']);
      const providers = [
        { name_lower: 'vmware_desktop', architecture: 'arm64' },
        { name_lower: 'libvirt', architecture: 'unknown' },
        { name_lower: 'libvirt', architecture: 'amd64' },
      ];
      expect(unique(docs[0].doc)).toEqual(tokens(searchDocument({ terms, providers })));
      expect(tokens(docs[1].doc)).toEqual(tokens(searchDocument({ terms: boxTerms('Alice', 'hush', ''), providers: [] })));
      // The index finds the migrated boxes by their words and providers.
      const found = await storage.tx((db) => matchingBoxIds(db, kind, { words: ['wör', 'caf', '42'], provider: 'LIBVIRT', architecture: 'amd64' }, 10));
      expect(found).toEqual(['b1']);
      expect(await storage.tx((db) => matchingBoxIds(db, kind, { words: ['my'], provider: 'vmware_desktop', architecture: 'amd64' }, 10))).toEqual([]);
    } finally {
      await storage.close();
    }
  });
});
