import { X509Certificate } from 'node:crypto';
import { startSecrets, SecretsTestServer } from './helpers';
import { Openssl } from './pki-helpers';
import { ManualClock } from '../../../src/engine/clock';
import { STORAGE_KINDS } from '../../helpers/storage';

const openssl = new Openssl();

/** A CSR made by openssl (a real client's request). */
async function opensslCsr(subject: string): Promise<string> {
  const key = openssl.file('');
  await openssl.run('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key);
  const out = openssl.file('');
  const r = await openssl.run('req', '-new', '-key', key, '-subj', subject, '-out', out);
  if (r.code !== 0) throw new Error(r.out);
  return (await import('node:fs')).readFileSync(out, 'utf8');
}

/** Role fields, signature choices, not_after and sign-intermediate as the public service's tools use them. */
describe.each(STORAGE_KINDS)('PKI role fields and signatures on %s', (kind) => {
  let s: SecretsTestServer;
  beforeAll(async () => {
    s = await startSecrets(kind, { clock: new ManualClock(Date.now()) });
  });
  afterAll(() => s.close());

  const ok = async (method: string, path: string, body?: unknown, status = 200) => {
    const res = await s.v(method, path, body);
    if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };

  test('a role reads back every field of the public service with its default (what the Terraform provider reads)', async () => {
    await ok('POST', 'sys/mounts/pkf', { type: 'pki', config: { max_lease_ttl: '87600h' } }, 204);
    const written = await ok('POST', 'pkf/roles/plain', {});
    const role = (await ok('GET', 'pkf/roles/plain')).data;
    expect(written.data).toEqual(role);
    expect(role).toMatchObject({
      ttl: 0,
      max_ttl: 0,
      key_type: 'rsa',
      key_bits: 2048,
      signature_bits: 256,
      use_pss: false,
      issuer_ref: 'default',
      allowed_domains_template: false,
      allowed_uri_sans_template: false,
      allow_token_displayname: false,
      allowed_serial_numbers: [],
      allowed_user_ids: [],
      cn_validations: ['email', 'hostname'],
      not_after: '',
      not_before_duration: 30,
      serial_number_source: 'json-csr',
      allow_wildcard_certificates: true,
      generate_lease: false,
      no_store: false,
      require_cn: true,
      key_usage: ['DigitalSignature', 'KeyAgreement', 'KeyEncipherment'],
      ext_key_usage: [],
      policy_identifiers: [],
    });
    for (const field of ['key_bits', 'signature_bits', 'ttl', 'max_ttl', 'not_before_duration']) expect(typeof role[field]).toBe('number');

    const ec = (await ok('POST', 'pkf/roles/ec', { key_type: 'ec', signature_bits: 384, cn_validations: 'disabled', issuer_ref: 'mine' })).data;
    expect(ec).toMatchObject({ key_bits: 256, signature_bits: 384, cn_validations: ['disabled'], issuer_ref: 'mine' });
    expect((await s.v('POST', 'pkf/roles/bad', { signature_bits: 128 })).text).toMatch(/signature_bits/);
    expect((await s.v('POST', 'pkf/roles/bad', { not_after: 'tomorrow' })).text).toMatch(/not_after/);
    expect((await s.v('POST', 'pkf/roles/bad', { cn_validations: 'email,email' })).text).toMatch(/specified multiple times/);
    expect((await s.v('POST', 'pkf/roles/bad', { serial_number_source: 'x' })).text).toMatch(/serial_number_source/);
    expect((await s.v('GET', 'pkf/roles/bad')).status).toBe(404);
  });

  test('signature_bits and use_pss choose the signature of an RSA CA; EC signs with its curve hash', async () => {
    await ok('POST', 'pkf/root/generate/internal', { common_name: 'RSA Root', key_type: 'rsa', ttl: '8760h', signature_bits: 512 });
    const root = (await s.v('GET', 'pkf/ca/pem', undefined, null)).text;
    expect(await openssl.text(root)).toMatch(/Signature Algorithm: sha512WithRSAEncryption/);
    await ok('POST', 'pkf/roles/s384', { allow_any_name: true, key_type: 'ec', signature_bits: 384, ttl: '1h' });
    await ok('POST', 'pkf/roles/pss', { allow_any_name: true, key_type: 'ec', signature_bits: 256, use_pss: true, ttl: '1h' });
    const a = (await ok('POST', 'pkf/issue/s384', { common_name: 'a.example.com' })).data;
    expect(await openssl.text(a.certificate)).toMatch(/Signature Algorithm: sha384WithRSAEncryption/);
    const b = (await ok('POST', 'pkf/issue/pss', { common_name: 'b.example.com' })).data;
    const text = await openssl.text(b.certificate);
    expect(text).toMatch(/Signature Algorithm: rsassaPss/);
    expect(text).toMatch(/Salt Length: (0x)?20/);
    for (const cert of [a.certificate, b.certificate]) expect((await openssl.verify(root, cert)).code).toBe(0);

    await ok('POST', 'sys/mounts/pkf_ec', { type: 'pki' }, 204);
    await ok('POST', 'pkf_ec/root/generate/internal', { common_name: 'EC Root', key_type: 'ec', key_bits: 384, ttl: '8760h' });
    await ok('POST', 'pkf_ec/roles/r', { allow_any_name: true, signature_bits: 512, key_type: 'ec' });
    const c = (await ok('POST', 'pkf_ec/issue/r', { common_name: 'c.example.com' })).data;
    expect(await openssl.text(c.certificate)).toMatch(/Signature Algorithm: ecdsa-with-SHA384/);
  });

  test('not_after of the role or the request; never with a ttl; past the CA refused', async () => {
    const at = new Date(Date.now() + 3 * 86400_000);
    at.setUTCMilliseconds(0);
    const stamp = at.toISOString().replace('.000Z', 'Z');
    await ok('POST', 'pkf/roles/fixed', { allow_any_name: true, key_type: 'ec', not_after: stamp });
    const a = (await ok('POST', 'pkf/issue/fixed', { common_name: 'a.example.com' })).data;
    expect(a.expiration).toBe(at.getTime() / 1000);
    const b = (await ok('POST', 'pkf/issue/s384', { common_name: 'b.example.com', not_after: stamp })).data;
    expect(b.expiration).toBe(at.getTime() / 1000);
    expect((await s.v('POST', 'pkf/issue/s384', { common_name: 'b.example.com', not_after: stamp, ttl: '1h' })).text).toMatch(/Either ttl or not_after/);
    expect((await s.v('POST', 'pkf/issue/s384', { common_name: 'b.example.com', not_after: '2999-01-01T00:00:00Z' })).text).toMatch(/beyond the expiration of the CA/);
    expect((await s.v('POST', 'pkf/issue/s384', { common_name: 'b.example.com', not_after: 'soon' })).status).toBe(400);
  });

  test('sign-intermediate as the tutorial: the CSR common name, a TTL past the root truncated with a warning', async () => {
    await ok('POST', 'sys/mounts/pkf_int', { type: 'pki', config: { max_lease_ttl: '87600h' } }, 204);
    const csr = (await ok('POST', 'pkf_int/intermediate/generate/internal', { common_name: 'example.com Intermediate Authority' })).data.csr;
    const signed = await ok('POST', 'pkf/root/sign-intermediate', { csr, format: 'pem_bundle', ttl: '43800h' });
    const cert = new X509Certificate(signed.data.certificate);
    expect(cert.subject).toBe('CN=example.com Intermediate Authority');
    const root = new X509Certificate((await s.v('GET', 'pkf/ca/pem', undefined, null)).text);
    expect(cert.validTo).toBe(root.validTo);
    expect(signed.warnings).toContain("the signed intermediary CA certificate's notAfter was truncated to the issuer's notAfter");
    // enforce_leaf_not_after_behavior applies the issuer's own behaviour (err by default).
    const enforced = await s.v('POST', 'pkf/root/sign-intermediate', { csr, ttl: '43800h', enforce_leaf_not_after_behavior: true });
    expect(enforced.status).toBe(400);
    // A CSR from openssl, a common name given: the given one wins.
    const other = await opensslCsr('/CN=From CSR');
    const named = await ok('POST', 'pkf/root/sign-intermediate', { csr: other, common_name: 'Given', ttl: '1h' });
    expect(new X509Certificate(named.data.certificate).subject).toBe('CN=Given');
    const fromCsr = await ok('POST', 'pkf/root/sign-intermediate', { csr: other, ttl: '1h' });
    expect(new X509Certificate(fromCsr.data.certificate).subject).toBe('CN=From CSR');
  });

  test('allowed_serial_numbers governs a requested serial_number', async () => {
    await ok('POST', 'pkf/roles/serials', { allow_any_name: true, key_type: 'ec', allowed_serial_numbers: 'dev-*' });
    expect((await ok('POST', 'pkf/issue/serials', { common_name: 'a.example.com', serial_number: 'dev-1' })).data.certificate).toBeDefined();
    expect((await s.v('POST', 'pkf/issue/serials', { common_name: 'a.example.com', serial_number: 'prod-1' })).text).toMatch(/serial_number prod-1 not allowed/);
  });
});
