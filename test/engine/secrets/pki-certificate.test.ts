import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { AsnConvert, AsnUtf8StringConverter } from '@peculiar/asn1-schema';
import * as asn1 from '@peculiar/asn1-x509';
import {
  authorityInfoAccess, authorityKeyIdentifier, basicConstraints, certificatePolicies, crlDistributionPoints, extendedKeyUsage, keyIdentifier,
  keyUsage, nameConstraints, RawExtension, SanEntry, subjectAltName, subjectKeyIdentifier,
} from '../../../src/engine/secrets/engines/pki/extensions';
import { generateIssuedKey } from '../../../src/engine/secrets/engines/pki/keys';
import { KEY_USAGES } from '../../../src/engine/secrets/engines/pki/usages';
import { signCertificate, x509 } from '../../../src/engine/secrets/engines/pki/x509';

/**
 * Certificates, extensions and issued keys built from @peculiar/asn1-x509's structures: the
 * extensions byte for byte against @peculiar/x509's own encoding of the same values (the library
 * the engine parses with), keys against node:crypto's encoders, whole certificates against
 * node:crypto's and @peculiar/x509's parsers and node:crypto's signature check.
 */

const bytes = (e: RawExtension) => Buffer.from(e.value as ArrayBuffer).toString('hex');
const same = (mine: RawExtension, theirs: x509.Extension) => {
  expect(mine.type).toBe(theirs.type);
  expect(mine.critical).toBe(theirs.critical);
  expect(bytes(mine)).toBe(bytes(theirs));
};

/** A throwaway self-signed certificate carrying one IP SAN (to see what node:crypto's parser shows of it). */
async function pemOfSan(ip: string): Promise<string> {
  const keys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const cert = await signCertificate({
    serial: '01',
    subject: [{ CN: ['ip'] }],
    notBefore: new Date(0),
    notAfter: new Date(86400_000),
    spki: keys.publicKey.export({ type: 'spki', format: 'der' }),
    extensions: [subjectAltName([{ type: 'ip', value: ip }])],
    signer: keys.privateKey,
  });
  return cert.pem;
}

describe('extensions', () => {
  test('basic constraints', () => {
    same(basicConstraints(true, 2, true), new x509.BasicConstraintsExtension(true, 2, true));
    same(basicConstraints(true, undefined, true), new x509.BasicConstraintsExtension(true, undefined, true));
    same(basicConstraints(false, undefined, true), new x509.BasicConstraintsExtension(false, undefined, true));
    same(basicConstraints(true, 0, false), new x509.BasicConstraintsExtension(true, 0, false));
  });

  test('key usage: each named bit, every pair, all nine', () => {
    const flags = Object.values(KEY_USAGES);
    const values = [...flags, ...flags.flatMap((a, i) => flags.slice(i + 1).map((b) => a + b)), flags.reduce((a, b) => a + b, 0)];
    for (const value of values) same(keyUsage(value, true), new x509.KeyUsagesExtension(value, true));
  });

  test('extended key usage and policies', () => {
    const oids = ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2', '1.3.6.1.4.1.311.10.3.3'];
    same(extendedKeyUsage(oids), new x509.ExtendedKeyUsageExtension(oids));
    same(certificatePolicies(['1.2.3.4', '2.23.140.1.2.1']), new x509.CertificatePolicyExtension(['1.2.3.4', '2.23.140.1.2.1']));
  });

  test('subject alternative names of every kind', () => {
    const sans: SanEntry[] = [
      { type: 'dns', value: 'www.example.com' },
      { type: 'dns', value: '*.example.com' },
      { type: 'email', value: 'ops@example.com' },
      { type: 'ip', value: '192.0.2.7' },
      { type: 'ip', value: '2001:db8::1' },
      { type: 'url', value: 'spiffe://example.com/web' },
      { type: 'other', oid: '1.3.6.1.4.1.311.20.2.3', value: 'devops@example.com' },
    ];
    const theirs = new asn1.GeneralNames(sans.map((s) => {
      if (s.type === 'other') {
        const value = AsnConvert.serialize(AsnUtf8StringConverter.toASN(s.value));
        return new asn1.GeneralName({ otherName: new asn1.OtherName({ typeId: s.oid, value }) });
      }
      return AsnConvert.parse(new x509.GeneralName(s.type, s.value).rawData, asn1.GeneralName);
    }));
    same(subjectAltName(sans), new x509.Extension('2.5.29.17', false, AsnConvert.serialize(theirs)));
    expect(() => subjectAltName([{ type: 'dns', value: 'bücher.example' }])).toThrow(/IA5String/);
  });

  test('IP addresses as the library writes them; zones dropped; IPv4-mapped addresses kept whole', async () => {
    for (const ip of ['127.0.0.1', '10.1.2.3', '::1', '::', 'fe80::1', '2001:db8::8a2e:370:7334', '1::', '2001:db8:0:0:1:0:0:1', 'fe80::1%eth0']) {
      same(subjectAltName([{ type: 'ip', value: ip }]), new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: ip.replace(/%.*$/, '') }]));
    }
    const mapped = AsnConvert.parse(subjectAltName([{ type: 'ip', value: '::ffff:192.0.2.1' }]).value as ArrayBuffer, asn1.SubjectAlternativeName);
    expect(mapped[0].iPAddress).toBe('::ffff:c000:201');
    expect(new X509Certificate(await pemOfSan('::ffff:192.0.2.1')).subjectAltName).toBe('IP Address:0:0:0:0:0:FFFF:C000:201');
  });

  test('CRL distribution points, authority information access, name constraints', () => {
    const crl = ['http://pki.example/v1/pki/crl', 'http://backup.example/crl'];
    same(crlDistributionPoints(crl), new x509.CRLDistributionPointsExtension(crl));
    same(authorityInfoAccess(['http://ocsp.example'], ['http://pki.example/v1/pki/ca']),
      new x509.AuthorityInfoAccessExtension({ ocsp: ['http://ocsp.example'], caIssuers: ['http://pki.example/v1/pki/ca'] }));
    same(authorityInfoAccess([], ['http://a.example', 'http://b.example']), new x509.AuthorityInfoAccessExtension({ caIssuers: ['http://a.example', 'http://b.example'] }));
    const permitted = new asn1.GeneralSubtrees(['example.com', 'example.org'].map((d) => new asn1.GeneralSubtree({ base: new asn1.GeneralName({ dNSName: d }) })));
    same(nameConstraints(['example.com', 'example.org']),
      new x509.Extension('2.5.29.30', true, AsnConvert.serialize(new asn1.NameConstraints({ permittedSubtrees: permitted }))));
  });

  test('key identifiers', () => {
    for (const [type, options] of [['ec', { namedCurve: 'prime256v1' }], ['rsa', { modulusLength: 2048 }], ['ed25519', {}]] as const) {
      const spki = generateKeyPairSync(type as 'ec', options as { namedCurve: string }).publicKey.export({ type: 'spki', format: 'der' });
      const id = keyIdentifier(spki);
      const info = AsnConvert.parse(spki, asn1.SubjectPublicKeyInfo);
      expect(id.toString('hex')).toBe(createHash('sha1').update(Buffer.from(info.subjectPublicKey)).digest('hex'));
      same(subjectKeyIdentifier(id), new x509.SubjectKeyIdentifierExtension(id.toString('hex')));
      same(authorityKeyIdentifier(id), new x509.AuthorityKeyIdentifierExtension(id.toString('hex')));
    }
  });
});

const spkiDer = (spki: Buffer | asn1.SubjectPublicKeyInfo) => (Buffer.isBuffer(spki) ? spki : Buffer.from(AsnConvert.serialize(spki)));

describe('issued keys', () => {
  const cases = [['ec', 224], ['ec', 256], ['ec', 384], ['ec', 521], ['ed25519', 0], ['rsa', 2048]] as const;
  test.each(cases)('%s %i: the SubjectPublicKeyInfo and the private key in both formats are what node:crypto writes', async (type, bits) => {
    for (const pkcs8 of [false, true]) {
      const key = await generateIssuedKey(type, bits, pkcs8);
      const format = pkcs8 || type === 'ed25519' ? 'pkcs8' : type === 'rsa' ? 'pkcs1' : 'sec1';
      const parsed = createPrivateKey({ key: key.privateKey, format: 'der', type: format });
      expect(parsed.export({ format: 'der', type: format }).equals(key.privateKey)).toBe(true);
      expect(createPublicKey(parsed).export({ format: 'der', type: 'spki' }).equals(spkiDer(key.spki))).toBe(true);
      expect(key.label).toBe(format === 'pkcs8' ? 'PRIVATE KEY' : format === 'pkcs1' ? 'RSA PRIVATE KEY' : 'EC PRIVATE KEY');
    }
  });

  test('a P-256 scalar with leading zero bytes is written at full length', async () => {
    // SEC1: 30 77 02 01 01 04 20 <d>; about one key in 256 has a zero first byte.
    let key;
    for (let i = 0; i < 5000 && !(key && key.privateKey[7] === 0); i++) key = await generateIssuedKey('ec', 256, false);
    expect(key!.privateKey[7]).toBe(0);
    expect(createPrivateKey({ key: key!.privateKey, format: 'der', type: 'sec1' }).export({ format: 'der', type: 'sec1' }).equals(key!.privateKey)).toBe(true);
  });
});

describe('certificates', () => {
  const cases = [
    ['EC P-256', 'ec', { namedCurve: 'prime256v1' }, '1.2.840.10045.4.3.2'],
    ['EC P-384', 'ec', { namedCurve: 'secp384r1' }, '1.2.840.10045.4.3.3'],
    ['RSA-2048', 'rsa', { modulusLength: 2048 }, '1.2.840.113549.1.1.11'],
    ['Ed25519', 'ed25519', {}, '1.3.101.112'],
  ] as const;

  test.each(cases)('%s CA: a root and a leaf parse, verify and re-encode identically', async (_name, type, options, signatureOid) => {
    const caKeys = generateKeyPairSync(type as 'ec', options as { namedCurve: string });
    const now = Date.UTC(2026, 10, 24, 4, 5, 6, 789);
    const root = await signCertificate({
      serial: '7f0102',
      subject: [{ C: ['DE'] }, { O: ['Hangar Ünit'] }, { OU: ['a', 'b'] }, { CN: ['Root CA'] }],
      notBefore: new Date(now - 30_000),
      notAfter: new Date(Date.UTC(2051, 0, 1)),
      spki: caKeys.publicKey.export({ type: 'spki', format: 'der' }),
      extensions: [basicConstraints(true, 1, true), keyUsage(KEY_USAGES.CertSign + KEY_USAGES.CRLSign, true)],
      signer: caKeys.privateKey,
    });
    const rootCert = new x509.X509Certificate(new Uint8Array(root.der));
    const leafKeys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const leaf = await signCertificate({
      serial: 'a1b2c3',
      subject: [{ CN: ['www.example.com'] }],
      issuer: rootCert,
      notBefore: new Date(now),
      notAfter: new Date(now + 3600_000),
      spki: leafKeys.publicKey.export({ type: 'spki', format: 'der' }),
      extensions: [keyUsage(KEY_USAGES.DigitalSignature, true), subjectAltName([{ type: 'dns', value: 'www.example.com' }, { type: 'ip', value: '::1' }])],
      signer: caKeys.privateKey,
    });

    for (const cert of [root, leaf]) {
      // The library's model writes exactly these bytes back: the encoding is canonical DER.
      expect(Buffer.from(AsnConvert.serialize(AsnConvert.parse(cert.der, asn1.Certificate))).equals(cert.der)).toBe(true);
      const parsed = new X509Certificate(cert.der);
      expect(parsed.verify(caKeys.publicKey)).toBe(true);
      expect(cert.pem).toBe(parsed.toString().trim());
      expect(AsnConvert.parse(cert.der, asn1.Certificate).signatureAlgorithm.algorithm).toBe(signatureOid);
    }
    const leafParsed = new X509Certificate(leaf.der);
    expect(leafParsed.checkIssued(new X509Certificate(root.der))).toBe(true);
    expect(leafParsed.subjectAltName).toBe('DNS:www.example.com, IP Address:0:0:0:0:0:0:0:1');
    expect(leaf.serialNumber).toBe('00a1b2c3');
    expect(leafParsed.serialNumber).toBe('A1B2C3');
    expect(leaf.notAfter.getTime()).toBe(Math.floor((now + 3600_000) / 1000) * 1000);
    // Far dates are GeneralizedTime; UTF-8 where PrintableString cannot hold the text; the two OUs share one RDN.
    expect(new X509Certificate(root.der).validTo).toBe('Jan  1 00:00:00 2051 GMT');
    expect(rootCert.subject).toBe('C=DE, O=Hangar Ünit, OU=a+OU=b, CN=Root CA');
    // The issuer is the root's subject byte for byte; @peculiar/x509 reads what node:crypto reads.
    const leafX = new x509.X509Certificate(new Uint8Array(leaf.der));
    expect(Buffer.from(leafX.issuerName.toArrayBuffer()).equals(Buffer.from(rootCert.subjectName.toArrayBuffer()))).toBe(true);
    expect(leafX.issuer).toBe(rootCert.subject);
    expect(await leafX.verify({ publicKey: rootCert.publicKey, signatureOnly: true }, globalThis.crypto)).toBe(true);
    expect(leafX.getExtension(x509.SubjectAlternativeNameExtension)!.names.items.map((n) => n.value)).toEqual(['www.example.com', '::1']);
    const tbs = AsnConvert.parse(leaf.der, asn1.Certificate).tbsCertificate;
    expect(tbs.extensions!.map((e) => e.extnID)).toEqual(['2.5.29.15', '2.5.29.17', '2.5.29.14', '2.5.29.35']);
  });
});
