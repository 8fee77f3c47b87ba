/**
 * The box catalog's server-rendered pages against the API calls they read through: requests per
 * second and server CPU per request of `/?q=...`, `/<owner>` and `/<owner>/boxes/<name>` next to
 * GET /api/v2/search, /api/v2/user and /api/v2/box (the baseline: the same data as JSON), and of
 * a built script (/-/assets/registry.js) next to a bare Fastify hello world. `hangar server` from
 * the bundled CLI in its own process, autocannon in another.
 *
 *   npx ts-node --transpile-only bench/ui-pages.ts [--boxes 30] [--seconds 5] [--connections 10]
 */
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { autocannon, LoadResult, measureBaseline, record, reqs, startHangar } from './autocannon';

const TOKEN = 'bench';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { boxes: { type: 'string', default: '30' }, seconds: { type: 'string', default: '5' }, connections: { type: 'string', default: '10' } },
  });
  const options = { seconds: Number(values.seconds), connections: Number(values.connections) };
  const fastify = await measureBaseline(options);
  const server = await startHangar(TOKEN, 'sqlite', [], { HANGAR_REGISTRY_RATE_LIMIT_ADDRESS: '0', HANGAR_REGISTRY_RATE_LIMIT_TOKEN: '0' });
  const base = server.urls.registry;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await request(`${base}${path}`, {
      method: method as 'GET',
      headers: { 'authorization': `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
    return text;
  };
  try {
    await call('POST', '/api/v1/admin/users', { user: { username: 'alice', password: 'correct horse battery', email: 'alice@example.com' } });
    for (let i = 0; i < Number(values.boxes); i++) {
      const tag = `alice/box-${i}`;
      await call('POST', '/api/v1/boxes', { box: { username: 'alice', name: `box-${i}`, short_description: `Box number ${i}`, description: `# Box ${i}\n\nA *box*.`, is_private: false } });
      await call('POST', `/api/v1/box/${tag}/versions`, { version: { version: '1.0.0', description: 'First' } });
      await call('POST', `/api/v1/box/${tag}/version/1.0.0/providers`, { provider: { name: 'virtualbox', url: 'https://example.com/x.box' } });
      await call('PUT', `/api/v1/box/${tag}/version/1.0.0/release`);
    }
    const script = /src="(\/-\/assets\/registry\.js\?v=[0-9a-f]+)"/.exec(await call('GET', '/'))?.[1];
    if (!script) throw new Error('the start page links no script');

    const measure = async (path: string): Promise<LoadResult> => {
      await autocannon({ url: `${base}${path}` }, { ...options, seconds: 1 });
      const r = await autocannon({ url: `${base}${path}` }, options, server.process.pid);
      if (r.non2xx || r.errors) throw new Error(`${path}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
      return r;
    };
    const pairs: [string, string, string][] = [
      ['search page /?q=box', '/?q=box', '/api/v2/search?q=box&sort=downloads&order=desc&limit=10'],
      ['owner page /alice', '/alice', '/api/v2/user/alice'],
      ['box page /alice/boxes/box-3', '/alice/boxes/box-3', '/api/v2/box/alice/box-3'],
    ];
    for (const [name, page, api] of pairs) {
      const json = await measure(api);
      const html = await measure(page);
      record({
        group: 'box catalog pages',
        name,
        figure: reqs(html),
        baseline: `${api} ${reqs(json)}`,
        ratio: html.rps / json.rps,
        cpuRatio: json.cpuUs && html.cpuUs ? json.cpuUs / html.cpuUs : undefined,
      });
    }
    const asset = await measure(script);
    record({ group: 'box catalog pages', name: 'built script (ETag, cached)', figure: reqs(asset), baseline: `bare Fastify ${reqs(fastify)}`, ratio: asset.rps / fastify.rps });
  } finally {
    await server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
