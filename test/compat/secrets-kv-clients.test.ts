import { describeOfficialClients, secretsTarget } from '../helpers/compat';

/**
 * The official clients, unchanged, against the kv engine (v1 and v2): the Go client's KVv1/KVv2
 * helpers and the cubbyhole (test/compat/vault-go/kv) and hvac's secrets.kv.v1/v2
 * (test/compat/python/test_vault_kv.py), each on mounts of its own in one Hangar.
 */
describeOfficialClients('kv engine with the official clients', () => secretsTarget(), {
  goPackages: ['./kv/...'],
  pythonFiles: ['test_vault_kv.py'],
  checkGo: (output) => expect(output).toMatch(/--- PASS: TestKVv1[\s\S]*--- PASS: TestKVv2[\s\S]*--- PASS: TestCubbyhole/),
  checkPython: (output) => expect(output).toMatch(/3 passed/),
});
