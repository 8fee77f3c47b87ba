import { compatPython, goTest, haveGo, pytest } from '../helpers/compat';
import { ROOT_TOKEN, startTestServer, TestServer } from '../helpers/server';

/**
 * The official clients, unchanged, against the kv engine (v1 and v2): the Go client's KVv1/KVv2
 * helpers and the cubbyhole (test/compat/vault-go/kv) and hvac's secrets.kv.v1/v2 (test/compat/python/test_vault_kv.py),
 * each on mounts of its own in one Hangar.
 */
const python = compatPython();

describe('kv engine with the official clients', () => {
  let server: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startTestServer('sqlite');
    env = { VAULT_ADDR: server.urls.secrets, VAULT_TOKEN: ROOT_TOKEN };
  }, 60_000);
  afterAll(() => server?.close());

  (haveGo() ? test : test.skip)('github.com/hashicorp/vault/api', async () => {
    const run = await goTest('vault-go', ['./kv/...'], env);
    if (run.status !== 0) console.log(run.output);
    expect(run.status).toBe(0);
    expect(run.output).toMatch(/--- PASS: TestKVv1[\s\S]*--- PASS: TestKVv2[\s\S]*--- PASS: TestCubbyhole/);
  }, 300_000);

  (python ? test : test.skip)('hvac', async () => {
    const run = await pytest(python!, ['test_vault_kv.py'], env);
    if (run.status !== 0) console.log(run.output);
    expect(run.status).toBe(0);
    expect(run.output).toMatch(/3 passed/);
  }, 120_000);
});
