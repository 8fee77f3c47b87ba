import { X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { embeddedSecrets } from './embedded-reconcile';
import { apply, destroy } from '../../../src/reconcile';
import { tempDir } from '../../helpers/storage';

/** The PKI kinds through the embedded engine (the CLI's in-process mode on a data directory). */
describe('pki reconcile kinds, embedded', () => {
  const { payload, secrets } = embeddedSecrets();
  const caOf = async (mount: string) => new X509Certificate((await secrets((c) => c.read(`${mount}/cert/ca`)))!.data!.certificate as string);

  test('root, intermediate, role, URLs and CRL settings: created, unchanged, updated, deleted', async () => {
    for (const path of ['pki', 'pki_int']) expect(await apply(payload('secrets.mount', path, { type: 'pki', description: '', defaultLeaseTtl: 0, maxLeaseTtl: 315360000 }))).toBe('created');
    const keyFile = join(tempDir(), 'root-key.pem');
    const root = payload('secrets.pki-root', 'pki', { commonName: 'Reconciled Root', keyType: 'ec', keyBits: 384, ttl: 315360000, privateKeyFile: keyFile });
    expect(await apply(root)).toBe('created');
    expect(readFileSync(keyFile, 'utf8')).toContain('BEGIN EC PRIVATE KEY');
    expect((statSync(keyFile).mode % 0o1000).toString(8)).toBe('600');
    expect(await apply(root)).toBe('unchanged');
    const firstRoot = await caOf('pki');

    const int = payload('secrets.pki-intermediate', 'pki_int', { commonName: 'Reconciled Intermediate', issuerPath: 'pki', ttl: 157680000 });
    expect(await apply(int)).toBe('created');
    expect(await apply(int)).toBe('unchanged');
    expect((await caOf('pki_int')).checkIssued(firstRoot)).toBe(true);

    // A renamed root replaces the CA; the intermediate, no longer signed by it, is signed again.
    expect(await apply({ ...root, desired: { ...root.desired, commonName: 'Second Root' } })).toBe('updated');
    const secondRoot = await caOf('pki');
    expect(secondRoot.subject).toContain('CN=Second Root');
    expect(await apply(int)).toBe('updated');
    expect((await caOf('pki_int')).verify(secondRoot.publicKey)).toBe(true);

    const role = payload('secrets.pki-role', 'pki_int/web', {
      ttl: 3600, max_ttl: 86400, allowed_domains: ['example.com'], allow_subdomains: true, key_type: 'ec', key_bits: 256, key_usage: ['DigitalSignature'],
    });
    expect(await apply(role)).toBe('created');
    expect(await apply(role)).toBe('unchanged');
    expect(await apply({ ...role, desired: { ...role.desired, max_ttl: 172800 } })).toBe('updated');
    const issued = await secrets((c) => c.write('pki_int/issue/web', { common_name: 'a.example.com' }));
    expect(issued?.data?.certificate).toContain('BEGIN CERTIFICATE');

    const urls = payload('secrets.pki-urls', 'pki_int', { issuing_certificates: ['http://127.0.0.1:8200/v1/pki_int/ca'], crl_distribution_points: [], ocsp_servers: [] });
    expect(await apply(urls)).toBe('created');
    expect(await apply(urls)).toBe('unchanged');
    const crl = payload('secrets.pki-crl', 'pki_int', { expiry: 172800, disable: false });
    expect(await apply(crl)).toBe('created');
    expect(await apply(crl)).toBe('unchanged');
    expect((await secrets((c) => c.read('pki_int/config/crl')))?.data?.expiry).toBe('48h');

    for (const p of [crl, urls, role, int, root]) {
      expect(await destroy(p)).toBe(true);
      expect(await destroy(p)).toBe(false);
    }
    expect((await secrets((c) => c.read('pki_int/config/crl')))?.data?.expiry).toBe('72h');
    expect(await secrets((c) => c.read('pki_int/roles/web'))).toBeUndefined();
  });
});
