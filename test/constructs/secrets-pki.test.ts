import { TerraformStack } from 'cdktf';
import { PkiConfigUrls, PkiCrlConfig, PkiExtKeyUsage, PkiIntermediateCa, PkiKeyType, PkiKeyUsage, PkiRole, PkiRootCa, PkiSecretBackend, SecretsMount } from '../../src';
import { decodePayload } from '../../src/reconcile/payload';
import { byPath, Synth, synth } from '../helpers/synth';

function payloads(s: Synth) {
  return Object.values(s.resource.null_resource)
    .filter((r) => r.triggers?.identity !== undefined)
    .map((r) => decodePayload(r.triggers.payload));
}

const stack = (st: TerraformStack) => {
  const rootMount = new PkiSecretBackend(st, 'RootMount', { maxLeaseTtl: '87600h' });
  const root = new PkiRootCa(st, 'Root', { backend: rootMount, commonName: 'Example Root', keyType: PkiKeyType.EC, keyBits: 384, ttl: '87600h', privateKeyFile: '/secure/root-key.pem' });
  const intMount = new PkiSecretBackend(st, 'IntMount', { path: 'pki_int', maxLeaseTtl: '43800h' });
  new PkiIntermediateCa(st, 'Int', { backend: intMount, issuer: root, commonName: 'Example Intermediate', ttl: '43800h', maxPathLength: 0 });
  new PkiRole(st, 'Web', {
    backend: intMount,
    name: 'web',
    allowedDomains: ['example.com'],
    allowSubdomains: true,
    keyType: PkiKeyType.EC,
    keyUsage: [PkiKeyUsage.DIGITAL_SIGNATURE],
    extKeyUsage: [PkiExtKeyUsage.TIME_STAMPING],
    ttl: '24h',
    maxTtl: '72h',
    noStore: true,
  });
  new PkiConfigUrls(st, 'Urls', { backend: intMount, issuingCertificates: ['https://vault.example/v1/pki_int/ca'] });
  new PkiCrlConfig(st, 'Crl', { backend: intMount, expiry: '48h' });
};

describe('pki constructs', () => {
  test('mounts, CAs, role and settings render their kinds with the API-shaped desired state', () => {
    const all = payloads(synth(stack));
    expect(all.find((p) => p.kind === 'secrets.mount' && p.key === 'pki')).toMatchObject({ desired: { type: 'pki', maxLeaseTtl: 315360000 } });
    expect(all.find((p) => p.kind === 'secrets.pki-root')).toMatchObject({
      key: 'pki',
      desired: { commonName: 'Example Root', keyType: 'ec', keyBits: 384, ttl: 315360000, maxPathLength: -1, privateKeyFile: '/secure/root-key.pem' },
    });
    expect(all.find((p) => p.kind === 'secrets.pki-intermediate')).toMatchObject({
      key: 'pki_int',
      desired: { commonName: 'Example Intermediate', keyType: 'rsa', keyBits: 2048, issuerPath: 'pki', maxPathLength: 0 },
    });
    expect(all.find((p) => p.kind === 'secrets.pki-role')).toMatchObject({
      key: 'pki_int/web',
      desired: {
        allowed_domains: ['example.com'],
        allow_subdomains: true,
        key_type: 'ec',
        key_bits: 256,
        key_usage: ['DigitalSignature'],
        ext_key_usage: ['TimeStamping'],
        ttl: 86400,
        max_ttl: 259200,
        no_store: true,
        allow_localhost: true,
        not_before_duration: 30,
      },
    });
    expect(all.find((p) => p.kind === 'secrets.pki-urls')?.desired).toEqual({
      issuing_certificates: ['https://vault.example/v1/pki_int/ca'], crl_distribution_points: [], ocsp_servers: [],
    });
    expect(all.find((p) => p.kind === 'secrets.pki-crl')?.desired).toEqual({ expiry: 172800, disable: false });
  });

  test('the intermediate waits for its mount and its issuer; roles for their mount', () => {
    const s = synth(stack);
    const deps = JSON.stringify(byPath(s, 'Int/Resource/Identity').depends_on);
    expect(deps).toMatch(/IntMount_.*Config/);
    expect(deps).toMatch(/Root_.*Config/);
    expect(JSON.stringify(byPath(s, 'Web/Resource/Identity').depends_on)).toMatch(/IntMount_.*Config/);
  });

  test('validation at construction names the bad value and the fix', () => {
    const cases: Array<[(st: TerraformStack) => void, RegExp]> = [
      [(st) => new PkiRootCa(st, 'C', { commonName: '' }), /commonName is required/],
      [(st) => new PkiRootCa(st, 'C', { commonName: 'x', keyType: PkiKeyType.EC, keyBits: 2048 }), /keyBits 2048 does not fit key type ec/],
      [(st) => new PkiRootCa(st, 'C', { commonName: 'x', keyType: PkiKeyType.ANY }), /keyType ANY is for roles/],
      [(st) => new PkiRootCa(st, 'C', { commonName: 'x', maxPathLength: -2 }), /maxPathLength -2 is invalid/],
      [(st) => new PkiRootCa(st, 'C', { commonName: 'x', ttl: 'forever' }), /ttl "forever" is not a duration/],
      [(st) => new PkiRootCa(st, 'C', { commonName: 'x', country: ['Germany'] }), /country "Germany" is not a two-letter code/],
      [(st) => new PkiRootCa(st, 'C', { commonName: 'x', backend: new SecretsMount(st, 'M', { path: 'ssh', type: 'ssh' }) }), /"ssh" mount/],
      [(st) => new PkiIntermediateCa(st, 'I', { commonName: 'x', issuer: new PkiRootCa(st, 'R', { commonName: 'r' }) }), /issuer is on the same mount/],
      [(st) => new PkiRole(st, 'R', { name: 'bad name' }), /PkiRole name "bad name" is invalid/],
      [(st) => new PkiRole(st, 'R', { name: 'r', ttl: '2h', maxTtl: '1h' }), /longer than maxTtl/],
      [(st) => new PkiRole(st, 'R', { name: 'r', extKeyUsageOids: ['serverAuth'] }), /"serverAuth" is not an OID/],
      [(st) => new PkiRole(st, 'R', { name: 'r', allowedOtherSans: ['upn:x'] }), /allowedOtherSans "upn:x" must be/],
      [(st) => new PkiConfigUrls(st, 'U', { ocspServers: ['ftp://x'] }), /is not an http\(s\) URL/],
      [(st) => new PkiCrlConfig(st, 'C', { expiry: '0' }), /must be at least one second/],
    ];
    for (const [make, message] of cases) expect(() => synth(make)).toThrow(message);
  });
});
