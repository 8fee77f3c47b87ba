import { createPublicKey, KeyObject } from 'node:crypto';
import { z } from 'zod';
import { basicConstraints, keyUsage, nameConstraints, RawExtension, subjectAltName } from './extensions';
import {
  certificateData, leafBehaviorOf, NameFields, notAfterOf, OutputFields, requestedNames, requireCa, subjectOf, SubjectFields, urlExtensionsFor,
  validity, withCommonName,
} from './issue';
import { addIssuer, addKey, Ca, checkName, Issuers, linkKeys, readIssuers, resolveKey, StoredIssuers, writeIssuers } from './issuers';
import { checkNames, sanEntries } from './names';
import { DEFAULT_REF } from './refs';
import { checkRole, RoleBody } from './roles';
import { putCert, rebuildCrl } from './store';
import { keyUsageFlags } from './usages';
import {
  certPem, createCsr, exportPrivateKey, generateKey, keyBits, keyInfo, newSerial,
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
const NewKeyFields = {
  key_type: z.enum(['rsa', 'ec', 'ed25519'], { message: 'must be rsa, ec or ed25519' }).default('rsa'),
  key_bits: flexibleInt.default(0),
  key_name: z.string().max(128).default(''),
  key_ref: z.string().max(256).default(DEFAULT_REF),
};
const GenerateBody = z.object({
  ...CaFields,
  ...NewKeyFields,
  issuer_name: z.string().max(128).default(''),
  add_basic_constraints: flexibleBoolean.default(false),
});
const SignIntermediateBody = z.object({
  ...CaFields,
  csr: z.string({ message: 'csr is required' }).max(64 * 1024),
  use_csr_values: flexibleBoolean.default(false),
  enforce_leaf_not_after_behavior: flexibleBoolean.default(false),
});
const CertificateBody = z.object({ certificate: z.string({ message: 'certificate is required' }).max(256 * 1024) });
export const PemBundleBody = z.object({ pem_bundle: z.string({ message: 'pem_bundle is required' }).max(256 * 1024) });
type GenerateBody = z.infer<typeof GenerateBody>;
type SignIntermediateBody = z.infer<typeof SignIntermediateBody>;

/** Names on a CA certificate are checked for form only (no role governs them). */
const ANY_NAME = checkRole(RoleBody.parse({ allow_any_name: true, enforce_hostnames: false, allowed_uri_sans: ['*'], allowed_other_sans: ['*'] }));

/** The `:type` of a generate path: `internal`, `exported` or `existing` (a key of the mount, `key_ref`). */
export function exportType(req: SecretsRequest, existing = true): 'internal' | 'exported' | 'existing' {
  const type = req.params.type ?? 'existing';
  const allowed = existing ? ['internal', 'exported', 'existing'] : ['internal', 'exported'];
  if (!allowed.includes(type)) throw badInput(`type: "${type}" is invalid; use ${allowed.join(', ')}`);
  return type as 'internal' | 'exported' | 'existing';
}

/** The key of a generate request: a new one (added to the mount's keys) or the mount's `key_ref` for `existing`. */
async function keyFor(
  type: 'internal' | 'exported' | 'existing',
  issuers: Issuers,
  b: { key_type: 'rsa' | 'ec' | 'ed25519'; key_bits: number; key_name: string; key_ref: string },
): Promise<{ key: KeyObject; keyId: string; keyName: string; stored: StoredIssuers }> {
  if (type === 'existing') {
    const found = resolveKey(issuers, b.key_ref);
    return { key: found.key, keyId: found.entry.id, keyName: found.entry.name, stored: issuers.stored };
  }
  const bits = keyBits('key_bits', b.key_type, b.key_bits);
  checkName('key_name', b.key_name, issuers.stored.keys);
  const { privateKey } = await generateKey(b.key_type, bits);
  const added = addKey(issuers.stored, privateKey, storedKey(privateKey), b.key_name);
  return { key: privateKey, keyId: added.id, keyName: b.key_name, stored: added.stored };
}

function commonName(given: string | undefined): string {
  if (!given) throw badInput('the common_name field is required');
  return given;
}

/** The extensions of a CA certificate: basic constraints, key usage, names, name constraints, URLs. */
async function caExtensions(
  req: SecretsRequest,
  signer: Ca | undefined,
  pathLength: number | undefined,
  names: RawExtension | undefined,
  permitted: readonly string[] | undefined,
) {
  const ext: RawExtension[] = [basicConstraints(true, pathLength, true), keyUsage(keyUsageFlags(['CertSign', 'CRLSign']), true)];
  if (names) ext.push(names);
  if (permitted?.length) ext.push(nameConstraints(permitted));
  ext.push(...(await urlExtensionsFor(req.store, signer)));
  return ext;
}

function sanOf(b: z.infer<z.ZodObject<typeof CaFields>>, cn: string): RawExtension | undefined {
  const names = withCommonName(requestedNames(b), cn, b.exclude_cn_from_sans);
  checkNames(ANY_NAME, names, false);
  const sans = sanEntries(names);
  return sans.length ? subjectAltName(sans) : undefined;
}

/** Writes the mount's issuers and keys with what a request added, the new CA certificates stored and the CRLs rebuilt. */
async function commitIssuers(req: SecretsRequest, stored: StoredIssuers, newCerts: readonly x509.X509Certificate[]): Promise<void> {
  await writeIssuers(req.store, stored);
  for (const cert of newCerts) await putCert(req.store, signedOf(cert));
  await rebuildCrl(req.store, req.now);
}

function keyOutput(exported: boolean, key: KeyObject, b: { format: string; private_key_format: 'der' | 'pkcs8' | '' }): Record<string, unknown> {
  if (!exported) return {};
  return { private_key: exportPrivateKey(key, b.private_key_format, b.format === 'der' ? 'der' : 'pem'), private_key_type: keyInfo(key).type };
}

/**
 * root/generate/:type, issuers/generate/root/:type, root/rotate/:type: a self-signed CA certificate
 * becomes a new issuer of the mount (with a new key, or the mount's `key_ref` for `existing`); it is
 * the default when there is none yet (or with default_follows_latest_issuer), as the public service
 * since 1.11.
 */
async function generateRoot(req: SecretsRequest<GenerateBody>): Promise<SecretsResponse> {
  const type = exportType(req);
  const b = req.body;
  const cn = commonName(b.common_name);
  const issuers = await readIssuers(req.store);
  checkName('issuer_name', b.issuer_name, issuers.stored.issuers);
  const san = sanOf(b, cn);
  const { key, keyId, keyName, stored } = await keyFor(type, issuers, b);
  const signature = signatureOf(keyInfo(key).type, b);
  const { notAfter, warnings } = validity(req, undefined, b.ttl, 0, 0, { notAfter: notAfterOf('', b.not_after), behavior: 'permit' });
  const cert = await signCertificate({
    serial: newSerial(),
    subject: subjectOf(b, cn),
    notBefore: new Date(req.now - b.not_before_duration * 1000),
    notAfter,
    spki: createPublicKey(key).export({ type: 'spki', format: 'der' }),
    extensions: await caExtensions(req, undefined, b.max_path_length >= 0 ? b.max_path_length : undefined, san, b.permitted_dns_domains),
    signer: key,
    signature,
  });
  const parsed = new x509.X509Certificate(cert.pem);
  const added = addIssuer(issuers, stored, parsed, [], b.issuer_name, req.now);
  await commitIssuers(req, added.stored, [parsed]);
  const { ca_chain: _chain, ...data } = certificateData(b.format, cert, [cert.pem]);
  return {
    data: { ...data, issuer_id: added.id, issuer_name: b.issuer_name, key_id: keyId, key_name: keyName, ...keyOutput(type === 'exported', key, b) },
    warnings,
  };
}

/**
 * intermediate/generate/:type, issuers/generate/intermediate/:type, intermediate/cross-sign: a CSR
 * for a new key of the mount (or its `key_ref` for `existing` and cross-signing); the signed
 * certificate comes back through set-signed.
 */
async function generateIntermediate(req: SecretsRequest<GenerateBody>): Promise<SecretsResponse> {
  const type = exportType(req);
  const b = req.body;
  const cn = commonName(b.common_name);
  const issuers = await readIssuers(req.store);
  const san = sanOf(b, cn);
  const { key, keyId, stored } = await keyFor(type, issuers, b);
  const ext = [...(san ? [san] : []), ...(b.add_basic_constraints ? [basicConstraints(true, undefined, true)] : [])];
  const csr = await createCsr(subjectOf(b, cn), key, ext);
  if (stored !== issuers.stored) await writeIssuers(req.store, stored);
  const der = Buffer.from(csr.rawData);
  return { data: { csr: b.format === 'der' ? der.toString('base64') : pem('CERTIFICATE REQUEST', der), key_id: keyId, ...keyOutput(type === 'exported', key, b) } };
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
  const ca = await requireCa(req);
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
    extensions: await caExtensions(req, ca, pathLengthUnder(ca, b.max_path_length), san ?? undefined, b.permitted_dns_domains),
    signer: ca.key,
    signature: signatureOf(keyInfo(ca.key).type, b),
  });
  await putCert(req.store, cert);
  if (truncated) warnings.push("the signed intermediary CA certificate's notAfter was truncated to the issuer's notAfter");
  return { data: certificateData(b.format, cert, ca.chain), warnings };
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
  const ca = await requireCa(req);
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
  return { data: { certificate: cert.pem, issuing_ca: ca.issuer.certificate } };
}

/**
 * Imports the CA certificates and keys of a PEM text as issuers and keys of the mount (ones it
 * already has are reported as existing), each issuer linked to the mount's key of its public key;
 * the public service's import answer.
 */
export async function importPem(req: SecretsRequest, field: string, text: string, needsKey: boolean): Promise<SecretsResponse> {
  const blocks = pemBlocks(text.replace(/\\n/g, '\n'));
  const issuers = await readIssuers(req.store);
  let stored = issuers.stored;
  const importedKeys: string[] = [];
  const existingKeys: string[] = [];
  for (const block of blocks.filter((k) => k.type.endsWith('PRIVATE KEY'))) {
    const key = parsePrivateKey(field, block.pem);
    const added = addKey(stored, key, storedKey(key), '');
    stored = added.stored;
    (added.existed ? existingKeys : importedKeys).push(added.id);
  }
  const certs = blocks.filter((b) => b.type === 'CERTIFICATE').map((b) => parseCertificate(field, b.pem));
  if (!certs.length && !importedKeys.length && !existingKeys.length) throw badInput(`${field}: no PEM certificate or private key found`);
  const importedIssuers: string[] = [];
  const existingIssuers: string[] = [];
  const mapping: Record<string, string> = {};
  const added: x509.X509Certificate[] = [];
  for (const [i, cert] of certs.entries()) {
    if (!isCa(cert)) throw badInput('the given certificate is not marked for CA use and cannot be used with this backend');
    const result = addIssuer(issuers, stored, cert, certs.slice(i + 1).map(certPem), '', req.now);
    if (i === 0 && needsKey && !result.keyId) throw badInput(`${field}: the certificate does not match any key of this mount: run intermediate/generate first`);
    stored = result.stored;
    if (result.existed) {existingIssuers.push(result.id);} else {
      importedIssuers.push(result.id);
      added.push(cert);
    }
  }
  stored = linkKeys(stored);
  for (const id of [...importedIssuers, ...existingIssuers]) mapping[id] = stored.issuers.find((i) => i.id === id)!.keyId;
  await commitIssuers(req, stored, added);
  const list = (l: string[]) => (l.length ? l : null);
  return {
    data: {
      imported_issuers: list(importedIssuers),
      imported_keys: list(importedKeys),
      mapping,
      existing_issuers: list(existingIssuers),
      existing_keys: list(existingKeys),
    },
  };
}

/** Removes every issuer and key of the mount, their CRLs too (`root` DELETE, sudo): issued certificates stay listed. */
async function deleteAll(req: SecretsRequest): Promise<undefined> {
  for (const key of ['issuers', 'ca', 'ca-pending', 'crl']) await req.store.delete(key);
  for (const id of await req.store.list('crls/')) await req.store.delete(`crls/${id}`);
  return undefined;
}

/** The CA lifecycle: roots, intermediates, imports, self-issued re-signing (also per issuer: `issuer/:ref/...`). */
export const caRoutes: EngineRoute[] = [
  { pattern: 'root/generate/:type', body: GenerateBody, write: generateRoot },
  { pattern: 'issuers/generate/root/:type', body: GenerateBody, write: generateRoot },
  { pattern: 'root/rotate/:type', body: GenerateBody, write: generateRoot },
  { pattern: 'root', sudo: true, delete: deleteAll },
  { pattern: 'root/sign-intermediate', body: SignIntermediateBody, write: signIntermediate },
  { pattern: 'issuer/:ref/sign-intermediate', body: SignIntermediateBody, write: signIntermediate },
  { pattern: 'root/sign-self-issued', body: CertificateBody, sudo: true, write: signSelfIssued },
  { pattern: 'issuer/:ref/sign-self-issued', body: CertificateBody, sudo: true, write: signSelfIssued },
  { pattern: 'intermediate/generate/:type', body: GenerateBody, write: generateIntermediate },
  { pattern: 'issuers/generate/intermediate/:type', body: GenerateBody, write: generateIntermediate },
  { pattern: 'intermediate/cross-sign', body: GenerateBody, write: generateIntermediate },
  {
    pattern: 'intermediate/set-signed',
    body: CertificateBody,
    write: (req: SecretsRequest<z.infer<typeof CertificateBody>>) => importPem(req, 'certificate', req.body.certificate, true),
  },
  { pattern: 'issuers/import/cert', body: PemBundleBody, write: (req: SecretsRequest<z.infer<typeof PemBundleBody>>) => importPem(req, 'pem_bundle', req.body.pem_bundle, false) },
  { pattern: 'issuers/import/bundle', body: PemBundleBody, write: (req: SecretsRequest<z.infer<typeof PemBundleBody>>) => importPem(req, 'pem_bundle', req.body.pem_bundle, false) },
  { pattern: 'config/ca', body: PemBundleBody, write: (req: SecretsRequest<z.infer<typeof PemBundleBody>>) => importPem(req, 'pem_bundle', req.body.pem_bundle, false) },
];
