import { describeOfficialClients, secretsTarget } from '../helpers/compat';

/**
 * The official clients, unchanged, against the PKI engine: the Go client (test/compat/vault-go/pki,
 * judged by crypto/x509 and crypto/tls) and hvac (test/compat/python/test_vault_pki.py, judged by
 * openssl), each on its own mounts of one Hangar.
 */
describeOfficialClients('pki engine with the official clients', () => secretsTarget(), {
  goPackages: ['./pki/...'],
  pythonFiles: ['test_vault_pki.py'],
  checkGo: (output) => {
    expect(output).toContain('--- PASS: TestPKIEngine');
    expect(output).toContain('--- PASS: TestPKIIssuers');
  },
  checkPython: (output) => expect(output).toMatch(/4 passed/),
});
