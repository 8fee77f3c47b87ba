import { createPublicKey } from 'node:crypto';
import { z } from 'zod';
import { exportType, PemBundleBody } from './ca';
import { keyIdentifier } from './extensions';
import {
  addKey, AiaUrls, ALL_USAGES, Ca, checkName, findIssuer, Issuers, keyTypeOf, readIssuers, resolveIssuer, resolveKey, StoredIssuers, Usage, USAGES,
  writeIssuers,
} from './issuers';
import { DEFAULT_REF } from './refs';
import { rebuildCrl, RevokedRecord } from './store';
import { colonSerial, exportPrivateKey, generateKey, keyBits, parsePrivateKey, pemBlocks, serialKey, storedKey, x509 } from './x509';
import { commaList, flexibleBoolean, flexibleInt, rfc3339 } from '../../core/durations';
import { badInput } from '../../core/request';
import { EngineRoute, SecretsRequest, SecretsResponse } from '../../core/types';

/** Revocation signature algorithms by the public service's names (Go's), matched case-insensitively. */
const SIGNATURE_ALGORITHMS = [
  'SHA256WithRSA', 'SHA384WithRSA', 'SHA512WithRSA', 'SHA256WithRSAPSS', 'SHA384WithRSAPSS', 'SHA512WithRSAPSS',
  'ECDSAWithSHA256', 'ECDSAWithSHA384', 'ECDSAWithSHA512', 'PureEd25519',
];

const IssuerBody = z.object({
  issuer_name: z.string().max(128).optional(),
  leaf_not_after_behavior: z.enum(['err', 'truncate', 'permit'], { message: 'Unknown value for field `leaf_not_after_behavior`. Possible values are `err`, `truncate`, and `permit`.' }).optional(),
  usage: commaList.optional(),
  revocation_signature_algorithm: z.string().max(64).optional(),
  manual_chain: commaList.optional(),
  issuing_certificates: commaList.optional(),
  crl_distribution_points: commaList.optional(),
  ocsp_servers: commaList.optional(),
  enable_aia_url_templating: flexibleBoolean.optional(),
});
type IssuerBody = z.infer<typeof IssuerBody>;

const KeyGenerateBody = z.object({
  key_name: z.string().max(128).default(''),
  key_type: z.enum(['rsa', 'ec', 'ed25519'], { message: 'must be rsa, ec or ed25519' }).default('rsa'),
  key_bits: flexibleInt.default(0),
  format: z.enum(['pem', 'der', 'pem_bundle'], { message: 'must be pem, der or pem_bundle' }).default('pem'),
  private_key_format: z.enum(['der', 'pkcs8', ''], { message: 'must be der or pkcs8' }).default('der'),
});
const KeyImportBody = PemBundleBody.extend({ key_name: z.string().max(128).default('') });
const KeyUpdateBody = z.object({ key_name: z.string().max(128).default('') });
const IssuersConfigBody = z.object({ default: z.string().max(256).optional(), default_follows_latest_issuer: flexibleBoolean.optional() });
const ReplaceBody = z.object({ default: z.string({ message: 'default is required' }).max(256) });
const KeysConfigBody = z.object({ default: z.string().max(256).optional() });

const list = (l: readonly string[]) => (l.length ? [...l] : null);

/** An issuer as the public service shows it (`issuer/:ref`). */
export function issuerData(ca: Ca): Record<string, unknown> {
  const i = ca.issuer;
  const data: Record<string, unknown> = {
    issuer_id: i.id,
    issuer_name: i.name,
    key_id: i.keyId,
    certificate: i.certificate,
    manual_chain: list(i.manualChain),
    ca_chain: ca.chain,
    leaf_not_after_behavior: i.leafNotAfterBehavior,
    usage: [...i.usage].sort().join(','),
    revocation_signature_algorithm: i.revocationSignatureAlgorithm,
    revoked: i.revokedAt !== undefined,
    issuing_certificates: i.aia?.issuing_certificates ?? [],
    crl_distribution_points: i.aia?.crl_distribution_points ?? [],
    delta_crl_distribution_points: [],
    ocsp_servers: i.aia?.ocsp_servers ?? [],
    enable_aia_url_templating: i.aia?.enable_templating ?? false,
  };
  if (i.revokedAt !== undefined) {
    Object.assign(data, { revocation_time: Math.floor(i.revokedAt / 1000), revocation_time_rfc3339: rfc3339(i.revokedAt) });
  }
  return data;
}

const issuerOf = async (req: SecretsRequest) => {
  const issuers = await readIssuers(req.store);
  return { issuers, ca: resolveIssuer(issuers, req.params.ref) };
};

/** Replaces one issuer's entry, writes, rebuilds the CRLs. */
async function saveIssuer(req: SecretsRequest, issuers: Issuers, next: Ca['issuer']): Promise<StoredIssuers> {
  const stored = { ...issuers.stored, issuers: issuers.stored.issuers.map((i) => (i.id === next.id ? next : i)) };
  await writeIssuers(req.store, stored);
  await rebuildCrl(req.store, req.now);
  return stored;
}

/**
 * `issuer/:ref` write: POST sets every field (those left out take their defaults), PATCH only
 * those given, as the public service.
 */
async function updateIssuer(req: SecretsRequest<IssuerBody>, patch: boolean): Promise<SecretsResponse> {
  const { issuers, ca } = await issuerOf(req);
  const b = req.body;
  const i = ca.issuer;
  const pick = <T>(given: T | undefined, current: T, fallback: T): T => given ?? (patch ? current : fallback);
  const name = checkName('issuer_name', pick(b.issuer_name, i.name, ''), issuers.stored.issuers, i.id);
  const usage = pick(b.usage, i.usage as string[], [...ALL_USAGES]);
  for (const u of usage) if (!USAGES.includes(u as Usage)) throw badInput(`usage: unable to parse specified usages: ${usage.join(',')} - valid values are ${USAGES.join(',')}`);
  if (i.revokedAt !== undefined && usage.includes('issuing-certificates') && !i.usage.includes('issuing-certificates')) {
    throw badInput('This issuer was revoked; unable to modify its usage to include certificate signing again.');
  }
  // Bit cRLSign of the key usage flags (no bitwise operators here).
  const canSignCrls = Math.floor((ca.cert.getExtension(x509.KeyUsagesExtension)?.usages ?? 0) / x509.KeyUsageFlags.cRLSign) % 2 === 1;
  if (usage.includes('crl-signing') && !canSignCrls) {
    throw badInput("This issuer's underlying certificate lacks the CRLSign KeyUsage value; unable to set CRLSigningUsage on this issuer as a result.");
  }
  const algorithm = pick(b.revocation_signature_algorithm, i.revocationSignatureAlgorithm, '');
  const knownAlgorithm = SIGNATURE_ALGORITHMS.find((a) => a.toLowerCase() === algorithm.toLowerCase());
  if (algorithm && !knownAlgorithm) throw badInput(`revocation_signature_algorithm: unknown signature algorithm value ${algorithm} - valid values are ${SIGNATURE_ALGORITHMS.join(', ')}`);
  const templating = pick(b.enable_aia_url_templating, i.aia?.enable_templating ?? false, false);
  const aia: AiaUrls = {
    issuing_certificates: pick(b.issuing_certificates, [...(i.aia?.issuing_certificates ?? [])], []),
    crl_distribution_points: pick(b.crl_distribution_points, [...(i.aia?.crl_distribution_points ?? [])], []),
    ocsp_servers: pick(b.ocsp_servers, [...(i.aia?.ocsp_servers ?? [])], []),
    enable_templating: templating,
  };
  for (const field of ['issuing_certificates', 'crl_distribution_points', 'ocsp_servers'] as const) {
    for (const url of aia[field]) {
      if (!templating && !URL.canParse(url)) throw badInput(`invalid URL found in Authority Information Access (AIA) parameter ${field}: ${url}`);
    }
  }
  const chainRefs = pick(b.manual_chain, i.manualChain as string[], []);
  const manualChain = chainRefs.map((ref, index) => {
    const id = index === 0 && ref === 'self' ? i.id : resolveIssuer(issuers, ref).issuer.id;
    if (index === 0 && id !== i.id) throw badInput(`manual_chain: expected first cert in chain to be a self-reference, but was: ${ref}/${id}`);
    return id;
  });
  const hasAia = aia.issuing_certificates.length || aia.crl_distribution_points.length || aia.ocsp_servers.length;
  const next = {
    ...i,
    name,
    usage: usage as Usage[],
    leafNotAfterBehavior: pick(b.leaf_not_after_behavior, i.leafNotAfterBehavior, 'err'),
    revocationSignatureAlgorithm: knownAlgorithm ?? '',
    manualChain,
    aia: hasAia ? aia : undefined,
  };
  await saveIssuer(req, issuers, next);
  const after = (await readIssuers(req.store)).byId.get(i.id)!;
  return { data: issuerData(after) };
}

/** `issuer/:ref` DELETE: the issuer goes (its key stays); a default issuer leaves the mount without one, with a warning. */
async function deleteIssuer(req: SecretsRequest): Promise<SecretsResponse | undefined> {
  const issuers = await readIssuers(req.store);
  const ca = findIssuer(issuers, req.params.ref);
  if (!ca) return undefined;
  const wasDefault = issuers.stored.defaultIssuer === ca.issuer.id;
  await writeIssuers(req.store, {
    ...issuers.stored,
    issuers: issuers.stored.issuers.filter((i) => i.id !== ca.issuer.id),
    defaultIssuer: wasDefault ? '' : issuers.stored.defaultIssuer,
  });
  await req.store.delete(`crls/${ca.issuer.id}`);
  await rebuildCrl(req.store, req.now);
  if (!wasDefault) return undefined;
  return { warnings: [`Deleted issuer ${ca.issuer.id} (via issuer_ref ${req.params.ref}); this was configured as the default issuer. Operations without an explicit issuer will not work until a new default is configured.`] };
}

/**
 * `issuer/:ref/revoke`: the issuer's certificate is revoked (on the CRLs of the mount's issuers
 * whose key signed it) and the issuer loses its `issuing-certificates` usage.
 */
async function revokeIssuer(req: SecretsRequest): Promise<SecretsResponse> {
  const { issuers, ca } = await issuerOf(req);
  if (ca.issuer.revokedAt !== undefined) return { data: issuerData(ca) };
  const key = serialKey(ca.cert.serialNumber);
  const aki = ca.cert.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId?.toLowerCase() ?? '';
  const record: RevokedRecord = {
    certificate: ca.issuer.certificate, expiration: ca.cert.notAfter.getTime(), revokedAt: req.now, authorityKeyId: aki,
  };
  await req.store.put(`revoked/${key}`, record);
  await saveIssuer(req, issuers, { ...ca.issuer, revokedAt: req.now, usage: ca.issuer.usage.filter((u) => u !== 'issuing-certificates') });
  return { data: issuerData((await readIssuers(req.store)).byId.get(ca.issuer.id)!) };
}

/** A key as the public service shows it (`key/:ref`). */
function keyData(entry: { id: string; name: string }, key: ReturnType<typeof parsePrivateKey>): Record<string, unknown> {
  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  return { key_id: entry.id, key_name: entry.name, key_type: keyTypeOf(key), subject_key_id: colonSerial(keyIdentifier(spki).toString('hex')) };
}

async function generateMountKey(req: SecretsRequest<z.infer<typeof KeyGenerateBody>>): Promise<SecretsResponse> {
  const type = exportType(req, false);
  const b = req.body;
  const issuers = await readIssuers(req.store);
  checkName('key_name', b.key_name, issuers.stored.keys);
  const { privateKey } = await generateKey(b.key_type, keyBits('key_bits', b.key_type, b.key_bits));
  const added = addKey(issuers.stored, privateKey, storedKey(privateKey), b.key_name);
  await writeIssuers(req.store, added.stored);
  const data: Record<string, unknown> = { key_id: added.id, key_name: b.key_name, key_type: b.key_type };
  if (type === 'exported') data.private_key = exportPrivateKey(privateKey, b.private_key_format, b.format === 'der' ? 'der' : 'pem');
  return { data };
}

async function importMountKey(req: SecretsRequest<z.infer<typeof KeyImportBody>>): Promise<SecretsResponse> {
  const blocks = pemBlocks(req.body.pem_bundle.replace(/\\n/g, '\n')).filter((k) => k.type.endsWith('PRIVATE KEY'));
  if (blocks.length !== 1) throw badInput(`pem_bundle: needs exactly one private key, found ${blocks.length}`);
  const key = parsePrivateKey('pem_bundle', blocks[0].pem);
  const issuers = await readIssuers(req.store);
  const added = addKey(issuers.stored, key, storedKey(key), req.body.key_name);
  if (added.existed) throw badInput(`pem_bundle: the key is already present in this mount as ${added.id}`);
  await writeIssuers(req.store, added.stored);
  return { data: { key_id: added.id, key_name: req.body.key_name, key_type: keyTypeOf(key) } };
}

const issuersConfigData = (s: StoredIssuers) => ({ default: s.defaultIssuer, default_follows_latest_issuer: s.defaultFollowsLatestIssuer });

async function writeIssuersConfig(req: SecretsRequest<z.infer<typeof IssuersConfigBody>>): Promise<SecretsResponse> {
  const issuers = await readIssuers(req.store);
  const b = req.body;
  const defaultIssuer = b.default === undefined || b.default === '' ? issuers.stored.defaultIssuer : resolveIssuer(issuers, b.default).issuer.id;
  const follows = b.default_follows_latest_issuer ?? issuers.stored.defaultFollowsLatestIssuer;
  const next = { ...issuers.stored, defaultIssuer, defaultFollowsLatestIssuer: follows };
  await writeIssuers(req.store, next);
  return { data: issuersConfigData(next) };
}

/** Issuers and keys by reference; the mount's defaults. */
export const issuerRoutes: EngineRoute[] = [
  {
    pattern: 'issuers',
    readOnly: true,
    list: async (req) => {
      const issuers = await readIssuers(req.store);
      const keyInfo = Object.fromEntries([...issuers.byId.values()].map((ca) => [ca.issuer.id, {
        issuer_name: ca.issuer.name,
        is_default: ca.issuer.id === issuers.stored.defaultIssuer,
        key_id: ca.issuer.keyId,
        serial_number: colonSerial(ca.cert.serialNumber),
      }]));
      return { data: { keys: Object.keys(keyInfo), key_info: keyInfo } };
    },
  },
  {
    pattern: 'issuer/:ref',
    body: IssuerBody,
    readOnly: ['read'],
    read: async (req) => ({ data: issuerData((await issuerOf(req)).ca) }),
    write: (req: SecretsRequest<IssuerBody>) => updateIssuer(req, false),
    patch: (req: SecretsRequest<IssuerBody>) => updateIssuer(req, true),
    delete: deleteIssuer,
  },
  { pattern: 'issuer/:ref/revoke', write: revokeIssuer },
  {
    pattern: 'keys',
    readOnly: true,
    list: async (req) => {
      const issuers = await readIssuers(req.store);
      const keyInfo = Object.fromEntries(issuers.stored.keys.map((k) => [k.id, { key_name: k.name }]));
      return { data: { keys: Object.keys(keyInfo), key_info: keyInfo } };
    },
  },
  {
    pattern: 'key/:ref',
    body: KeyUpdateBody,
    readOnly: ['read'],
    read: async (req) => {
      const found = resolveKey(await readIssuers(req.store), req.params.ref);
      return { data: keyData(found.entry, found.key) };
    },
    write: async (req: SecretsRequest<z.infer<typeof KeyUpdateBody>>) => {
      const issuers = await readIssuers(req.store);
      const found = resolveKey(issuers, req.params.ref);
      const name = checkName('key_name', req.body.key_name, issuers.stored.keys, found.entry.id);
      await writeIssuers(req.store, { ...issuers.stored, keys: issuers.stored.keys.map((k) => (k.id === found.entry.id ? { ...k, name } : k)) });
      const warnings = name ? [] : [`Name successfully deleted, you will now need to reference this key by it's Id: ${found.entry.id}`];
      return { data: { key_id: found.entry.id, key_name: name, key_type: keyTypeOf(found.key) }, warnings };
    },
    delete: async (req) => {
      const issuers = await readIssuers(req.store);
      const id = req.params.ref === DEFAULT_REF ? issuers.stored.defaultKey : req.params.ref;
      const found = issuers.keys.get(id) ?? [...issuers.keys.values()].find((k) => k.entry.name === req.params.ref);
      if (!found) return undefined;
      const user = issuers.stored.issuers.find((i) => i.keyId === found.entry.id);
      if (user) throw badInput(`Failed to Delete Key.  Key in Use by Issuer: ${user.id}`);
      const wasDefault = issuers.stored.defaultKey === found.entry.id;
      await writeIssuers(req.store, { ...issuers.stored, keys: issuers.stored.keys.filter((k) => k.id !== found.entry.id), defaultKey: wasDefault ? '' : issuers.stored.defaultKey });
      if (!wasDefault) return undefined;
      return { warnings: [`Deleted key ${found.entry.id} (via key_ref ${req.params.ref}); this was configured as the default key. Operations without an explicit key will not work until a new default is configured.`] };
    },
  },
  { pattern: 'keys/generate/:type', body: KeyGenerateBody, write: generateMountKey },
  { pattern: 'keys/import', body: KeyImportBody, write: importMountKey },
  {
    pattern: 'config/issuers',
    body: IssuersConfigBody,
    readOnly: ['read'],
    read: async (req) => ({ data: issuersConfigData((await readIssuers(req.store)).stored) }),
    write: writeIssuersConfig,
  },
  { pattern: 'root/replace', body: ReplaceBody, write: writeIssuersConfig },
  {
    pattern: 'config/keys',
    body: KeysConfigBody,
    readOnly: ['read'],
    read: async (req) => ({ data: { default: (await readIssuers(req.store)).stored.defaultKey } }),
    write: async (req: SecretsRequest<z.infer<typeof KeysConfigBody>>) => {
      const issuers = await readIssuers(req.store);
      const defaultKey = req.body.default ? resolveKey(issuers, req.body.default).entry.id : issuers.stored.defaultKey;
      await writeIssuers(req.store, { ...issuers.stored, defaultKey });
      return { data: { default: defaultKey } };
    },
  },
];
