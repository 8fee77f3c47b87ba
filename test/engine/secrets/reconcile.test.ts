import { generateKeyPairSync } from 'node:crypto';
import { embeddedSecrets } from './embedded-reconcile';
import { apply, destroy } from '../../../src/reconcile';

/** The secrets kinds through the embedded engine (the CLI's in-process mode on a data directory). */
describe('secrets reconcile kinds, embedded', () => {
  const { payload, secrets: read } = embeddedSecrets();

  test('mounts, auth methods and policies: created, unchanged, updated, deleted', async () => {
    const mount = payload('secrets.mount', 'team/pki', { type: 'pki', description: 'CA', defaultLeaseTtl: 0, maxLeaseTtl: 3600 });
    expect(await apply(mount)).toBe('created');
    expect(await apply(mount)).toBe('unchanged');
    expect(await apply({ ...mount, desired: { ...mount.desired, maxLeaseTtl: 7200 } })).toBe('updated');
    expect(await read((c) => c.getMount('team/pki'))).toMatchObject({ type: 'pki', config: { max_lease_ttl: 7200 } });
    await expect(apply({ ...mount, desired: { ...mount.desired, type: 'ssh' } })).rejects.toThrow(/its type cannot change to "ssh": use another path/);
    expect(await destroy(mount)).toBe(true);
    expect(await destroy(mount)).toBe(false);

    const policy = payload('secrets.policy', 'ops', { policy: 'path "x" { capabilities = ["read"] }' });
    expect(await apply(policy)).toBe('created');
    expect(await apply(policy)).toBe('unchanged');
    expect(await apply({ ...policy, desired: { policy: '' } })).toBe('updated');
    expect(await destroy(policy)).toBe(true);
    await expect(apply({ ...policy, desired: { policy: 'path "x" { capabilities = ["fly"] }' } })).rejects.toThrow(/invalid capability "fly"/);
  });

  test('JWT config from environment variables, and a role', async () => {
    const auth = payload('secrets.auth', 'ci', { type: 'jwt', description: '', defaultLeaseTtl: 0, maxLeaseTtl: 0 });
    expect(await apply(auth)).toBe('created');
    const config = payload('secrets.jwt-config', 'ci', { jwtValidationPubkeysEnv: 'TEST_CI_PUBKEYS', boundIssuer: 'https://ci.example' });
    await expect(apply(config)).rejects.toThrow(/environment variable TEST_CI_PUBKEYS \(jwtValidationPubkeysEnv\) is not set/);
    const pems = [0, 1].map(() => generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }).toString());
    process.env.TEST_CI_PUBKEYS = pems.join('');
    try {
      expect(await apply(config)).toBe('created');
      // Key material cannot be compared, so a config naming some is written again.
      expect(await apply(config)).toBe('updated');
    } finally {
      delete process.env.TEST_CI_PUBKEYS;
    }
    expect((await read((c) => c.read('auth/ci/config')))?.data?.jwt_validation_pubkeys).toHaveLength(2);
    const role = payload('secrets.jwt-role', 'ci/deploy', { role_type: 'jwt', user_claim: 'sub', bound_audiences: ['hangar'], token_ttl: 600 });
    expect(await apply(role)).toBe('created');
    expect(await apply(role)).toBe('unchanged');
    expect(await apply({ ...role, desired: { ...role.desired, token_ttl: 900 } })).toBe('updated');
    expect(await destroy(role)).toBe(true);
    expect(await destroy(role)).toBe(false);
    expect(await destroy(config)).toBe(true);
    expect(await destroy(auth)).toBe(true);
    expect(await read((c) => c.getAuth('ci'))).toBeUndefined();
  });
});
