import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { AddressInfo } from 'node:net';
import { connect, createServer } from 'node:tls';
import { startSecrets, SecretsTestServer } from './helpers';
import { Openssl } from './pki-helpers';
import { ManualClock } from '../../../src/engine/clock';
import { storedText } from '../../helpers/raw-db';
import { STORAGE_KINDS } from '../../helpers/storage';

const openssl = new Openssl();

/** A CSR made by openssl itself (a real client's request). */
async function opensslCsr(subject: string, keyArgs: string[], sans?: string): Promise<string> {
  const key = openssl.file('');
  await openssl.run('genpkey', ...keyArgs, '-out', key);
  const out = openssl.file('');
  const args = ['req', '-new', '-key', key, '-subj', subject, '-out', out];
  if (sans) args.push('-addext', `subjectAltName=${sans}`);
  const r = await openssl.run(...args);
  if (r.code !== 0) throw new Error(r.out);
  return (await import('node:fs')).readFileSync(out, 'utf8');
}

/** A TLS handshake: a server with the chain, a client trusting only the root; resolves with the error or undefined. */
async function handshake(chain: string, key: string, root: string, servername: string): Promise<Error | undefined> {
  const server = createServer({ cert: chain, key }, (socket) => socket.end('hello'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    return await new Promise<Error | undefined>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, ca: root, servername }, () => {
        socket.end();
        resolve(undefined);
      });
      socket.on('error', resolve);
    });
  } finally {
    server.close();
  }
}

describe.each(STORAGE_KINDS)('PKI engine on %s', (kind) => {
  let s: SecretsTestServer;
  let root: string;
  let intermediate: string;
  beforeAll(async () => {
    // openssl and TLS judge validity by the real time: the engine's clock starts now.
    s = await startSecrets(kind, { clock: new ManualClock(Date.now()) });
  });
  afterAll(() => s.close());

  const ok = async (method: string, path: string, body?: unknown, status = 200) => {
    const res = await s.v(method, path, body);
    if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };

  test('a root (exported), an intermediate signed by it on a second mount, and set-signed', async () => {
    await ok('POST', 'sys/mounts/pki/tune', { max_lease_ttl: '87600h' }, 204);
    const gen = await ok('POST', 'pki/root/generate/exported', { common_name: 'Hangar Root', key_type: 'ec', key_bits: 384, ttl: '87600h', organization: 'Hangar' });
    root = gen.data.certificate;
    expect(gen.data).toMatchObject({ issuing_ca: root, private_key_type: 'ec' });
    expect(gen.data.private_key).toContain('BEGIN EC PRIVATE KEY');
    expect(gen.data.serial_number).toMatch(/^[0-9a-f]{2}(:[0-9a-f]{2})+$/);
    const text = await openssl.text(root);
    expect(text).toMatch(/CA:TRUE/);
    expect(text).toMatch(/Certificate Sign, CRL Sign/);
    expect(text).toMatch(/Subject: O\s?=\s?Hangar, CN\s?=\s?Hangar Root/);

    // Another root is another issuer of the mount (the public service since 1.11); the first stays the default.
    const again = await ok('POST', 'pki/root/generate/internal', { common_name: 'Other', issuer_name: 'other', key_type: 'ec' });
    expect(again.data).toMatchObject({ issuer_name: 'other' });
    expect(again.data.issuer_id).not.toBe(gen.data.issuer_id);
    expect((await s.v('GET', 'pki/ca/pem', undefined, null)).text).toBe(root);
    await ok('DELETE', `pki/issuer/${again.data.issuer_id}`, undefined, 204);

    await ok('POST', 'sys/mounts/pki_int', { type: 'pki', config: { max_lease_ttl: '43800h' } }, 204);
    const csr = await ok('POST', 'pki_int/intermediate/generate/internal', { common_name: 'Hangar Intermediate', key_type: 'rsa', key_bits: 2048 });
    expect(csr.data.private_key).toBeUndefined();
    expect((await openssl.run('req', '-verify', '-noout', '-in', openssl.file(csr.data.csr))).code).toBe(0);
    const signed = await ok('POST', 'pki/root/sign-intermediate', { csr: csr.data.csr, common_name: 'Hangar Intermediate', ttl: '43800h', max_path_length: 0 });
    intermediate = signed.data.certificate;
    expect(signed.data.issuing_ca).toBe(root);
    expect(await openssl.text(intermediate)).toMatch(/CA:TRUE, pathlen:0/);
    expect((await openssl.verify(root, intermediate)).code).toBe(0);
    const set = await ok('POST', 'pki_int/intermediate/set-signed', { certificate: `${intermediate}\n${root}` });
    expect(set.data.imported_issuers).toHaveLength(2);
    expect(set.data.mapping[set.data.imported_issuers[0]]).toBe(csr.data.key_id);
    expect(set.data.mapping[set.data.imported_issuers[1]]).toBe('');
    expect((await s.v('GET', 'pki_int/ca_chain', undefined, null)).text).toBe(`${intermediate}\n${root}`);
    const der = await fetch(`${s.urls.secrets}/v1/pki_int/ca`);
    expect(der.headers.get('content-type')).toBe('application/pkix-cert');
    expect(new X509Certificate(Buffer.from(await der.arrayBuffer())).subject).toContain('CN=Hangar Intermediate');
  });

  test('issue: the role asks, openssl verifies through the intermediate and shows what was asked', async () => {
    await ok('POST', 'pki_int/roles/web', {
      allowed_domains: 'example.com',
      allow_subdomains: true,
      allow_bare_domains: true,
      max_ttl: '720h',
      ttl: '24h',
      key_type: 'ec',
      key_bits: 256,
      ou: 'Platform',
      organization: ['Hangar'],
      country: 'DE',
      locality: 'Berlin',
      allowed_uri_sans: 'spiffe://hangar/*',
      allowed_other_sans: '1.3.6.1.4.1.311.20.2.3;UTF8:*@example.com',
      key_usage: ['digitalsignature', 'KEYAGREEMENT'],
      ext_key_usage: ['TimeStamping'],
      ext_key_usage_oids: '1.2.3.4.5',
      policy_identifiers: '1.3.6.1.4.1.44947.1.1.1',
      basic_constraints_valid_for_non_ca: true,
    });
    const role = await ok('GET', 'pki_int/roles/web');
    expect(role.data).toMatchObject({ ttl: 86400, max_ttl: 2592000, key_usage: ['DigitalSignature', 'KeyAgreement'], allow_localhost: true, not_before_duration: 30 });

    const res = await ok('POST', 'pki_int/issue/web', {
      common_name: 'app.example.com',
      alt_names: 'api.example.com,*.svc.example.com,ops@example.com',
      ip_sans: '127.0.0.1',
      uri_sans: 'spiffe://hangar/app',
      other_sans: '1.3.6.1.4.1.311.20.2.3;UTF8:app@example.com',
      ttl: '1h',
    });
    const d = res.data;
    expect(d).toMatchObject({ issuing_ca: intermediate, ca_chain: [intermediate, root], private_key_type: 'ec' });
    expect(d.private_key).toContain('BEGIN EC PRIVATE KEY');
    expect((await openssl.verify(root, d.certificate, [intermediate])).code).toBe(0);
    const text = await openssl.text(d.certificate);
    expect(text).toMatch(/Subject: C\s?=\s?DE, L\s?=\s?Berlin, O\s?=\s?Hangar, OU\s?=\s?Platform, CN\s?=\s?app.example.com/);
    for (const san of ['DNS:app.example.com', 'DNS:api.example.com', 'DNS:\\*.svc.example.com', 'email:ops@example.com', 'IP Address:127.0.0.1', 'URI:spiffe://hangar/app', 'UPN::app@example.com']) {
      expect(text).toMatch(new RegExp(san));
    }
    expect(text).toMatch(/X509v3 Key Usage: critical\s+Digital Signature, Key Agreement/);
    expect(text).toMatch(/TLS Web Server Authentication, TLS Web Client Authentication, Time Stamping, 1.2.3.4.5/);
    expect(text).toMatch(/Policy: 1.3.6.1.4.1.44947.1.1.1/);
    expect(text).toMatch(/CA:FALSE/);
    const cert = new X509Certificate(d.certificate);
    expect(Date.parse(cert.validTo) - Date.parse(cert.validFrom)).toBe(3630_000);
    expect(d.expiration).toBe(Math.floor(Date.parse(cert.validTo) / 1000));

    // A TLS client trusting only the root accepts the server's name, and refuses another.
    const chain = `${d.certificate}\n${intermediate}`;
    expect(await handshake(chain, d.private_key, root, 'api.example.com')).toBeUndefined();
    expect(String(await handshake(chain, d.private_key, root, 'other.example.org'))).toMatch(/does not match certificate's altnames|Hostname\/IP does not match/);

    // Capped at max_ttl with a warning; formats and key formats.
    const capped = await ok('POST', 'pki_int/issue/web', { common_name: 'example.com', ttl: '9000h', format: 'der', private_key_format: 'pkcs8' });
    expect(capped.warnings[0]).toMatch(/maxTTL/);
    const c2 = new X509Certificate(Buffer.from(capped.data.certificate, 'base64'));
    expect(Date.parse(c2.validTo) - Date.parse(c2.validFrom)).toBe((2592000 + 30) * 1000);
    expect(Buffer.from(capped.data.private_key, 'base64').length).toBeGreaterThan(100);
    const bundle = await ok('POST', 'pki_int/issue/web', { common_name: 'b.example.com', format: 'pem_bundle', exclude_cn_from_sans: true });
    expect(bundle.data.certificate.match(/BEGIN/g)).toHaveLength(4);
    expect(await openssl.text(bundle.data.certificate.split(/(?=-----BEGIN CERTIFICATE)/)[1])).not.toMatch(/Subject Alternative Name/);
  });

  test.each([
    ['a name outside the domains', { common_name: 'app.example.org' }, /common name app.example.org not allowed by this role/],
    ['an alt name outside the domains', { common_name: 'a.example.com', alt_names: 'evil.com' }, /subject alternate name evil.com not allowed/],
    ['a wildcard below two labels', { common_name: '*.*.example.com' }, /not allowed by this role/],
    ['a URI outside the globs', { common_name: 'a.example.com', uri_sans: 'https://evil' }, /URI Subject Alternative Name https:\/\/evil not allowed/],
    ['another SAN of another value', { common_name: 'a.example.com', other_sans: '1.3.6.1.4.1.311.20.2.3;UTF8:x@evil.com' }, /other SAN/],
    ['a malformed other SAN', { common_name: 'a.example.com', other_sans: 'upn:x' }, /other_sans: "upn:x" must be <oid>;UTF8:<value>/],
    ['a bad IP', { common_name: 'a.example.com', ip_sans: '300.1.1.1' }, /ip_sans: "300.1.1.1" is not an IP address/],
    ['no common name', {}, /the common_name field is required/],
    ['an absurd TTL', { common_name: 'a.example.com', ttl: 'forever' }, /ttl: "forever" is not a duration/],
    ['a bad format', { common_name: 'a.example.com', format: 'p12' }, /format: must be pem, der or pem_bundle/],
  ])('issue refuses %s with a 400 and stores nothing', async (_what, body, message) => {
    const before = (await ok('LIST', 'pki_int/certs')).data.keys.length;
    const res = await s.v('POST', 'pki_int/issue/web', body);
    expect(res.status).toBe(400);
    expect(res.body.errors.join(' ')).toMatch(message);
    expect((await ok('LIST', 'pki_int/certs')).data.keys).toHaveLength(before);
  });

  test('the additive domain rules: localhost, bare, subdomains, globs, any name, enforce_hostnames', async () => {
    const can = async (role: Record<string, unknown>, cn: string) => {
      await ok('POST', 'pki_int/roles/rules', { key_type: 'ec', ...role });
      return (await s.v('POST', 'pki_int/issue/rules', { common_name: cn })).status === 200;
    };
    expect(await can({}, 'localhost')).toBe(true);
    expect(await can({ allow_localhost: false }, 'localhost')).toBe(false);
    expect(await can({ allowed_domains: 'example.com' }, 'example.com')).toBe(false);
    expect(await can({ allowed_domains: 'example.com', allow_bare_domains: true }, 'example.com')).toBe(true);
    expect(await can({ allowed_domains: 'example.com', allow_bare_domains: true }, 'a.example.com')).toBe(false);
    expect(await can({ allowed_domains: 'example.com', allow_subdomains: true }, 'a.b.example.com')).toBe(true);
    expect(await can({ allowed_domains: 'example.com', allow_subdomains: true }, '*.example.com')).toBe(true);
    expect(await can({ allowed_domains: 'example.com', allow_subdomains: true, allow_wildcard_certificates: false }, '*.example.com')).toBe(false);
    expect(await can({ allowed_domains: 'web-*.example.com' }, 'web-1.example.com')).toBe(false);
    expect(await can({ allowed_domains: 'web-*.example.com', allow_glob_domains: true }, 'web-1.example.com')).toBe(true);
    expect(await can({ allow_any_name: true }, 'anything.test')).toBe(true);
    expect(await can({ allow_any_name: true }, 'not a hostname')).toBe(false);
    expect(await can({ allow_any_name: true, enforce_hostnames: false }, 'not a hostname')).toBe(true);
    expect(await can({ allow_any_name: true, require_cn: false }, '')).toBe(true);
  });

  test('sign a CSR made by openssl (use_csr_sans, key type), sign-verbatim, and refusals', async () => {
    const csr = await opensslCsr('/CN=csr.example.com/O=Ignored', ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'], 'DNS:csr.example.com,DNS:alt.example.com');
    const signed = await ok('POST', 'pki_int/sign/web', { csr, common_name: 'ignored.example.com' });
    const text = await openssl.text(signed.data.certificate);
    expect(text).toMatch(/DNS:csr.example.com, DNS:alt.example.com/);
    expect(text).toMatch(/O\s?=\s?Hangar/);
    expect(signed.data.private_key).toBeUndefined();
    expect((await openssl.verify(root, signed.data.certificate, [intermediate])).code).toBe(0);

    const rsa = await opensslCsr('/CN=rsa.example.com', ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048']);
    expect((await s.v('POST', 'pki_int/sign/web', { csr: rsa })).body.errors[0]).toMatch(/role requires keys of type ec/);
    const bad = await opensslCsr('/CN=evil.org', ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']);
    expect((await s.v('POST', 'pki_int/sign/web', { csr: bad })).body.errors[0]).toMatch(/common name evil.org not allowed/);
    const der = Buffer.from(csr.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
    der[40] = 255 - der[40];
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----`;
    const t = await s.v('POST', 'pki_int/sign/web', { csr: tampered });
    expect([t.status, t.text]).toEqual([400, expect.stringMatching(/csr: /)]);
    expect((await s.v('POST', 'pki_int/sign/web', { csr: 'not pem' })).body.errors[0]).toMatch(/csr: not a PEM certificate request/);

    const verbatim = await ok('POST', 'pki_int/sign-verbatim', { csr: bad, ext_key_usage: 'ClientAuth', ttl: '1h' });
    const vt = await openssl.text(verbatim.data.certificate);
    expect(vt).toMatch(/Subject: CN\s?=\s?evil.org/);
    expect(vt).toMatch(/TLS Web Client Authentication/);
  });

  test('revoke (colon or hyphen serials) rebuilds the CRL that openssl reads; cert reads are unauthenticated', async () => {
    const a = (await ok('POST', 'pki_int/issue/web', { common_name: 'r1.example.com' })).data;
    const b = (await ok('POST', 'pki_int/issue/web', { common_name: 'r2.example.com' })).data;
    const keys = (await ok('LIST', 'pki_int/certs')).data.keys;
    expect(keys).toEqual(expect.arrayContaining([a.serial_number, b.serial_number]));
    const rev = await ok('POST', 'pki_int/revoke', { serial_number: a.serial_number });
    expect(rev.data.revocation_time).toBe(Math.floor(s.clock.now() / 1000));
    await ok('POST', 'pki_int/revoke', { serial_number: b.serial_number.replace(/:/g, '-').toUpperCase() });
    const crl = (await s.v('GET', 'pki_int/crl/pem', undefined, null)).text;
    const listed = await openssl.run('crl', '-noout', '-text', '-in', openssl.file(crl), '-CAfile', openssl.file(intermediate));
    expect(listed.out).toMatch(/verify OK/);
    for (const serial of [a.serial_number, b.serial_number]) expect(listed.out.toLowerCase()).toContain(serial.replace(/:/g, ''));
    const crlCheck = await openssl.run('verify', '-crl_check', '-CAfile', openssl.file(`${root}\n${intermediate}\n${crl}`), openssl.file(a.certificate));
    expect(crlCheck.out).toMatch(/certificate revoked/);
    const read = await s.v('GET', `pki_int/cert/${a.serial_number}`, undefined, null);
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ certificate: a.certificate, revocation_time: rev.data.revocation_time });
    expect((await s.v('GET', 'pki_int/cert/ca', undefined, null)).body.data.certificate).toBe(intermediate);
    expect((await s.v('GET', 'pki_int/cert/crl', undefined, null)).body.data.certificate).toBe(crl);
    expect((await s.v('GET', 'pki_int/cert/00:11', undefined, null)).status).toBe(404);
    expect((await s.v('POST', 'pki_int/revoke', { serial_number: '00:11' })).body.errors[0]).toMatch(/not found/);
    expect((await s.v('POST', 'pki_int/revoke', { serial_number: 'zz' })).body.errors[0]).toMatch(/serial_number: "zz" is not a serial number/);
    const rotated = await ok('GET', 'pki_int/crl/rotate');
    expect(rotated.data.success).toBe(true);
  });

  test('no_store certificates are not listed or revocable; generate_lease revokes with the lease; deleted roles leave certs valid', async () => {
    await ok('POST', 'pki_int/roles/fast', { allow_any_name: true, key_type: 'ec', no_store: true });
    const before = (await ok('LIST', 'pki_int/certs')).data.keys;
    const ns = (await ok('POST', 'pki_int/issue/fast', { common_name: 'ns.test' })).data;
    expect((await ok('LIST', 'pki_int/certs')).data.keys).toEqual(before);
    expect((await s.v('POST', 'pki_int/revoke', { serial_number: ns.serial_number })).status).toBe(400);
    // Roles are kept opened between requests while unchanged: a rewrite takes effect at once.
    await ok('POST', 'pki_int/roles/fast', { allow_any_name: true, key_type: 'ec', no_store: false, ext_key_usage: 'CodeSigning' });
    const stored = (await ok('POST', 'pki_int/issue/fast', { common_name: 'stored.test' })).data;
    expect((await ok('LIST', 'pki_int/certs')).data.keys).toContain(stored.serial_number);
    expect(await openssl.text(stored.certificate)).toMatch(/Code Signing/);

    await ok('POST', 'pki_int/roles/leased', { allow_any_name: true, key_type: 'ed25519', generate_lease: true, ttl: '1h' });
    const leased = await ok('POST', 'pki_int/issue/leased', { common_name: 'leased.test' });
    expect(leased.lease_id).toMatch(/^pki_int\/issue\/leased\//);
    expect(leased.lease_duration).toBe(3600);
    expect(leased.renewable).toBe(false);
    expect(leased.data.private_key).toContain('BEGIN PRIVATE KEY');
    await ok('PUT', 'sys/leases/revoke', { lease_id: leased.lease_id }, 204);
    expect((await s.v('GET', `pki_int/cert/${leased.data.serial_number}`, undefined, null)).body.data.revocation_time).toBeGreaterThan(0);

    await ok('DELETE', 'pki_int/roles/leased', undefined, 204);
    expect((await s.v('GET', 'pki_int/roles/leased')).status).toBe(404);
    expect((await s.v('POST', 'pki_int/issue/leased', { common_name: 'x.test' })).body.errors[0]).toMatch(/unknown role/);
    expect((await openssl.verify(root, ns.certificate, [intermediate])).code).toBe(0);
  });

  test('config/urls and config/crl; tidy removes expired certificates after the safety buffer', async () => {
    await ok('POST', 'pki_int/config/urls', { issuing_certificates: 'http://127.0.0.1:8200/v1/pki_int/ca', crl_distribution_points: ['http://127.0.0.1:8200/v1/pki_int/crl'] }, 204);
    expect((await ok('GET', 'pki_int/config/urls')).data).toMatchObject({ issuing_certificates: ['http://127.0.0.1:8200/v1/pki_int/ca'], ocsp_servers: [] });
    expect((await s.v('POST', 'pki_int/config/urls', { ocsp_servers: 'not a url' })).status).toBe(400);
    const cert = (await ok('POST', 'pki_int/issue/web', { common_name: 'urls.example.com', ttl: '1h' })).data;
    const text = await openssl.text(cert.certificate);
    expect(text).toMatch(/CA Issuers - URI:http:\/\/127.0.0.1:8200\/v1\/pki_int\/ca/);
    expect(text).toMatch(/URI:http:\/\/127.0.0.1:8200\/v1\/pki_int\/crl/);
    expect((await ok('GET', 'pki_int/config/crl')).data).toEqual({
      expiry: '72h',
      disable: false,
      ocsp_disable: false,
      ocsp_expiry: '12h',
      auto_rebuild: false,
      auto_rebuild_grace_period: '12h',
      enable_delta: false,
      delta_rebuild_interval: '15m',
      cross_cluster_revocation: false,
      unified_crl: false,
      unified_crl_on_existing_paths: false,
      max_crl_entries: 100000,
    });
    await ok('POST', 'pki_int/config/crl', { expiry: '48h' }, 204);
    expect((await ok('GET', 'pki_int/config/crl')).data.expiry).toBe('48h');

    s.clock.advance(2 * 3600 * 1000);
    await ok('POST', 'pki_int/tidy', { tidy_cert_store: true, safety_buffer: '1h' });
    const left = (await ok('LIST', 'pki_int/certs')).data.keys;
    expect(left).not.toContain(cert.serial_number);
    expect(left.length).toBeGreaterThan(0);
    // Back to the real time, which openssl judges by.
    s.clock.advance(-2 * 3600 * 1000);
  });

  test('config/ca imports a PEM bundle; root delete (sudo) then a new root; private keys sealed at rest', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const keyPem = privateKey.export({ type: 'sec1', format: 'pem' }).toString();
    const key = openssl.file(keyPem);
    const out = openssl.file('');
    await openssl.run('req', '-x509', '-new', '-key', key, '-subj', '/CN=Imported CA', '-days', '30', '-addext', 'basicConstraints=critical,CA:TRUE', '-out', out);
    const caPem = (await import('node:fs')).readFileSync(out, 'utf8');
    await ok('POST', 'sys/mounts/pki_imp', { type: 'pki' }, 204);
    // The certificate alone is an issuer without a key; its key imported after links to it.
    const alone = (await ok('POST', 'pki_imp/config/ca', { pem_bundle: caPem })).data;
    expect(alone.mapping[alone.imported_issuers[0]]).toBe('');
    expect((await s.v('POST', 'pki_imp/issue/r', { common_name: 'x.test' })).status).toBe(400);
    const both = (await ok('POST', 'pki_imp/config/ca', { pem_bundle: `${keyPem}\n${caPem}` })).data;
    expect(both).toMatchObject({ imported_issuers: null, existing_issuers: alone.imported_issuers });
    expect(both.mapping[alone.imported_issuers[0]]).toBe(both.imported_keys[0]);
    await ok('POST', 'pki_imp/roles/r', { allow_any_name: true, key_type: 'rsa', key_bits: 3072 });
    const leaf = (await ok('POST', 'pki_imp/issue/r', { common_name: 'imported.test', ttl: '1h' })).data;
    expect((await openssl.verify(caPem, leaf.certificate)).out).toMatch(/: OK/);
    expect(leaf.private_key).toContain('BEGIN RSA PRIVATE KEY');

    const limited = await s.tokenWith('path "pki_imp/*" { capabilities = ["create", "read", "update", "delete", "list"] }');
    expect((await s.v('DELETE', 'pki_imp/root', undefined, limited)).status).toBe(403);
    expect((await s.v('POST', 'pki_imp/issue/r', { common_name: 'x.test', ttl: '1h' }, limited)).status).toBe(200);
    // The imported CA lives 30 days: the mount's default TTL (768h) would outlive it.
    expect((await s.v('POST', 'pki_imp/issue/r', { common_name: 'x.test' })).body.errors[0]).toMatch(/beyond the expiration of the CA/);
    await ok('DELETE', 'pki_imp/root', undefined, 204);
    expect((await s.v('GET', 'pki_imp/ca', undefined, null)).status).toBe(204);
    expect((await s.v('POST', 'pki_imp/issue/r', { common_name: 'x.test' })).body.errors[0]).toMatch(/CA certificate\/key/);
    const fresh = await ok('POST', 'pki_imp/root/generate/internal', { common_name: 'Second Root', key_type: 'ed25519' });
    expect(fresh.data.private_key).toBeUndefined();
    expect(fresh.data.certificate).toContain('BEGIN CERTIFICATE');

    // The imported key is in storage only sealed: no line of its PEM body in the database bytes.
    const stored = await storedText(s.engine.storage, s.dataDir);
    for (const line of keyPem.split('\n').slice(1, -2)) expect(stored).not.toContain(line);
  });

  test('more key types, name constraints, self-issued re-signing, exported intermediate keys, revoked lists, tidy of revocations', async () => {
    await ok('POST', 'sys/mounts/pki_more', { type: 'pki', config: { max_lease_ttl: '87600h' } }, 204);
    const more = await ok('POST', 'pki_more/root/generate/internal', { common_name: 'More Root', key_type: 'ec', key_bits: 224, permitted_dns_domains: 'more.test', ttl: '8760h' });
    const mroot = more.data.certificate;
    expect(await openssl.text(mroot)).toMatch(/Permitted:\s+DNS:more.test/);
    await ok('POST', 'pki_more/roles/any', { allow_any_name: true, key_type: 'ec', key_bits: 224 });
    const p224 = (await ok('POST', 'pki_more/issue/any', { common_name: 'a.more.test', ttl: '1h' })).data;
    expect(await openssl.text(p224.certificate)).toMatch(/ASN1 OID: secp224r1/);
    expect((await openssl.verify(mroot, p224.certificate)).code).toBe(0);
    const outside = (await ok('POST', 'pki_more/issue/any', { common_name: 'a.other.test', ttl: '1h' })).data;
    expect((await openssl.verify(mroot, outside.certificate)).out).toMatch(/permitted subtree violation/);

    // root/sign-self-issued: another self-issued CA re-signed by this one (a root rollover's cross-signature).
    const selfIssued = (await ok('GET', 'pki_imp/cert/ca')).data.certificate;
    const cross = await ok('POST', 'pki_more/root/sign-self-issued', { certificate: selfIssued });
    expect(cross.data.issuing_ca).toBe(mroot);
    expect((await openssl.verify(mroot, cross.data.certificate)).code).toBe(0);
    expect((await s.v('POST', 'pki_more/root/sign-self-issued', { certificate: p224.certificate })).body.errors[0]).toMatch(/not self-issued/);

    const exported = await ok('POST', 'pki_more/intermediate/generate/exported', { common_name: 'Pending', key_type: 'ed25519' });
    expect(exported.data).toMatchObject({ private_key_type: 'ed25519' });
    expect(exported.data.private_key).toContain('BEGIN PRIVATE KEY');
    expect((await s.v('POST', 'pki_more/intermediate/set-signed', { certificate: selfIssued })).body.errors[0]).toMatch(/does not match any key of this mount/);

    await ok('POST', 'pki_more/revoke', { serial_number: p224.serial_number });
    expect((await ok('LIST', 'pki_more/certs/revoked')).data.keys).toEqual([p224.serial_number]);
    const raw = await fetch(`${s.urls.secrets}/v1/pki_more/cert/${p224.serial_number}/raw/pem`);
    expect(await raw.text()).toBe(p224.certificate);
    s.clock.advance(3 * 3600 * 1000);
    const tidied = await ok('POST', 'pki_more/tidy', { tidy_revoked_certs: true, safety_buffer: '1h' });
    expect(tidied.data.revoked_cert_deleted_count).toBe(1);
    expect(await ok('LIST', 'pki_more/certs/revoked', undefined, 404)).toEqual({ errors: [] });
    s.clock.advance(-3 * 3600 * 1000);
  });

  test.each([
    ['a role with RSA key_bits 1024', 'pki_int/roles/bad', { key_bits: 1024 }, /key_bits: 1024 is not a valid RSA key size/],
    ['a role with an unknown key usage', 'pki_int/roles/bad', { key_usage: 'Signing' }, /key_usage: unknown usage "Signing"/],
    ['a role with a bad OID', 'pki_int/roles/bad', { ext_key_usage_oids: 'one.two' }, /ext_key_usage_oids: "one.two" is not an OID/],
    ['a role with ttl above max_ttl', 'pki_int/roles/bad', { ttl: '2h', max_ttl: '1h' }, /ttl \(7200s\) cannot be larger than max_ttl/],
    ['a root of an unknown type', 'pki_int/root/generate/magic', { common_name: 'x' }, /type: "magic" is invalid/],
    ['a CSR full of garbage', 'pki_int/sign/web', { csr: '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----' }, /csr: not a PEM certificate request/],
    ['a huge common name', 'pki_int/issue/web', { common_name: 'a'.repeat(2000) }, /common_name/],
    ['config/ca without a certificate', 'pki_int/config/ca', { pem_bundle: 'hello' }, /pem_bundle: no PEM certificate or private key found/],
    ['set-signed with junk', 'pki_int/intermediate/set-signed', { certificate: 'junk' }, /certificate: no PEM certificate or private key found/],
  ])('refuses %s with a 400 naming the problem', async (_what, path, body, message) => {
    const res = await s.v('POST', path, body);
    expect(res.status).toBe(400);
    expect(res.body.errors.join(' ')).toMatch(message);
    if (path.endsWith('roles/bad')) expect((await s.v('GET', 'pki_int/roles/bad')).status).toBe(404);
  });

  test('every endpoint enforces its capability; the fetch paths need no token', async () => {
    const reader = await s.tokenWith('path "pki_int/issue/web" { capabilities = ["update"] }');
    expect((await s.v('POST', 'pki_int/issue/web', { common_name: 'p.example.com' }, reader)).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', 'pki_int/roles/web', { allow_any_name: true }],
      ['GET', 'pki_int/roles/web', undefined],
      ['LIST', 'pki_int/certs', undefined],
      ['POST', 'pki_int/revoke', { serial_number: '01' }],
      ['POST', 'pki_int/sign/web', { csr: 'x' }],
      ['POST', 'pki_int/root/generate/internal', { common_name: 'x' }],
      ['POST', 'pki_int/config/urls', {}],
      ['GET', 'pki_int/crl/rotate', undefined],
      ['POST', 'pki_int/tidy', {}],
      ['LIST', 'pki_int/issuers', undefined],
      ['GET', 'pki_int/issuer/default', undefined],
      ['POST', 'pki_int/issuer/default', {}],
      ['DELETE', 'pki_int/issuer/default', undefined],
      ['LIST', 'pki_int/keys', undefined],
      ['POST', 'pki_int/keys/generate/internal', {}],
      ['POST', 'pki_int/config/issuers', {}],
      ['GET', 'pki_int/config/auto-tidy', undefined],
      ['GET', 'pki_int/tidy-status', undefined],
      ['POST', 'pki_int/issuer/default/issue/web', { common_name: 'p.example.com' }],
    ] as const) {
      expect([method, path, (await s.v(method, path, body, reader)).status]).toEqual([method, path, 403]);
      expect([method, path, (await s.v(method, path, body, null)).status]).toEqual([method, path, 403]);
    }
    for (const path of ['pki_int/ca', 'pki_int/ca/pem', 'pki_int/ca_chain', 'pki_int/crl', 'pki_int/crl/pem', 'pki_int/cert/ca', 'pki_int/issuer/default/pem',
      'pki_int/issuer/default/json', 'pki_int/issuer/default/crl/pem']) {
      expect([path, (await s.v('GET', path, undefined, null)).status]).toEqual([path, 200]);
    }
  });
});
