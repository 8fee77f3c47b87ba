import { secretsCore } from '../../src/engine/secrets/service';
import { startProvider } from '../engine/secrets/oidc-provider';
import { testEngine } from '../engine/secrets/test-engine';
import { describeOfficialClients, secretsTarget } from '../helpers/compat';

/**
 * The official clients, unchanged, against the secrets core: the Go client
 * (test/compat/vault-go/core: sys/, auth/token, JWT login, leases, headers, curl strings) and hvac
 * (test/compat/python/test_vault_core.py, test_vault_jwt.py). The core's test engine is registered
 * so that Logical() and leases have a real engine behind them.
 */
describeOfficialClients('secrets core with the official clients', async () => {
  // hvac's OIDC calls need a real provider to discover (test_vault_jwt.py names this client).
  const provider = await startProvider([{ client_id: 'hangar', client_secret: 'hangar-secret', redirect_uris: ['http://127.0.0.1:8250/oidc/callback'] }]);
  const hangar = await secretsTarget(async (server) => {
    (await secretsCore(server.engine)).register(testEngine);
    return { OIDC_ISSUER: provider.issuer };
  });
  return {
    env: hangar.env,
    async close() {
      await provider.close();
      await hangar.close();
    },
  };
}, {
  goPackages: ['./core/...'],
  pythonFiles: ['test_vault_core.py', 'test_vault_jwt.py'],
  checkGo: (output) => expect(output).not.toMatch(/--- (FAIL|SKIP)/),
  checkPython: (output) => {
    expect(output).not.toMatch(/skipped|failed/);
    expect(output).toMatch(/\b18 passed/);
  },
  pythonTimeoutMs: 180_000,
});
