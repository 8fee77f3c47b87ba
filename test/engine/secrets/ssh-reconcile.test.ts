import { readFileSync } from 'node:fs';
import { embeddedSecrets } from './embedded-reconcile';
import { clientKey } from './ssh-helpers';
import { apply, destroy } from '../../../src/reconcile';
import { PAYLOAD_VERSION } from '../../../src/reconcile/payload-format';

/** The SSH kinds through the embedded engine (the CLI's in-process mode on a data directory). */
describe('ssh reconcile kinds, embedded', () => {
  const { dataDir, payload, secrets: call } = embeddedSecrets('secrets.ssh-');
  const caKey = () => call(async (c) => (await c.read('ops-ssh/config/ca'))?.data?.public_key as string);

  beforeAll(async () => {
    expect(await apply({ v: PAYLOAD_VERSION, kind: 'secrets.mount', key: 'ops-ssh', connection: { dataDir }, desired: { type: 'ssh' } })).toBe('created');
  });

  test('CA: generated once and kept while it matches; a new key type replaces it; an import from the environment; deleted', async () => {
    const ca = payload('ca', 'ops-ssh', { keyType: 'ssh-ed25519', keyBits: 0 });
    expect(await apply(ca)).toBe('created');
    const first = await caKey();
    expect(first).toMatch(/^ssh-ed25519 /);
    expect(await apply(ca)).toBe('unchanged');
    expect(await caKey()).toBe(first);
    expect(await apply(payload('ca', 'ops-ssh', { keyType: 'ecdsa-sha2-nistp256', keyBits: 0 }))).toBe('updated');
    expect(await caKey()).toMatch(/^ecdsa-sha2-nistp256 /);

    const key = await clientKey('ed25519');
    const imported = payload('ca', 'ops-ssh', { privateKeyEnv: 'HANGAR_TEST_SSH_CA', publicKey: key.public.split(' ').slice(0, 2).join(' ') });
    await expect(apply(imported)).rejects.toThrow(/HANGAR_TEST_SSH_CA \(privateKeyEnv\) is not set/);
    process.env.HANGAR_TEST_SSH_CA = readFileSync(key.path, 'utf8');
    try {
      expect(await apply(imported)).toBe('updated');
      expect(await apply(imported)).toBe('unchanged');
    } finally {
      delete process.env.HANGAR_TEST_SSH_CA;
    }
    expect((await caKey()).trim()).toBe(key.public.split(' ').slice(0, 2).join(' '));
    expect(await destroy(imported)).toBe(true);
    expect(await destroy(imported)).toBe(false);
  });

  test('roles and the zero-address list: created, unchanged, updated in place, deleted', async () => {
    const role = { key_type: 'otp', default_user: 'ubuntu', allowed_users: '', cidr_list: '10.0.0.0/8', exclude_cidr_list: '', port: 22 };
    const otp = payload('role', 'ops-ssh/otp', role);
    expect(await apply(otp)).toBe('created');
    expect(await apply(otp)).toBe('unchanged');
    expect(await apply({ ...otp, desired: { ...role, port: 2222 } })).toBe('updated');
    expect((await call((c) => c.read('ops-ssh/roles/otp')))?.data?.port).toBe(2222);
    const zero = payload('zeroaddress', 'ops-ssh', { roles: ['otp'] });
    expect(await apply(zero)).toBe('created');
    expect(await apply(zero)).toBe('unchanged');
    expect(await destroy(zero)).toBe(true);
    expect((await call((c) => c.read('ops-ssh/config/zeroaddress')))?.data?.roles).toEqual([]);
    expect(await destroy(otp)).toBe(true);
    expect(await destroy(otp)).toBe(false);
  });
});
