import { TerraformStack } from 'cdktf';
import { DirectoryLibrarySet, DirectoryRole, DirectorySchema, DirectorySecretBackend, Hangar, SecretsMount } from '../../src';
import { openTransport } from '../../src/client/open';
import { SecretsClient } from '../../src/client/secrets';
import { RunningServer, startServerProcess } from '../helpers/cli';
import { haveSlapd, openldapAccount, Slapd, startSlapd } from '../helpers/slapd';
import { terraformEnv, TerraformWorkspace } from '../helpers/terraform';

const tf = haveSlapd() ? terraformEnv() : undefined;
const describeWithTerraform = tf ? describe : describe.skip;
if (!tf) process.stderr.write('terraform/tofu, the null provider or slapd are not available: ad construct e2e tests skipped\n');

/**
 * The directory constructs deployed by Terraform against a running server (HTTP mode) and a
 * private slapd: the mount, the config (bind password from the environment, StartTLS with the
 * test CA), a role and a library set; updated in place and removed; no password in the
 * configuration or the state; destroy.
 */
describeWithTerraform('ad constructs deployed by Terraform', () => {
  jest.setTimeout(300_000);
  let server: RunningServer;
  let ldap: Slapd;
  let client: SecretsClient;
  const rootToken = `root-${Math.random().toString(36).slice(2)}-secret`;

  beforeAll(async () => {
    [server, ldap] = await Promise.all([startServerProcess(['--dev', '--dev-root-token', rootToken]), startSlapd()]);
    for (const uid of ['tf-role', 'tf-lib1', 'tf-lib2']) await ldap.add(openldapAccount(ldap.suffix, uid, 'initial'));
    client = new SecretsClient(await openTransport({ endpoints: { secrets: server.urls.secrets } }), rootToken);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await ldap?.stop();
  }, 60_000);

  test('create, update in place, remove, destroy', async () => {
    const ws = new TerraformWorkspace(tf!, { DEPLOY_TOKEN: rootToken, DIRECTORY_BIND_PASSWORD: ldap.managerPw });
    const declare = (library: string[] | undefined, roleTtl: string) =>
      ws.synth((stack: TerraformStack) => {
        new Hangar(stack, 'Hangar', { secretsUrl: server.urls.secrets, tokenEnvVar: 'DEPLOY_TOKEN' });
        const mount = new SecretsMount(stack, 'Directory', { path: 'corp/ad', type: 'ad' });
        const backend = new DirectorySecretBackend(stack, 'Config', {
          mount,
          urls: [ldap.url],
          starttls: true,
          certificate: ldap.caPem,
          binddn: ldap.managerDn,
          bindpassEnv: 'DIRECTORY_BIND_PASSWORD',
          userdn: `ou=people,${ldap.suffix}`,
          schema: DirectorySchema.OPENLDAP,
          length: 20,
        });
        new DirectoryRole(stack, 'App', { backend, name: 'app', serviceAccountName: 'tf-role', ttl: roleTtl });
        if (library) new DirectoryLibrarySet(stack, 'Ops', { backend, name: 'ops', serviceAccountNames: library, ttl: '1h' });
      });

    declare(['tf-lib1'], '1h');
    ws.deploy();
    expect((await client.read('corp/ad/config'))?.data).toMatchObject({ url: ldap.url, starttls: true, schema: 'openldap', length: 20 });
    const creds = await client.read('corp/ad/creds/app');
    expect(await ldap.canBind(`uid=tf-role,ou=people,${ldap.suffix}`, creds?.data?.current_password)).toBe(true);
    const out = await client.write('corp/ad/library/ops/check-out', {});
    expect(await ldap.canBind(`uid=tf-lib1,ou=people,${ldap.suffix}`, out?.data?.password)).toBe(true);
    expect(ws.deploy()).toMatch(/0 added, 0 changed, 0 destroyed/);

    // Update in place: the mount and the check-out stay.
    const accessor = (await client.getMount('corp/ad'))!.accessor;
    declare(['tf-lib1', 'tf-lib2'], '2h');
    expect(ws.run('plan', '-input=false')).not.toMatch(/Directory_Identity_\w+ must be replaced/);
    ws.deploy();
    expect((await client.read('corp/ad/roles/app'))?.data?.ttl).toBe(7200);
    expect((await client.read('corp/ad/library/ops'))?.data?.service_account_names).toEqual(['tf-lib1', 'tf-lib2']);
    expect((await client.read('corp/ad/library/ops/status'))?.data?.['tf-lib1']).toMatchObject({ available: false });
    expect((await client.getMount('corp/ad'))?.accessor).toBe(accessor);

    // Removal deletes the set, once its accounts are checked in (the engine refuses otherwise).
    await client.write('corp/ad/library/manage/ops/check-in', { service_account_names: ['tf-lib1'] });
    declare(undefined, '2h');
    ws.deploy();
    expect(await client.read('corp/ad/library/ops')).toBeUndefined();

    const stored = ws.everythingStored();
    expect(stored).not.toContain(ldap.managerPw);
    expect(stored).not.toContain(rootToken);

    ws.destroy();
    expect(await client.getMount('corp/ad')).toBeUndefined();
  });
});
