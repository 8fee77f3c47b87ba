/**
 * Search over many boxes: p50/p99 of GET /api/v1/search (several query shapes) against a server
 * holding N boxes with a released version each, next to a bare Fastify hello world measured with
 * the same client in the same run.
 *
 *   npx ts-node --transpile-only bench/registry-search.ts [--boxes 100000] [--runs 200]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { request } from 'undici';
import { Engine } from '../src/engine/engine';
import { listen } from '../src/engine/http/server';
import { searchTerms } from '../src/engine/registry/boxes';
import { versionSortKey } from '../src/engine/registry/versions';
import { tempDir } from '../test/helpers/storage';
import { percentile } from './util';

const WORDS = ['debian', 'ubuntu', 'alpine', 'centos', 'fedora', 'nginx', 'postgres', 'redis', 'kafka', 'web', 'db', 'cache', 'minimal', 'desktop', 'k8s', 'docker'];
const PROVIDERS = ['virtualbox', 'libvirt', 'vmware_desktop', 'hyperv'];

async function time(url: string, runs: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    const res = await request(url);
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode}`);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times.sort((a, b) => a - b);
}

function line(name: string, t: number[], base?: number[]): void {
  const ratio = base ? `  (${(percentile(t, 50) / percentile(base, 50)).toFixed(1)}x baseline p50)` : '';
  console.log(`${name.padEnd(52)} p50 ${percentile(t, 50).toFixed(2).padStart(7)} ms  p99 ${percentile(t, 99).toFixed(2).padStart(7)} ms${ratio}`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { boxes: { type: 'string', default: '100000' }, runs: { type: 'string', default: '200' } } });
  const boxes = Number(values.boxes);
  const runs = Number(values.runs);
  const dataDir = tempDir('hangar-bench-search-');
  const engine = await Engine.open({ storage: { kind: 'sqlite', dataDir }, dataDir, devRootToken: 'bench' });

  const started = Date.now();
  const owners = Array.from({ length: 1000 }, (_, i) => ({ id: randomUUID(), username: `owner${i}` }));
  await engine.storage.tx(async (db) => {
    for (const o of owners) {
      await db.run(
        `INSERT INTO registry_owners (id, username, username_lower, kind, profile_markdown, created_at, updated_at) VALUES (?, ?, ?, 'user', '', 0, 0)`,
        [o.id, o.username, o.username],
      );
    }
  });
  for (let start = 0; start < boxes; start += 5000) {
    await engine.storage.tx(async (db) => {
      for (let i = start; i < Math.min(boxes, start + 5000); i++) {
        const owner = owners[i % owners.length];
        const name = `${WORDS[i % WORDS.length]}-${WORDS[(i * 7) % WORDS.length]}-${i}`;
        const description = `${WORDS[(i * 3) % WORDS.length]} box number ${i} with ${WORDS[(i * 5) % WORDS.length]}`;
        const box = randomUUID();
        const version = randomUUID();
        const at = 1_700_000_000_000 + i * 1000;
        await db.run(
          `INSERT INTO registry_boxes (id, owner_id, name, name_lower, short_description, description_markdown, is_private, downloads,
             current_version_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?)`,
          [box, owner.id, name, name, description, i % 10 === 0 ? 1 : 0, (i * 7919) % 100_000, version, at, at],
        );
        await db.run(
          `INSERT INTO registry_versions (id, box_id, version, sort_key, description_markdown, status, created_at, updated_at)
           VALUES (?, ?, '1.0.0', ?, '', 'active', ?, ?)`,
          [version, box, versionSortKey('1.0.0'), at, at],
        );
        await db.run(
          `INSERT INTO registry_providers (id, version_id, name, name_lower, original_url, downloads, created_at, updated_at)
           VALUES (?, ?, ?, ?, 'https://example.com/x.box', 0, ?, ?)`,
          [randomUUID(), version, PROVIDERS[i % 4], PROVIDERS[i % 4], at, at],
        );
        const terms = new Set([owner.username, name, ...searchTerms(`${owner.username} ${name}`), ...searchTerms(description)]);
        for (const t of terms) await db.run('INSERT INTO registry_box_terms (term, box_id) VALUES (?, ?)', [t, box]);
      }
    });
  }
  console.log(`${boxes} boxes (10% private) of ${owners.length} owners loaded in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const urls = await listen(engine, { registry: '127.0.0.1:0', secrets: '127.0.0.1:0', catalog: '127.0.0.1:0' });
  const bare = Fastify();
  bare.get('/', async () => ({ hello: 'world' }));
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}/`;

  await time(bareUrl, 50);
  const baseline = await time(bareUrl, runs);
  line('bare Fastify hello world (baseline)', baseline);
  const queries: [string, string][] = [
    ['top 10 by downloads (no q)', '/api/v1/search'],
    ['q=nginx (common word), limit 10', '/api/v1/search?q=nginx'],
    ['q=deb (prefix), provider=libvirt', '/api/v1/search?q=deb&provider=libvirt'],
    ['q="ubuntu postgres" (two words), sort=created', '/api/v1/search?q=ubuntu%20postgres&sort=created'],
    ['q=owner42 limit=100', '/api/v1/search?q=owner42&limit=100'],
    ['q=12345 (rare)', '/api/v1/search?q=12345'],
    ['page 500 of top boxes, sort=updated asc', '/api/v1/search?sort=updated&order=asc&page=500'],
  ];
  for (const [name, path] of queries) {
    await time(`${urls.registry}${path}`, 5);
    line(name, await time(`${urls.registry}${path}`, runs), baseline);
  }
  await bare.close();
  await engine.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
