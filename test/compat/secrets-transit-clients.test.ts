import { compatPython, goTest, haveGo, pytest } from '../helpers/compat';
import { ROOT_TOKEN, startTestServer, TestServer } from '../helpers/server';

/**
 * The official clients, unchanged, against the transit engine: the Go client
 * (test/compat/vault-go/transit) and hvac (test/compat/python/test_vault_transit.py), each on its
 * own mount of one Hangar.
 */
const python = compatPython();

describe('transit engine with the official clients', () => {
  let server: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startTestServer('sqlite');
    env = { VAULT_ADDR: server.urls.secrets, VAULT_TOKEN: ROOT_TOKEN };
  }, 60_000);
  afterAll(() => server?.close());

  (haveGo() ? test : test.skip)('github.com/hashicorp/vault/api', async () => {
    const run = await goTest('vault-go', ['./transit/...'], env);
    if (run.status !== 0) console.log(run.output);
    expect(run.status).toBe(0);
    expect(run.output).toMatch(/--- PASS: TestTransitEngine/);
  }, 300_000);

  (python ? test : test.skip)('hvac', async () => {
    const run = await pytest(python!, ['test_vault_transit.py'], env);
    if (run.status !== 0) console.log(run.output);
    expect(run.status).toBe(0);
    expect(run.output).toMatch(/2 passed/);
  }, 120_000);
});
