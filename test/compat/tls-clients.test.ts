import { makeDevTls } from '../../src/engine/http/dev-tls';
import { loadTls } from '../../src/engine/http/tls';
import { compatPython, goTest, haveGo, pytest, SuiteRun } from '../helpers/compat';
import { ROOT_TOKEN, startTestServer, TestServer } from '../helpers/server';
import { tempDir } from '../helpers/storage';

/**
 * The official clients over TLS, each trusting the server's CA as its users configure it: the Go
 * clients (github.com/hashicorp/vault/api and consul/api, their KV packages) through VAULT_CACERT
 * and CONSUL_CACERT with https addresses, hvac and py-consul with verify=<the CA file>
 * (test/compat/python/test_tls.py). The certificates are --dev-tls's.
 */
describe('the official clients over TLS, trusting the CA', () => {
  let server: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    const files = await makeDevTls(tempDir());
    const tls = loadTls({ cert: { path: files.cert, flag: '--tls-cert-file' }, key: { path: files.key, flag: '--tls-key-file' }, minVersion: 'tls12', clientAuth: 'none' });
    server = await startTestServer('sqlite', { tls: { registry: tls, secrets: tls, catalog: tls } });
    env = {
      VAULT_ADDR: server.urls.secrets,
      VAULT_TOKEN: ROOT_TOKEN,
      VAULT_CACERT: files.ca,
      CONSUL_HTTP_ADDR: server.urls.catalog,
      CONSUL_HTTP_TOKEN: ROOT_TOKEN,
      CONSUL_CACERT: files.ca,
    };
  });
  afterAll(() => server.close());

  const expectPassed = (run: SuiteRun) => {
    if (run.status !== 0) throw new Error(`suite failed (exit ${run.status}):\n${run.output}`);
  };

  test('every listener is https', () => {
    for (const url of Object.values(server.urls)) expect(url).toMatch(/^https:\/\//);
  });

  test('github.com/hashicorp/vault/api and consul/api with VAULT_CACERT and CONSUL_CACERT', async () => {
    if (!haveGo()) return;
    for (const [module, packages] of [['vault-go', './kv/...'], ['consul-go', './kv/...']]) {
      const run = await goTest(module, [packages], env);
      expectPassed(run);
      expect(run.output).toMatch(/^--- PASS: /m);
    }
  }, 300_000);

  test('hvac and py-consul with verify=<the CA file>', async () => {
    const python = compatPython();
    if (!python) return;
    const run = await pytest(python, ['test_tls.py'], env);
    expectPassed(run);
    expect(run.output).toMatch(/4 passed/);
  }, 120_000);
});
