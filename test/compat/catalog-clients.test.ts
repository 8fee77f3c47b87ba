import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startChecker } from '../../src/engine/catalog/checker';
import { DEFAULT_DNS_CONFIG } from '../../src/engine/catalog/dns/config';
import { DnsServer } from '../../src/engine/catalog/dns/server';
import { CatalogServer, startCatalogServer } from '../engine/catalog/helpers';
import { COMPAT_DIR, compatPython, goTest, haveGo, pytest, SuiteRun } from '../helpers/compat';
import { ROOT_TOKEN } from '../helpers/server';

/**
 * The official clients, unchanged, against a freshly started Hangar's catalog API: the Go module
 * test/compat/consul-go (github.com/hashicorp/consul/api, pinned) and the py-consul files
 * test/compat/python/test_consul_*.py. Each reads CONSUL_HTTP_ADDR and CONSUL_HTTP_TOKEN; the Go
 * suite's DNS package resolves through the DNS interface at CONSUL_DNS_ADDR (whose token is the root token).
 */
describe('catalog: the official clients (consul/api, py-consul)', () => {
  let server: CatalogServer;
  let dns: DnsServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    // Default policy deny, so that the suites see ACLs enforced as on a locked-down server.
    server = await startCatalogServer('sqlite');
    // Health checks run, as in `hangar server`.
    await startChecker(server.engine);
    dns = await DnsServer.start(server.engine, { ...DEFAULT_DNS_CONFIG, token: ROOT_TOKEN }, { host: '127.0.0.1', port: 0 }, server.engine.logger);
    env = {
      CONSUL_HTTP_ADDR: server.urls.catalog.replace(/^http:\/\//, ''), CONSUL_HTTP_TOKEN: ROOT_TOKEN, CONSUL_HTTP_SSL: 'false', CONSUL_DNS_ADDR: dns.address,
    };
  });
  afterAll(async () => {
    await dns.close();
    await server.close();
  });

  const expectPassed = (run: SuiteRun) => {
    if (run.status !== 0) throw new Error(`suite failed (exit ${run.status}):\n${run.output}`);
  };

  test('github.com/hashicorp/consul/api: go test ./...', async () => {
    if (!haveGo()) return;
    expectPassed(await goTest('consul-go', ['./...'], env));
  }, 300_000);

  test('py-consul: pytest test_consul_*.py', async () => {
    const python = compatPython();
    if (!python) return;
    const files = readdirSync(join(COMPAT_DIR, 'python')).filter((f) => /^test_consul_.*\.py$/.test(f));
    expect(files.length).toBeGreaterThan(0);
    expectPassed(await pytest(python, files, env));
  }, 300_000);
});
