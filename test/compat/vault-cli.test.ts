import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newKey, sign } from '../engine/secrets/jwt-helpers';
import { COMPAT_DIR, runSuite } from '../helpers/compat';
import { havePostgres, startTargetPostgres, TargetPostgres } from '../helpers/postgres-target';
import { publicServiceBinary } from '../helpers/public-tools';
import { ROOT_TOKEN, startTestServer, TestServer } from '../helpers/server';

/**
 * The public service's own CLI, unchanged, runs the everyday commands of its tutorials against
 * Hangar (test/compat/vault-cli/everyday.sh: secrets, kv v1 and v2, policies, tokens, PKI with
 * issuers, transit, ssh, a database lease, jwt login, operator).
 */
const vault = publicServiceBinary('vault');
const runnable = vault !== undefined && havePostgres();

(runnable ? describe : describe.skip)('the vault CLI against Hangar', () => {
  let server: TestServer;
  let target: TargetPostgres;
  beforeAll(async () => {
    [server, target] = await Promise.all([startTestServer('sqlite'), startTargetPostgres()]);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await target?.stop();
  });

  test('everyday commands', async () => {
    const key = await newKey('cli', 'ES256');
    const jwt = await sign(key, { sub: 'pipeline', aud: 'hangar-cli' }, Date.now());
    const run = await runSuite('bash', [join(COMPAT_DIR, 'vault-cli', 'everyday.sh')], mkdtempSync(join(tmpdir(), 'vault-cli-')), {
      VAULT_BIN: vault!,
      VAULT_ADDR: server.urls.secrets,
      VAULT_TOKEN: ROOT_TOKEN,
      // No token helper file in the runner's home, no update checks.
      VAULT_CONFIG_PATH: '/dev/null',
      DB_URL_TEMPLATE: target.urlTemplate,
      DB_USER: target.adminUser,
      DB_PASSWORD: target.adminPassword,
      JWT_PUBLIC_KEY: key.publicPem,
      JWT: jwt,
    });
    if (run.status !== 0) console.log(run.output);
    expect(run.output).toContain('vault CLI: every step passed');
    expect(run.status).toBe(0);
  }, 300_000);
});
