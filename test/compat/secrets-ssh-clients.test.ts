import { describeOfficialClients, secretsTarget } from '../helpers/compat';

/**
 * The official clients, unchanged, against the SSH engine: the Go client (test/compat/vault-go/ssh,
 * whose certificates x/crypto/ssh checks) and hvac (test/compat/python/test_vault_ssh.py), each on
 * its own mount of one Hangar.
 */
describeOfficialClients('ssh engine with the official clients', () => secretsTarget(), {
  goPackages: ['./ssh/...'],
  pythonFiles: ['test_vault_ssh.py'],
  checkGo: (output) => expect(output).toContain('--- PASS: TestSSHEngine'),
  checkPython: (output) => expect(output).toMatch(/3 passed/),
});
