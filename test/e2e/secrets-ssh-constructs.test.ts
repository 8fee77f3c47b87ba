import { readFileSync } from 'node:fs';
import { TerraformStack } from 'cdktf';
import { Hangar, SecretsMount, SshRole, SshRoleKeyType, SshSecretBackendCa, SshZeroAddress } from '../../src';
import { SecretsClient } from '../../src/client/secrets';
import { clientKey } from '../engine/secrets/ssh-helpers';
import { RunningServer } from '../helpers/cli';
import { startDevSecrets } from '../helpers/secrets-e2e';
import { terraformEnv, TerraformWorkspace } from '../helpers/terraform';

const tf = terraformEnv();
const describeWithTerraform = tf ? describe : describe.skip;
if (!tf) process.stderr.write('terraform/tofu or the null provider are not available: ssh construct e2e tests skipped\n');

/**
 * The SSH constructs deployed by Terraform against a running server (HTTP mode): a mount, an
 * imported CA (private key from the environment), a CA role and an OTP role in the zero-address
 * list; a role updated in place, a redeploy that keeps the CA, removals that delete; nothing
 * secret in the configuration or the state; destroy.
 */
describeWithTerraform('ssh constructs deployed by Terraform', () => {
  jest.setTimeout(300_000);
  let server: RunningServer;
  let client: SecretsClient;
  let rootToken: string;

  beforeAll(async () => {
    ({ server, client, rootToken } = await startDevSecrets());
  }, 120_000);
  afterAll(() => server?.stop(), 60_000);

  test('create, update in place, remove, destroy', async () => {
    const key = await clientKey('ed25519');
    const privateKey = readFileSync(key.path, 'utf8');
    const publicKey = key.public.split(' ').slice(0, 2).join(' ');
    const ws = new TerraformWorkspace(tf!, { DEPLOY_TOKEN: rootToken, SSH_CA_PRIVATE_KEY: privateKey });
    const declare = (ttl: string, withOtp: boolean) =>
      ws.synth((stack: TerraformStack) => {
        new Hangar(stack, 'Hangar', { secretsUrl: server.urls.secrets, tokenEnvVar: 'DEPLOY_TOKEN' });
        const mount = new SecretsMount(stack, 'Ssh', { path: 'team/ssh', type: 'ssh' });
        const ca = new SshSecretBackendCa(stack, 'Ca', { mount, privateKeyEnv: 'SSH_CA_PRIVATE_KEY', publicKey });
        new SshRole(stack, 'Users', {
          ca,
          name: 'users',
          keyType: SshRoleKeyType.CA,
          allowUserCertificates: true,
          allowedUsers: ['deploy'],
          defaultExtensions: { 'permit-pty': '' },
          ttl,
          maxTtl: '8h',
          allowedUserKeyLengths: { ed25519: 0 },
        });
        if (withOtp) {
          const otp = new SshRole(stack, 'Otp', { mount, name: 'otp', keyType: SshRoleKeyType.OTP, defaultUser: 'ubuntu' });
          new SshZeroAddress(stack, 'Zero', { roles: [otp] });
        }
      });

    declare('1h', true);
    ws.deploy();
    expect((await client.read('team/ssh/config/ca'))?.data?.public_key).toBe(publicKey);
    expect((await client.read('team/ssh/roles/users'))?.data).toMatchObject({ ttl: 3600, max_ttl: 28800, allowed_users: 'deploy' });
    expect((await client.read('team/ssh/config/zeroaddress'))?.data?.roles).toEqual(['otp']);
    const signed = await client.write('team/ssh/sign/users', { public_key: key.public, valid_principals: 'deploy' });
    expect(signed?.data?.signed_key).toMatch(/^ssh-ed25519-cert-v01@openssh\.com /);
    expect(ws.deploy()).toMatch(/0 added, 0 changed, 0 destroyed/);

    // Update in place: the role changes, the CA and the mount stay.
    declare('2h', true);
    expect(ws.run('plan', '-input=false')).not.toMatch(/(Ca|Ssh)_Identity_\w+ must be replaced/);
    ws.deploy();
    expect((await client.read('team/ssh/roles/users'))?.data?.ttl).toBe(7200);
    expect((await client.read('team/ssh/config/ca'))?.data?.public_key).toBe(publicKey);

    // Removal deletes the OTP role and empties the zero-address list.
    declare('2h', false);
    ws.deploy();
    expect(await client.read('team/ssh/roles/otp')).toBeUndefined();
    expect((await client.read('team/ssh/config/zeroaddress'))?.data?.roles).toEqual([]);

    const stored = ws.everythingStored();
    expect(stored).not.toContain(privateKey.split('\n')[1]);
    expect(stored).not.toContain(rootToken);

    ws.destroy();
    expect(await client.getMount('team/ssh')).toBeUndefined();
  });
});
