import { openTransport } from '../../../src/client/open';
import { SecretsClient } from '../../../src/client/secrets';
import { apply, destroy } from '../../../src/reconcile';
import { openClients } from '../../../src/reconcile/clients';
import { PAYLOAD_VERSION, ResourcePayload } from '../../../src/reconcile/payload-format';
import { secretsAdConfigKind } from '../../../src/reconcile/secrets-ad-kinds';
import { haveSlapd, openldapAccount, Slapd, startSlapd } from '../../helpers/slapd';
import { tempDir } from '../../helpers/storage';

const run = haveSlapd() ? describe : describe.skip;

/** The directory kinds through the embedded engine (the CLI's in-process mode) against a private slapd. */
run('ad reconcile kinds, embedded', () => {
  const dataDir = tempDir();
  let ldap: Slapd;
  beforeAll(async () => {
    ldap = await startSlapd();
    for (const uid of ['rec-role', 'rec-lib1', 'rec-lib2']) await ldap.add(openldapAccount(ldap.suffix, uid, 'initial'));
  });
  afterAll(async () => {
    delete process.env.TEST_AD_BINDPASS;
    await ldap?.stop();
  });
  const payload = (kind: string, key: string, desired?: Record<string, unknown>): ResourcePayload => ({
    v: PAYLOAD_VERSION,
    kind: `secrets.ad-${kind}`,
    key,
    connection: { dataDir },
    ...(desired ? { desired } : {}),
  });
  const call = async <T>(fn: (c: SecretsClient) => Promise<T>): Promise<T> => {
    const transport = await openTransport({ dataDir });
    try {
      return await fn(new SecretsClient(transport));
    } finally {
      await transport.close();
    }
  };

  test('config, role, set: created, unchanged, updated in place, deleted; the bind password only from the environment', async () => {
    expect(await apply({ v: PAYLOAD_VERSION, kind: 'secrets.mount', key: 'dir', connection: { dataDir }, desired: { type: 'ad' } })).toBe('created');
    const configDesired = { url: ldap.url, binddn: ldap.managerDn, bindpassEnv: 'TEST_AD_BINDPASS', userdn: `ou=people,${ldap.suffix}`, schema: 'openldap', length: 20 };
    const config = payload('config', 'dir', configDesired);
    await expect(apply(config)).rejects.toThrow(/environment variable TEST_AD_BINDPASS \(bindpassEnv\) is not set/);
    process.env.TEST_AD_BINDPASS = ldap.managerPw;
    expect(await apply(config)).toBe('created');
    expect(await apply(config)).toBe('unchanged');
    // Nothing to drift on the settings left to the engine's defaults.
    const parsed = secretsAdConfigKind.desired.parse(configDesired);
    const clients = await openClients({ dataDir });
    const live = await secretsAdConfigKind.read(clients, 'dir', parsed).finally(() => clients.close());
    expect(live).toEqual(parsed);

    const role = payload('role', 'dir/app', { serviceAccountName: 'rec-role' });
    const set = payload('library', 'dir/team', { serviceAccountNames: ['rec-lib1'] });
    for (const p of [role, set]) {
      expect(await apply(p)).toBe('created');
      expect(await apply(p)).toBe('unchanged');
    }
    const creds = await call((c) => c.read('dir/creds/app'));
    expect(await ldap.canBind(`uid=rec-role,ou=people,${ldap.suffix}`, creds!.data!.current_password)).toBe(true);
    expect(await apply({ ...role, desired: { serviceAccountName: 'rec-role', ttl: 600 } })).toBe('updated');
    expect(await apply({ ...set, desired: { serviceAccountNames: ['rec-lib1', 'rec-lib2'], ttl: 600 } })).toBe('updated');
    expect((await call((c) => c.read('dir/library/team')))?.data).toEqual({ service_account_names: ['rec-lib1', 'rec-lib2'], ttl: 600, max_ttl: 86400, disable_check_in_enforcement: false });

    // rotate-root: an unchanged config does not write the (now stale) password back.
    await call((c) => c.read('dir/rotate-root'));
    expect(await apply(config)).toBe('unchanged');
    expect((await call((c) => c.read('dir/creds/app')))?.data?.username).toBe('rec-role');
    expect(await apply({ ...config, desired: { ...configDesired, length: 24 } })).toBe('updated');

    for (const p of [set, role, config]) {
      expect(await destroy(p)).toBe(true);
      expect(await destroy(p)).toBe(false);
    }
  });
});
