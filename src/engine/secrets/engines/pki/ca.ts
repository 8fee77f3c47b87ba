import { KeyObject } from 'node:crypto';
import { z } from 'zod';
import { basicConstraints, keyUsage, nameConstraints, RawExtension, subjectAltName } from './extensions';
import {
  certificateData, leafBehaviorOf, NameFields, notAfterOf, OutputFields, requestedNames, requireCa, subjectOf, SubjectFields, urlExtensions, validity,
  withCommonName,
} from './issue';
import { checkNames, sanEntries } from './names';
import { checkRole, RoleBody } from './roles';
import { Ca, CaBundle, chainOf, putCert, rebuildCrl } from './store';
import { keyUsageFlags } from './usages';
import {
  certPem, createCsr, exportPrivateKey, generateKey, keyBits, keyInfo, keyMatches, newSerial,
  parseCertificate, parseCsr, parsePrivateKey, pem, pemBlocks, signCertificate, SignatureChoice, signedOf, storedKey, x509,
} from './x509';
import { commaList, duration, flexibleBoolean, flexibleInt } from '../../core/durations';
import { badInput } from '../../core/request';
import { EngineRoute, SecretsRequest, SecretsResponse } from '../../core/types';

const CaFields = {
  ...NameFields,
  ...OutputFields,
  ...SubjectFields,
  max_path_length: flexibleInt.pipe(z.number().int().min(-1, 'must be -1 (unlimited) or more')).default(-1),
  permitted_dns_domains: commaList.optional(),
  signature_bits: flexibleInt.default(0),
  use_pss: flexibleBoolean.default(false),
  not_before_duration: duration().default(30),
};
const GenerateBody = z.object({
  ...CaFields,
  key_type: z.enum(['rsa', 'ec', 'ed25519'], { message: 'must be rsa, ec or ed25519' }).default('rsa'),
  key_bits: flexibleInt.default(0),
  add_basic_constraints: flexibleBoolean.default(false),
});
const SignIntermediateBody = z.object({
  ...CaFields,
  csr: z.string({ message: 'csr is required' }).max(64 * 1024),
  use_csr_values: flexibleBoolean.default(false),
  enforce_leaf_not_after_behavior: flexibleBoolean.default(false),
});
const CertificateBody = z.object({ certificate: z.string({ message: 'certificate is required' }).max(256 * 1024) });
const PemBundleBody = z.object({ pem_bundle: z.string({ message: 'pem_bundle is required' }).max(256 * 1024) });
type GenerateBody = z.infer<typeof GenerateBody>;
type SignIntermediateBody = z.infer<typeof SignIntermediateBody>;

/** Names on a CA certificate are checked for form only (no role governs them). */
const ANY_NAME = checkRole(RoleBody.parse({ allow_any_name: true, enforce_hostnames: false, allowed_uri_sans: ['*'], allowed_other_sans: ['*'] }));

function exportType(req: SecretsRequest): boolean {
  const type = req.params.type;
  if (type !== 'internal' && type !== 'exported') throw badInput(`type: "${type}" is invalid; use internal or exported`);
  return type === 'exported';
}

function commonName(given: string | undefined): string {
  if (!given) throw badInput('the common_name field is required');
  return given;
}

/** The extensions of a CA certificate: basic constraints, key usage, names, name constraints, URLs. */
async function caExtensions(
  req: SecretsRequest,
  pathLength: number | undefined,
  names: RawExtension | undefined,
  permitted: readonly string[] | undefined,
) {
  const ext: RawExtension[] = [basicConstraints(true, pathLength, true), keyUsage(keyUsageFlags(['CertSign', 'CRLSign']), true)];
  if (names) ext.push(names);
  if (permitted?.length) ext.push(nameConstraints(permitted));
  ext.push(...(await urlExtensions(req.store)));
  return ext;
}

function sanOf(b: z.infer<z.ZodObject<typeof CaFields>>, cn: string): RawExtension | undefined {
  const names = withCommonName(requestedNames(b), cn, b.exclude_cn_from_sans);
  checkNames(ANY_NAME, names, false);
  const sans = sanEntries(names);
  return sans.length ? subjectAltName(sans) : undefined;
}

async function installCa(req: SecretsRequest, bundle: CaBundle): Promise<void> {
  await req.store.put('ca', bundle);
  await putCert(req.store, signedOf(new x509.X509Certificate(bundle.certificate)));
  await rebuildCrl(req.store, req.now);
}

function keyOutput(exported: boolean, key: KeyObject, b: { format: string; private_key_format: 'der' | 'pkcs8' | '' }): Record<string, unknown> {
  if (!exported) return {};
  return { private_key: exportPrivateKey(key, b.private_key_format, b.format === 'der' ? 'der' : 'pem'), private_key_type: keyInfo(key).type };
}

/** root/generate/:type. Refused (a warning, nothing written) while a CA exists, as the public service since 0.8.1. */
async function generateRoot(req: SecretsRequest<GenerateBody>): Promise<SecretsResponse> {
  const exported = exportType(req);
  const b = req.body;
  const cn = commonName(b.common_name);
  const bits = keyBits('key_bits', b.key_type, b.key_bits);
  if (await req.store.exists('ca')) {
    return {
      warnings: [`Refusing to generate a root certificate over an existing root certificate. If you really want to destroy the original root certificate, please issue a delete against ${req.mount.path}root.`],
    };
  }
  const san = sanOf(b, cn);
  const signature = signatureOf(b.key_type, b);
  const { notAfter, warnings } = validity(req, undefined, b.ttl, 0, 0, { notAfter: notAfterOf('', b.not_after), behavior: 'permit' });
  const keys = await generateKey(b.key_type, bits);
  const cert = await signCertificate({
    serial: newSerial(),
    subject: subjectOf(b, cn),
    notBefore: new Date(req.now - b.not_before_duration * 1000),
    notAfter,
    spki: keys.publicKey.export({ type: 'spki', format: 'der' }),
    extensions: await caExtensions(req, b.max_path_length >= 0 ? b.max_path_length : undefined, san, b.permitted_dns_domains),
    signer: keys.privateKey,
    signature,
  });
  await installCa(req, { certificate: cert.pem, privateKey: storedKey(keys.privateKey), chain: [] });
  const { ca_chain: _chain, ...data } = certificateData(b.format, cert, [cert.pem]);
  return { data: { ...data, ...keyOutput(exported, keys.privateKey, b) }, warnings };
}

/** intermediate/generate/:type: a new key (kept sealed until set-signed) and its CSR. */
async function generateIntermediate(req: SecretsRequest<GenerateBody>): Promise<SecretsResponse> {
  const exported = exportType(req);
  const b = req.body;
  const cn = commonName(b.common_name);
  const bits = keyBits('key_bits', b.key_type, b.key_bits);
  const san = sanOf(b, cn);
  const keys = await generateKey(b.key_type, bits);
  const ext = [...(san ? [san] : []), ...(b.add_basic_constraints ? [basicConstraints(true, undefined, true)] : [])];
  const csr = await createCsr(subjectOf(b, cn), keys.privateKey, ext);
  await req.store.put('ca-pending', { privateKey: storedKey(keys.privateKey) });
  const der = Buffer.from(csr.rawData);
  return { data: { csr: b.format === 'der' ? der.toString('base64') : pem('CERTIFICATE REQUEST', der), ...keyOutput(exported, keys.privateKey, b) } };
}

/** The path length of a CA signed by `ca`: as asked, else one less than the signer's. */
function pathLengthUnder(ca: Ca, asked: number): number | undefined {
  if (asked >= 0) return asked;
  const signer = ca.cert.getExtension(x509.BasicConstraintsExtension)?.pathLength;
  if (signer === undefined) return undefined;
  if (signer === 0) throw badInput('signing CA has a max path length of zero; it cannot sign another CA');
  return signer - 1;
}

/**
 * root/sign-intermediate: a CA certificate for a CSR. Without a common_name the CSR's is used (the
 * public service's tutorials sign so); with use_csr_values the CSR's subject and SANs. A notAfter
 * past this CA's is cut to it (with a warning) unless enforce_leaf_not_after_behavior asks for the
 * issuer's own leaf_not_after_behavior, as the public service since 1.17.
 */
async function signIntermediate(req: SecretsRequest<SignIntermediateBody>): Promise<SecretsResponse> {
  const ca = await requireCa(req.store);
  const b = req.body;
  const { csr, spki } = parseCsr('csr', b.csr);
  const csrCn = csr.subjectName.getField('CN')[0] ?? '';
  const cn = b.use_csr_values || !b.common_name ? csrCn : b.common_name;
  const subject = b.use_csr_values ? csr.subjectName : subjectOf(b, cn);
  const csrSan = (csr.getExtension('2.5.29.17') as x509.SubjectAlternativeNameExtension | null);
  const san = b.use_csr_values ? csrSan : sanOf(b, cn);
  const behavior = b.enforce_leaf_not_after_behavior ? leafBehaviorOf(ca) : 'truncate';
  const { notAfter, warnings, truncated } = validity(req, ca, b.ttl, 0, 0, { notAfter: notAfterOf('', b.not_after), behavior });
  const cert = await signCertificate({
    serial: newSerial(),
    subject,
    issuer: ca.cert,
    notBefore: new Date(req.now - b.not_before_duration * 1000),
    notAfter,
    spki,
    extensions: await caExtensions(req, pathLengthUnder(ca, b.max_path_length), san ?? undefined, b.permitted_dns_domains),
    signer: ca.key,
    signature: signatureOf(keyInfo(ca.key).type, b),
  });
  await putCert(req.store, cert);
  if (truncated) warnings.push("the signed intermediary CA certificate's notAfter was truncated to the issuer's notAfter");
  return { data: certificateData(b.format, cert, chainOf(ca)), warnings };
}

/** The signature of a CA certificate: `signature_bits` (RSA: 256, 384 or 512) and `use_pss` of the request. */
function signatureOf(signerType: string, b: { signature_bits: number; use_pss: boolean }): SignatureChoice {
  if (signerType === 'rsa' && b.signature_bits && ![256, 384, 512].includes(b.signature_bits)) {
    throw badInput(`signature_bits: unsupported hash signature algorithm: ${b.signature_bits} (use 256, 384 or 512)`);
  }
  return { bits: b.signature_bits, pss: b.use_pss };
}

const isCa = (cert: x509.X509Certificate) => cert.getExtension(x509.BasicConstraintsExtension)?.ca === true;

/** root/sign-self-issued (sudo): a self-issued CA certificate re-signed by this CA (root rollover). */
async function signSelfIssued(req: SecretsRequest<z.infer<typeof CertificateBody>>): Promise<SecretsResponse> {
  const ca = await requireCa(req.store);
  const given = parseCertificate('certificate', req.body.certificate);
  if (!Buffer.from(given.subjectName.toArrayBuffer()).equals(Buffer.from(given.issuerName.toArrayBuffer()))) throw badInput('given certificate is not self-issued');
  if (!isCa(given)) throw badInput('given certificate is not a CA certificate');
  const cert = await signCertificate({
    serial: given.serialNumber,
    subject: given.subjectName,
    issuer: ca.cert,
    notBefore: given.notBefore,
    notAfter: given.notAfter,
    spki: Buffer.from(given.publicKey.rawData),
    extensions: given.extensions.filter((e) => e.type !== '2.5.29.14' && e.type !== '2.5.29.35'),
    signer: ca.key,
  });
  return { data: { certificate: cert.pem, issuing_ca: ca.bundle.certificate } };
}

/** The certificates of a PEM text (a CA certificate first, then its chain). */
function certificatesOf(field: string, text: string): x509.X509Certificate[] {
  const certs = pemBlocks(text).filter((b) => b.type === 'CERTIFICATE').map((b) => parseCertificate(field, b.pem));
  if (!certs.length) throw badInput(`${field}: no PEM certificate found`);
  return certs;
}

/** intermediate/set-signed: the signed certificate of the pending key becomes this mount's CA. */
async function setSigned(req: SecretsRequest<z.infer<typeof CertificateBody>>): Promise<undefined> {
  const [cert, ...chain] = certificatesOf('certificate', req.body.certificate);
  if (!isCa(cert)) throw badInput('the given certificate is not marked for CA use and cannot be used with this backend');
  const pending = await req.store.get<{ privateKey: string }>('ca-pending');
  if (!pending) throw badInput('no pending intermediate key: run intermediate/generate first');
  const key = parsePrivateKey('pending key', pending.privateKey);
  if (!keyMatches(cert, key)) throw badInput('the certificate does not match the key of the last intermediate/generate');
  await installCa(req, { certificate: certPem(cert), privateKey: pending.privateKey, chain: chain.map(certPem) });
  await req.store.delete('ca-pending');
  return undefined;
}

/** config/ca: a PEM bundle (key, CA certificate, optional chain) replaces the CA. */
async function submitCa(req: SecretsRequest<z.infer<typeof PemBundleBody>>): Promise<undefined> {
  const text = req.body.pem_bundle.replace(/\\n/g, '\n');
  const keys = pemBlocks(text).filter((b) => b.type.endsWith('PRIVATE KEY'));
  if (keys.length !== 1) throw badInput(`pem_bundle: needs exactly one private key, found ${keys.length}`);
  const key = parsePrivateKey('pem_bundle', keys[0].pem);
  const certs = certificatesOf('pem_bundle', text);
  const mine = certs.find((c) => keyMatches(c, key));
  if (!mine) throw badInput('pem_bundle: no certificate matches the private key');
  if (!isCa(mine)) throw badInput('the given certificate is not marked for CA use and cannot be used with this backend');
  await installCa(req, { certificate: certPem(mine), privateKey: storedKey(key), chain: certs.filter((c) => c !== mine).map(certPem) });
  return undefined;
}

/** The CA lifecycle: root, intermediate, self-issued, config/ca. */
export const caRoutes: EngineRoute[] = [
  { pattern: 'root/generate/:type', body: GenerateBody, write: generateRoot },
  {
    pattern: 'root',
    sudo: true,
    delete: async (req) => {
      for (const key of ['ca', 'ca-pending', 'crl']) await req.store.delete(key);
      return undefined;
    },
  },
  { pattern: 'root/sign-intermediate', body: SignIntermediateBody, write: signIntermediate },
  { pattern: 'root/sign-self-issued', body: CertificateBody, sudo: true, write: signSelfIssued },
  { pattern: 'intermediate/generate/:type', body: GenerateBody, write: generateIntermediate },
  { pattern: 'intermediate/set-signed', body: CertificateBody, write: setSigned },
  { pattern: 'config/ca', body: PemBundleBody, write: submitCa },
];
