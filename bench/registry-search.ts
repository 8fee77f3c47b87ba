/**
 * Search over many boxes: p50/p99 of GET /api/v1/search (several query shapes), one request at a
 * time from autocannon in its own process, against `hangar server` on a data directory seeded with
 * N boxes (a released version each, both described in Markdown), next to a bare Fastify hello
 * world measured the same way.
 *
 *   npx ts-node --transpile-only bench/registry-search.ts [--boxes 100000] [--seconds 3]
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { autocannon, LoadResult, record, startHangar } from './autocannon';
import { startBaseline } from './catalog-load';
import { Engine } from '../src/engine/engine';
import { boxTerms, searchDocument } from '../src/engine/registry/search-index';
import { versionSortKey } from '../src/engine/registry/versions';
import { tempDir } from '../test/helpers/storage';

const WORDS = ['debian', 'ubuntu', 'alpine', 'centos', 'fedora', 'nginx', 'postgres', 'redis', 'kafka', 'web', 'db', 'cache', 'minimal', 'desktop', 'k8s', 'docker'];
const PROVIDERS = ['virtualbox', 'libvirt', 'vmware_desktop', 'hyperv'];

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { boxes: { type: 'string', default: '100000' }, seconds: { type: 'string', default: '3' } } });
  const boxes = Number(values.boxes);
  const seconds = Number(values.seconds);
  const dataDir = tempDir('hangar-bench-search-');
  // The engine creates the schema; the rows go in through node:sqlite directly, in one
  // transaction with prepared statements, so 100,000 boxes load in seconds.
  await (await Engine.open({ storage: { kind: 'sqlite', dataDir }, dataDir, devRootToken: 'bench' })).close();
  const db = new DatabaseSync(join(dataDir, 'hangar.db'));
  db.exec('PRAGMA synchronous = OFF; PRAGMA cache_size = -262144');
  // Ids in insertion order: each index grows at its end instead of splitting pages at random.
  let seq = 0;
  const nextId = () => `00000000-0000-4000-8000-${(seq++).toString(16).padStart(12, '0')}`;
  const started = Date.now();
  const owners = Array.from({ length: 1000 }, (_, i) => ({ id: nextId(), username: `owner${i}` }));
  const insertOwner = db.prepare('INSERT INTO registry_owners (id, username, username_lower, kind, profile_markdown, created_at, updated_at) VALUES (?, ?, ?, \'user\', \'\', 0, 0)');
  const insertBox = db.prepare(`INSERT INTO registry_boxes (id, owner_id, name, name_lower, short_description, description_markdown, is_private, downloads,
    current_version_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const insertVersion = db.prepare(`INSERT INTO registry_versions (id, box_id, version, sort_key, description_markdown, status, created_at, updated_at)
    VALUES (?, ?, '1.0.0', ?, ?, 'active', ?, ?)`);
  const insertProvider = db.prepare(`INSERT INTO registry_providers (id, version_id, name, name_lower, original_url, downloads, created_at, updated_at)
    VALUES (?, ?, ?, ?, 'https://example.com/x.box', 0, ?, ?)`);
  const insertTerm = db.prepare('INSERT INTO registry_box_terms (term, box_id) VALUES (?, ?)');
  const insertDocument = db.prepare('INSERT INTO registry_search (box_id, doc) VALUES (?, ?)');
  const sortKey = versionSortKey('1.0.0');
  db.exec('BEGIN');
  for (const o of owners) insertOwner.run(o.id, o.username, o.username);
  for (let i = 0; i < boxes; i++) {
    const owner = owners[i % owners.length];
    const name = `${WORDS[i % WORDS.length]}-${WORDS[(i * 7) % WORDS.length]}-${i}`;
    const description = `${WORDS[(i * 3) % WORDS.length]} box number ${i} with ${WORDS[(i * 5) % WORDS.length]}`;
    const box = nextId();
    const version = nextId();
    const at = 1_700_000_000_000 + i * 1000;
    // Descriptions in Markdown, as published boxes have them: each answer renders them to HTML.
    const markdown = `## ${name}\n\nA **${WORDS[(i * 3) % WORDS.length]}** box for [Vagrant](https://www.vagrantup.com), built with Packer:\n\n- ${description}\n- \`vagrant\` user, 20 GB disk\n`;
    insertBox.run(box, owner.id, name, name, description, markdown, i % 10 === 0 ? 1 : 0, (i * 7919) % 100_000, version, at, at);
    insertVersion.run(version, box, sortKey, `First release of *${name}*: see https://example.com/${name}/changelog.`, at, at);
    insertProvider.run(nextId(), version, PROVIDERS[i % 4], PROVIDERS[i % 4], at, at);
    // The terms and the search document the registry indexes for a box (registry/search-index.ts).
    const terms = boxTerms(owner.username, name, description);
    for (const t of terms) insertTerm.run(t, box);
    const provider = { name_lower: PROVIDERS[i % 4], architecture: 'unknown' };
    insertDocument.run(box, searchDocument({ terms, providers: [provider] }));
  }
  db.exec('COMMIT');
  db.close();
  console.log(`${boxes} boxes (10% private) of ${owners.length} owners loaded in ${((Date.now() - started) / 1000).toFixed(1)} s`);


  const baseline = await startBaseline();
  const server = await startHangar('bench', 'sqlite', ['--data', dataDir], { HANGAR_REGISTRY_RATE_LIMIT_ADDRESS: '0' }).catch((err) => {
    baseline.child.kill();
    throw err;
  });
  try {
    // One client at a time: the figure is each search's latency, not the server's throughput. The
    // server's CPU time per request (from /proc) is printed too: on a shared machine latencies
    // include waiting for a core, CPU time does not.
    const measure = async (url: string, pid: number) => {
      await autocannon({ url }, { connections: 1, amount: 20 });
      return autocannon({ url }, { connections: 1, seconds }, pid);
    };
    const cpu = (r: LoadResult) => `${Math.round(r.cpuUs ?? 0)} µs CPU/req`;
    const base = await measure(baseline.url, baseline.child.pid!);
    record({ group: 'baseline', name: 'bare Fastify hello world, one client', figure: `p99 ${base.p99} ms, ${cpu(base)}`, baseline: `p50 ${base.p50} ms` });
    const queries: [string, string][] = [
      ['empty query (top by downloads)', '/api/v1/search'],
      ['q=nginx (common word)', '/api/v1/search?q=nginx'],
      ['q="ubuntu postgres" (two common words), sort=created', '/api/v1/search?q=ubuntu%20postgres&sort=created'],
      ['q=12345 (rare)', '/api/v1/search?q=12345'],
      ['q=deb (prefix), provider=libvirt', '/api/v1/search?q=deb&provider=libvirt'],
      ['q=owner42 limit=100', '/api/v1/search?q=owner42&limit=100'],
      ['page 500 of top boxes, sort=updated asc', '/api/v1/search?sort=updated&order=asc&page=500'],
    ];
    for (const [name, path] of queries) {
      const r = await measure(`${server.urls.registry}${path}`, server.process.pid!);
      if (r.non2xx || r.errors) throw new Error(`${path}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
      record({
        group: `registry search over ${boxes.toLocaleString('en-US')} boxes`,
        name,
        figure: `p99 ${r.p99} ms (p50 ${r.p50}), ${cpu(r)}`,
        baseline: `bare Fastify p99 ${base.p99} ms, ${cpu(base)}`,
        // autocannon counts whole milliseconds: a baseline of 0 ms counts as 1.
        ratio: r.p99 / Math.max(base.p99, 1),
        cpuRatio: base.cpuUs && r.cpuUs ? base.cpuUs / r.cpuUs : undefined,
        goal: 'p99 <= 5 ms',
        met: r.p99 <= 5,
      });
    }
  } finally {
    baseline.child.kill();
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
