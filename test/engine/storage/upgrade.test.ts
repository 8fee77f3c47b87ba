import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { call, FixtureManifest, normalize } from '../../../scripts/upgrade-fixture';
import { Engine } from '../../../src/engine/engine';
import { listen } from '../../../src/engine/http/server';
import { StorageConfig } from '../../../src/engine/storage';
import { freshStorage, FreshStorage, STORAGE_KINDS, tempDir } from '../../helpers/storage';
import { findPostgresBin } from '../../setup/postgres';

/**
 * Data written by earlier builds (scripts/make-upgrade-fixture) opens with this one: each question the
 * fixture's build answered gets the same answer (new fields may be added), secrets decrypt (KV values,
 * transit, a certificate issued by the old CA), and the box file downloads byte for byte.
 */
const FIXTURES = join(__dirname, '..', '..', 'fixtures', 'upgrade');
const BUILDS = readdirSync(FIXTURES);

describe.each(BUILDS.flatMap((build) => STORAGE_KINDS.map((kind) => [build, kind] as const)))('data of %s on %s', (build, kind) => {
  const dir = join(FIXTURES, build);
  const manifest = JSON.parse(readFileSync(join(dir, `${kind}.json`), 'utf8')) as FixtureManifest;
  let engine: Engine;
  let urls: Record<'registry' | 'secrets' | 'catalog', string>;
  let database: FreshStorage | undefined;

  beforeAll(async () => {
    const dataDir = tempDir('hangar-upgrade-');
    execFileSync('tar', ['xzf', join(dir, `${kind}-data.tar.gz`), '-C', dataDir]);
    let storage: StorageConfig = { kind: 'sqlite', dataDir };
    if (kind === 'postgres') {
      database = await freshStorage('postgres');
      storage = database.config;
      const url = (storage as { url: string }).url;
      const dump = execFileSync('gunzip', ['-c', join(dir, 'postgres.sql.gz')]);
      execFileSync(join(findPostgresBin()!, 'psql'), ['-q', '-v', 'ON_ERROR_STOP=1', '--dbname', url], { input: dump, stdio: ['pipe', 'ignore', 'pipe'] });
    }
    // Opening migrates: the fixture's schema up to this build's.
    engine = await Engine.open({ storage, dataDir, devRootToken: manifest.rootToken });
    urls = await listen(engine, { registry: '127.0.0.1:0', secrets: '127.0.0.1:0', catalog: '127.0.0.1:0' });
  }, 60_000);
  afterAll(async () => {
    await engine?.close();
    await database?.cleanup();
  });

  test('every object reads back as the old build wrote it', async () => {
    for (const check of manifest.checks) {
      const res = await call(urls, check.api, check.method, check.path, check.body, check.token ?? manifest.rootToken);
      expect({ check: `${check.method} ${check.path}`, status: res.status }).toEqual({ check: `${check.method} ${check.path}`, status: 200 });
      if (check.expect !== undefined) expect(normalize(res.body, urls)).toMatchObject(check.expect as object);
    }
    expect(new Set(manifest.checks.map((c) => c.api))).toEqual(new Set(['registry', 'secrets', 'catalog']));
  });

  test('the box file downloads byte for byte', async () => {
    const res = await request(`${urls.registry}${manifest.box.path}`, { headers: { connection: 'close' } });
    expect(res.statusCode).toBe(200);
    expect(createHash('sha256').update(Buffer.from(await res.body.arrayBuffer())).digest('hex')).toBe(manifest.box.sha256);
  });
});
