import { describeOfficialClients, secretsTarget } from '../helpers/compat';

/**
 * The official clients, unchanged, against the transit engine: the Go client
 * (test/compat/vault-go/transit) and hvac (test/compat/python/test_vault_transit.py), each on its
 * own mount of one Hangar.
 */
describeOfficialClients('transit engine with the official clients', () => secretsTarget(), {
  goPackages: ['./transit/...'],
  pythonFiles: ['test_vault_transit.py'],
  checkGo: (output) => expect(output).toMatch(/--- PASS: TestTransitEngine/),
  checkPython: (output) => expect(output).toMatch(/3 passed/),
});
