import { describeOfficialClients, secretsTarget } from '../helpers/compat';

/**
 * The official clients, unchanged, against the transform engine: the Go client
 * (test/compat/vault-go/transform) and hvac (test/compat/python/test_vault_transform.py), each on
 * its own mount of one Hangar.
 */
describeOfficialClients('transform engine with the official clients', () => secretsTarget(), {
  goPackages: ['./transform/...'],
  pythonFiles: ['test_vault_transform.py'],
  checkGo: (output) => expect(output).toMatch(/--- PASS: TestTransformEngine/),
  checkPython: (output) => expect(output).toMatch(/4 passed/),
});
