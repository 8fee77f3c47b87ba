import { TerraformStack } from 'cdktf';
import { SecretsMount, SshAlgorithmSigner, SshCaKeyType, SshRole, SshRoleKeyType, SshSecretBackendCa, SshZeroAddress } from '../../src';
import { decodePayload } from '../../src/reconcile/payload';
import { byPath, Synth, synth } from '../helpers/synth';

function payloads(s: Synth) {
  return Object.values(s.resource.null_resource)
    .filter((r) => r.triggers?.identity !== undefined)
    .map((r) => decodePayload(r.triggers.payload));
}

const stack = (st: TerraformStack) => {
  const mount = new SecretsMount(st, 'Ssh', { path: 'team/ssh', type: 'ssh' });
  const ca = new SshSecretBackendCa(st, 'Ca', { mount, keyType: SshCaKeyType.ED25519 });
  new SshRole(st, 'Users', {
    ca,
    name: 'users',
    keyType: SshRoleKeyType.CA,
    allowUserCertificates: true,
    allowedUsers: ['alice', 'bob'],
    defaultUser: 'alice',
    allowedExtensions: ['permit-pty'],
    defaultExtensions: { 'permit-pty': '' },
    ttl: '1h',
    maxTtl: '8h',
    allowedUserKeyLengths: { rsa: 4096, ed25519: 0 },
    algorithmSigner: SshAlgorithmSigner.DEFAULT,
  });
  const otp = new SshRole(st, 'Otp', { mount, name: 'otp', keyType: SshRoleKeyType.OTP, defaultUser: 'ubuntu', cidrList: ['10.0.0.0/8'] });
  new SshZeroAddress(st, 'Zero', { roles: [otp] });
};

describe('ssh constructs', () => {
  test('CA, roles and zero-address list render their kinds with the API-shaped desired state', () => {
    const all = payloads(synth(stack));
    expect(all.find((p) => p.kind === 'secrets.ssh-ca')).toMatchObject({ key: 'team/ssh', desired: { keyType: 'ssh-ed25519', keyBits: 0 } });
    expect(all.find((p) => p.key === 'team/ssh/users')).toMatchObject({
      kind: 'secrets.ssh-role',
      desired: {
        key_type: 'ca',
        allowed_users: 'alice,bob',
        default_user: 'alice',
        allow_user_certificates: true,
        allowed_extensions: 'permit-pty',
        default_extensions: { 'permit-pty': '' },
        ttl: 3600,
        max_ttl: 28800,
        allowed_user_key_lengths: { rsa: [4096], ed25519: [0] },
        algorithm_signer: 'default',
        not_before_duration: 30,
      },
    });
    expect(all.find((p) => p.key === 'team/ssh/otp')?.desired).toEqual({
      key_type: 'otp',
      default_user: 'ubuntu',
      allowed_users: '',
      cidr_list: '10.0.0.0/8',
      exclude_cidr_list: '',
      port: 22,
    });
    expect(all.find((p) => p.kind === 'secrets.ssh-zeroaddress')).toMatchObject({ key: 'team/ssh', desired: { roles: ['otp'] } });
  });

  test('roles wait for their CA or mount, the zero-address list for its roles', () => {
    const s = synth(stack);
    expect(JSON.stringify(byPath(s, 'Ca/Resource/Identity').depends_on)).toMatch(/Ssh_.*Config/);
    expect(JSON.stringify(byPath(s, 'Users/Resource/Identity').depends_on)).toMatch(/Ca_.*Config/);
    expect(JSON.stringify(byPath(s, 'Zero/Resource/Identity').depends_on)).toMatch(/Otp_.*Config/);
  });

  test('an imported CA: only the name of the private key variable is in the configuration', () => {
    process.env.SSH_CA_KEY = '-----BEGIN OPENSSH PRIVATE KEY-----very-secret';
    try {
      const s = synth((st) => new SshSecretBackendCa(st, 'Ca', { privateKeyEnv: 'SSH_CA_KEY', publicKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJAr7S+x comment\n' }));
      const raw = JSON.stringify(s) + payloads(s).map((p) => JSON.stringify(p)).join('\n');
      expect(payloads(s)[0]).toMatchObject({ key: 'ssh', desired: { privateKeyEnv: 'SSH_CA_KEY', publicKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJAr7S+x' } });
      expect(raw).not.toContain('very-secret');
    } finally {
      delete process.env.SSH_CA_KEY;
    }
  });

  test('validation at construction names the bad value and the fix', () => {
    const cases: Array<[(st: TerraformStack) => void, RegExp]> = [
      [(st) => new SshSecretBackendCa(st, 'C', { privateKeyEnv: 'K' }), /give privateKeyEnv and publicKey together/],
      [(st) => new SshSecretBackendCa(st, 'C', { privateKeyEnv: 'the key', publicKey: 'ssh-ed25519 AAAA' }), /not an environment variable name/],
      [(st) => new SshSecretBackendCa(st, 'C', { privateKeyEnv: 'K', publicKey: 'hello' }), /publicKey "hello..." is not an SSH public key/],
      [(st) => new SshSecretBackendCa(st, 'C', { keyType: SshCaKeyType.ED25519, keyBits: 2048 }), /keyBits 2048 is invalid/],
      [(st) => new SshSecretBackendCa(st, 'C', { keyBits: 1024 }), /keyBits 1024 is invalid/],
      [(st) => new SshSecretBackendCa(st, 'C', { mount: new SecretsMount(st, 'M', { path: 'pki', type: 'pki' }) }), /"pki" mount/],
      [(st) => new SshRole(st, 'R', { name: 'bad name', keyType: SshRoleKeyType.OTP, defaultUser: 'u' }), /SshRole name "bad name" is invalid/],
      [(st) => new SshRole(st, 'R', { name: 'r', keyType: SshRoleKeyType.OTP }), /defaultUser is required/],
      [(st) => new SshRole(st, 'R', { name: 'r', keyType: SshRoleKeyType.OTP, defaultUser: 'u', port: 70000 }), /port 70000 is not a TCP port/],
      [(st) => new SshRole(st, 'R', { name: 'r', keyType: SshRoleKeyType.CA }), /set allowUserCertificates or allowHostCertificates/],
      [(st) => new SshRole(st, 'R', { name: 'r', keyType: SshRoleKeyType.CA, allowUserCertificates: true, ttl: '2h', maxTtl: '1h' }), /longer than maxTtl/],
      [(st) => new SshRole(st, 'R', { name: 'r', keyType: SshRoleKeyType.CA, allowUserCertificates: true, allowedUsers: ['a,b'] }), /allowedUsers entry "a,b" is invalid/],
      [(st) => new SshZeroAddress(st, 'Z', { roles: [] }), /roles is empty/],
    ];
    for (const [make, message] of cases) expect(() => synth(make)).toThrow(message);
  });
});
