import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiSummary, OPENAPI_PATHS } from '../../../src/engine/openapi';
import { VERSION } from '../../../src/engine/version';
import { startTestServer, TestServer } from '../../helpers/server';

const DOCS = join(__dirname, '..', '..', '..', 'docs', 'openapi');
const APIS = ['registry', 'secrets', 'catalog'] as const;

describe('OpenAPI documents', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('sqlite');
  });
  afterAll(() => server.close());

  test.each(APIS)('%s: served without a token, a valid OpenAPI 3 document, and the same as docs/openapi', async (api) => {
    const res = await server.call(api, 'GET', OPENAPI_PATHS[api]);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const { Validator } = await import('@seriousme/openapi-schema-validator'); // an ES module
    const result = await new Validator().validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const committed = JSON.parse(readFileSync(join(DOCS, `${api}.json`), 'utf8'));
    // The served document carries this build's version; the committed one the repository's (0.0.0), which a
    // release build (package.json bumped while it runs the tests, docs/releasing.md) must not see as a change.
    expect(res.body.info.version).toBe(VERSION);
    // When this fails after a route change: run `npm run openapi` and commit docs/openapi.
    expect({ ...res.body, info: { ...res.body.info, version: committed.info.version } }).toEqual(committed);
  });

  test('every route of the tables is documented, with its input schemas', async () => {
    const registry = (await server.call('registry', 'GET', OPENAPI_PATHS.registry)).body;
    const search = registry.paths['/api/v1/search'].get;
    expect(search.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['q', 'provider', 'page']));
    expect(registry.paths['/api/v1/box/{username}/{name}'].put.requestBody.content['application/json'].schema).toBeDefined();
    const secrets = (await server.call('secrets', 'GET', OPENAPI_PATHS.secrets)).body;
    expect(secrets.servers).toEqual([{ url: '/v1' }]);
    expect(secrets.paths['/sys/health'].get['x-vault-unauthenticated']).toBe(true);
    expect(secrets.paths['/{pki_mount_path}/issue/{role}'].post.requestBody).toBeDefined();
    expect(secrets.paths['/{kv_v2_mount_path}/data/{path}']).toBeDefined();
    const catalog = (await server.call('catalog', 'GET', OPENAPI_PATHS.catalog)).body;
    expect(catalog.paths['/v1/agent/metrics'].get.description).toMatch(/agent:read/);
  });

  test('docs/openapi/README.md is up to date', () => {
    expect(readFileSync(join(DOCS, 'README.md'), 'utf8')).toBe(openApiSummary());
  });
});
