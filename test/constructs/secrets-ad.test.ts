import { TerraformStack } from 'cdktf';
import { DirectoryLibrarySet, DirectoryRole, DirectorySchema, DirectorySecretBackend, DirectoryTlsVersion, SecretsMount } from '../../src';
import { decodePayload } from '../../src/reconcile/payload';
import { byPath, Synth, synth } from '../helpers/synth';

function payloads(s: Synth) {
  return Object.values(s.resource.null_resource)
    .filter((r) => r.triggers?.identity !== undefined)
    .map((r) => decodePayload(r.triggers.payload));
}

const stack = (st: TerraformStack) => {
  const mount = new SecretsMount(st, 'Directory', { path: 'corp/ad', type: 'ad' });
  const backend = new DirectorySecretBackend(st, 'Config', {
    mount,
    urls: ['ldaps://dc1.corp.example', 'ldaps://dc2.corp.example:636'],
    binddn: 'cn=vault,ou=service,dc=corp,dc=example',
    bindpassEnv: 'AD_BIND_PASSWORD',
    userdn: 'ou=service,dc=corp,dc=example',
    upndomain: 'corp.example',
    schema: DirectorySchema.ACTIVE_DIRECTORY,
    tlsMinVersion: DirectoryTlsVersion.TLS12,
    ttl: '24h',
    length: 32,
    formatter: 'svc-{{PASSWORD}}',
  });
  new DirectoryRole(st, 'App', { backend, name: 'app', serviceAccountName: 'svc-app@corp.example', ttl: '12h' });
  new DirectoryLibrarySet(st, 'Ops', { backend, name: 'ops', serviceAccountNames: ['ops1', 'ops2'], ttl: '1h', maxTtl: '4h' });
};

describe('directory accounts constructs', () => {
  test('backend, role and set render their kinds with the desired state', () => {
    const all = payloads(synth(stack));
    expect(all.find((p) => p.kind === 'secrets.ad-config')).toMatchObject({
      key: 'corp/ad',
      desired: {
        url: 'ldaps://dc1.corp.example,ldaps://dc2.corp.example:636',
        binddn: 'cn=vault,ou=service,dc=corp,dc=example',
        bindpassEnv: 'AD_BIND_PASSWORD',
        userdn: 'ou=service,dc=corp,dc=example',
        upndomain: 'corp.example',
        schema: 'ad',
        tlsMinVersion: 'tls12',
        tlsMaxVersion: '',
        ttl: 86400,
        maxTtl: 0,
        length: 32,
        formatter: 'svc-{{PASSWORD}}',
      },
    });
    expect(all.find((p) => p.kind === 'secrets.ad-role')).toMatchObject({ key: 'corp/ad/app', desired: { serviceAccountName: 'svc-app@corp.example', ttl: 43200 } });
    expect(all.find((p) => p.kind === 'secrets.ad-library')).toMatchObject({
      key: 'corp/ad/ops',
      desired: { serviceAccountNames: ['ops1', 'ops2'], ttl: 3600, maxTtl: 14400, disableCheckInEnforcement: false },
    });
  });

  test('role and set wait for the backend, the backend for its mount', () => {
    const s = synth(stack);
    expect(JSON.stringify(byPath(s, 'Config/Resource/Identity').depends_on)).toMatch(/Directory_.*Config/);
    expect(JSON.stringify(byPath(s, 'App/Resource/Identity').depends_on)).toMatch(/Config_.*Config/);
    expect(JSON.stringify(byPath(s, 'Ops/Resource/Identity').depends_on)).toMatch(/Config_.*Config/);
  });

  test('no bind password in the configuration: only the name of its environment variable', () => {
    process.env.AD_BIND_PASSWORD = 'very-secret-bind-password';
    try {
      const raw = JSON.stringify(synth(stack)) + payloads(synth(stack)).map((p) => JSON.stringify(p)).join('\n');
      expect(raw).toContain('AD_BIND_PASSWORD');
      expect(raw).not.toContain('very-secret-bind-password');
    } finally {
      delete process.env.AD_BIND_PASSWORD;
    }
  });

  test('validation at construction names the bad value and the fix', () => {
    const base = { urls: ['ldap://dc'], binddn: 'cn=b', bindpassEnv: 'PW', userdn: 'ou=s' };
    const backend = (st: TerraformStack) => new DirectorySecretBackend(st, 'B', base);
    const cases: Array<[(st: TerraformStack) => void, RegExp]> = [
      [(st) => new DirectorySecretBackend(st, 'B', { ...base, urls: ['http://dc'] }), /url "http:\/\/dc" is not an LDAP URL/],
      [(st) => new DirectorySecretBackend(st, 'B', { ...base, urls: [] }), /urls is empty/],
      [(st) => new DirectorySecretBackend(st, 'B', { ...base, bindpassEnv: 'the password' }), /not an environment variable name/],
      [(st) => new DirectorySecretBackend(st, 'B', { ...base, binddn: '' }), /binddn is empty/],
      [(st) => new DirectorySecretBackend(st, 'B', { ...base, userdn: '' }), /userdn is empty/],
      [(st) => new DirectorySecretBackend(st, 'B', { ...base, length: 8 }), /length 8 is too short; use 14 or more/],
      [(st) => new DirectorySecretBackend(st, 'B', { ...base, formatter: 'x' }), /formatter "x" must contain \{\{PASSWORD\}\} exactly once/],
      [(st) => new DirectorySecretBackend(st, 'B', { ...base, ttl: '2h', maxTtl: '1h' }), /longer than maxTtl/],
      [(st) => new DirectorySecretBackend(st, 'B', { ...base, ttl: 'soon' }), /ttl "soon" is not a duration/],
      [(st) => new DirectorySecretBackend(st, 'B', { ...base, certificate: 'abc' }), /certificate is not a PEM certificate/],
      [(st) => new DirectorySecretBackend(st, 'B', { ...base, mount: new SecretsMount(st, 'M', { path: 'pki', type: 'pki' }) }), /"pki" mount/],
      [(st) => new DirectoryRole(st, 'R', { backend: backend(st), name: 'bad name', serviceAccountName: 'a' }), /DirectoryRole name "bad name" is invalid/],
      [(st) => new DirectoryRole(st, 'R', { backend: backend(st), name: 'r', serviceAccountName: ' ' }), /serviceAccountName is empty/],
      [(st) => new DirectoryLibrarySet(st, 'L', { backend: backend(st), name: 'manage', serviceAccountNames: ['a'] }), /not "manage"/],
      [(st) => new DirectoryLibrarySet(st, 'L', { backend: backend(st), name: 'l', serviceAccountNames: [] }), /serviceAccountNames is empty/],
      [(st) => new DirectoryLibrarySet(st, 'L', { backend: backend(st), name: 'l', serviceAccountNames: ['a', 'A'] }), /"A" is listed twice/],
      [(st) => new DirectoryLibrarySet(st, 'L', { backend: backend(st), name: 'l', serviceAccountNames: ['a'], ttl: '5h', maxTtl: '1h' }), /longer than maxTtl/],
    ];
    for (const [build, message] of cases) expect(() => synth(build)).toThrow(message);
  });
});
