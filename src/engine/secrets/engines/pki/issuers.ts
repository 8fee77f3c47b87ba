import { createHash, createPublicKey, KeyObject, randomUUID } from 'node:crypto';
import { keyIdentifier } from './extensions';
import { DEFAULT_REF } from './refs';
import { certPem, keyInfo, keyMatches, parsePrivateKey, x509 } from './x509';
import { badInput } from '../../core/request';
import { MountStore, SealedMemo } from '../../core/store';

/**
 * Several issuers and keys per mount, as the public service since 1.11. One sealed entry
 * (`issuers`) holds them all with the mount's defaults: issuing reads it once per request (as it
 * read the single CA before), a mount has a handful of issuers, and a change commits as one write.
 *
 * Storage layout 2 (this one) replaced layout 1 (`ca`, the CA's certificate, key and chain, and
 * `ca-pending`, the key of an intermediate CSR). A layout-1 mount is read as one issuer and its key
 * (ids derived from the certificate and the key, both named `current-<notBefore seconds>`, the
 * public service's migration names) until its first change of issuers or keys, which writes layout
 * 2 and removes the layout-1 entries: the ids and names a client saw stay the same. (Sealed values
 * cannot be rewritten by the SQL migrations, which never see the barrier's key.)
 */
export const LAYOUT = 2;

export type LeafBehavior = 'err' | 'truncate' | 'permit';

/** Issuer usages, in the order the public service lists them (sorted names). */
export const USAGES = ['crl-signing', 'issuing-certificates', 'ocsp-signing', 'read-only'] as const;
export type Usage = (typeof USAGES)[number];

export interface AiaUrls {
  readonly issuing_certificates: readonly string[];
  readonly crl_distribution_points: readonly string[];
  readonly ocsp_servers: readonly string[];
  readonly enable_templating: boolean;
}

export interface IssuerEntry {
  readonly id: string;
  readonly name: string;
  /** '' for an issuer imported without its key. */
  readonly keyId: string;
  readonly certificate: string;
  /** Certificates above it given when it was imported (the chain is otherwise built from the mount's issuers). */
  readonly importedChain: readonly string[];
  /** Issuer ids the chain is made of when set (the first is the issuer itself). */
  readonly manualChain: readonly string[];
  readonly leafNotAfterBehavior: LeafBehavior;
  readonly usage: readonly Usage[];
  readonly revocationSignatureAlgorithm: string;
  /** Its own AIA URLs (instead of config/urls) when set. */
  readonly aia?: AiaUrls;
  readonly revokedAt?: number;
  readonly createdAt: number;
}

export interface KeyEntry {
  readonly id: string;
  readonly name: string;
  /** PKCS#8 PEM. */
  readonly privateKey: string;
}

export interface StoredIssuers {
  readonly layout: number;
  readonly issuers: readonly IssuerEntry[];
  readonly keys: readonly KeyEntry[];
  readonly defaultIssuer: string;
  readonly defaultKey: string;
  readonly defaultFollowsLatestIssuer: boolean;
}

/** An issuer as issuing uses it: its entry, parsed certificate, key (when the mount has it) and chain. */
export interface Ca {
  readonly issuer: IssuerEntry;
  readonly cert: x509.X509Certificate;
  readonly key?: KeyObject;
  /** Its certificate then the ones above it, PEM. */
  readonly chain: readonly string[];
}

/** A mount's issuers and keys, parsed. */
export interface Issuers {
  readonly stored: StoredIssuers;
  readonly byId: ReadonlyMap<string, Ca>;
  readonly keys: ReadonlyMap<string, { readonly entry: KeyEntry; readonly key: KeyObject }>;
  /** Read from layout 1, not yet written as layout 2. */
  readonly legacy: boolean;
}

export const EMPTY: StoredIssuers = { layout: LAYOUT, issuers: [], keys: [], defaultIssuer: '', defaultKey: '', defaultFollowsLatestIssuer: false };
export const ALL_USAGES: readonly Usage[] = USAGES;

const memo = new SealedMemo<Issuers>(64);
const legacyMemo = new SealedMemo<Issuers>(64);

/** The mount's issuers and keys (layout 2, else layout 1 read as such), parsed once while unchanged. */
export async function readIssuers(store: MountStore): Promise<Issuers> {
  const current = await store.getMemo<StoredIssuers, Issuers>('issuers', memo, (s) => parse(s, false));
  if (current) return current;
  const legacy = await store.getMemo<LegacyCa, Issuers>('ca', legacyMemo, (ca) => parse(fromLegacy(ca), true));
  const pending = await store.get<{ privateKey: string }>('ca-pending');
  if (!pending) return legacy ?? EMPTY_ISSUERS;
  // The key of an intermediate CSR made before issuers: a key without an issuer.
  const base = legacy?.stored ?? EMPTY;
  const id = idOf('key', pending.privateKey);
  if (base.keys.some((k) => k.id === id)) return legacy!;
  return parse({ ...base, keys: [...base.keys, { id, name: '', privateKey: pending.privateKey }] }, true);
}

const EMPTY_ISSUERS: Issuers = { stored: EMPTY, byId: new Map(), keys: new Map(), legacy: false };

/** Links issuers without a key to the mount's key of their public key, when one came (the public service on import). */
export function linkKeys(stored: StoredIssuers): StoredIssuers {
  if (!stored.issuers.some((i) => !i.keyId) || !stored.keys.length) return stored;
  const keys = stored.keys.map((k) => ({ id: k.id, key: parsePrivateKey('key', k.privateKey) }));
  const issuers = stored.issuers.map((i) => {
    if (i.keyId) return i;
    const cert = new x509.X509Certificate(i.certificate);
    const found = keys.find((k) => keyMatches(cert, k.key));
    return found ? { ...i, keyId: found.id } : i;
  });
  return { ...stored, issuers };
}

/** Writes the issuers and keys (layout 2); the layout-1 entries go, as does their CRL (rebuilt by the caller). */
export async function writeIssuers(store: MountStore, next: StoredIssuers): Promise<void> {
  await store.put('issuers', { ...linkKeys(next), layout: LAYOUT });
  for (const old of ['ca', 'ca-pending']) await store.delete(old);
}

interface LegacyCa {
  readonly certificate: string;
  readonly privateKey: string;
  readonly chain: readonly string[];
}

/** A stable id (UUID form) of a layout-1 certificate or key. */
function idOf(kind: string, text: string): string {
  const h = createHash('sha256').update(kind).update(text.replace(/\s+/g, '')).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

function fromLegacy(ca: LegacyCa): StoredIssuers {
  const cert = new x509.X509Certificate(ca.certificate);
  const name = `current-${Math.floor(cert.notBefore.getTime() / 1000)}`;
  const keyId = idOf('key', ca.privateKey);
  return {
    ...EMPTY,
    issuers: [{ ...newIssuerFields(), id: idOf('issuer', ca.certificate), name, keyId, certificate: ca.certificate, importedChain: ca.chain, createdAt: 0 }],
    keys: [{ id: keyId, name, privateKey: ca.privateKey }],
    defaultIssuer: idOf('issuer', ca.certificate),
    defaultKey: keyId,
  };
}

/** The fields of a new issuer besides its identity and certificate: the public service's defaults. */
export function newIssuerFields(): Omit<IssuerEntry, 'id' | 'name' | 'keyId' | 'certificate' | 'importedChain' | 'createdAt'> {
  return { manualChain: [], leafNotAfterBehavior: 'err', usage: ALL_USAGES, revocationSignatureAlgorithm: '' };
}

const sameName = (a: x509.Name, b: x509.Name) => Buffer.from(a.toArrayBuffer()).equals(Buffer.from(b.toArrayBuffer()));

/** The key identifier of a certificate's public key (what its children's authority key identifier holds). */
export const subjectKeyId = (cert: x509.X509Certificate) => keyIdentifier(Buffer.from(cert.publicKey.rawData)).toString('hex');

/** The authority key identifier of a certificate (hex), or '' without one. */
export function authorityKeyId(cert: x509.X509Certificate): string {
  const ext = cert.getExtension(x509.AuthorityKeyIdentifierExtension);
  return ext?.keyId?.toLowerCase() ?? '';
}

function parse(stored: StoredIssuers, legacy: boolean): Issuers {
  const keys = new Map(stored.keys.map((entry) => [entry.id, { entry, key: parsePrivateKey(`key ${entry.id}`, entry.privateKey) }]));
  const certs = new Map(stored.issuers.map((i) => [i.id, new x509.X509Certificate(i.certificate)]));
  const byId = new Map<string, Ca>();
  for (const issuer of stored.issuers) {
    const cert = certs.get(issuer.id)!;
    byId.set(issuer.id, { issuer, cert, key: keys.get(issuer.keyId)?.key, chain: chainOf(issuer, cert, stored, certs) });
  }
  return { stored, byId, keys, legacy };
}

/**
 * An issuer's chain: the manual chain when set; else its certificate, then its parents among the
 * mount's issuers (subject and key identifier matching), else the chain given when it was imported.
 */
function chainOf(issuer: IssuerEntry, cert: x509.X509Certificate, stored: StoredIssuers, certs: ReadonlyMap<string, x509.X509Certificate>): string[] {
  if (issuer.manualChain.length) {
    return issuer.manualChain.map((id) => stored.issuers.find((i) => i.id === id)?.certificate).filter((c): c is string => !!c);
  }
  const out = [issuer.certificate];
  const seen = new Set([issuer.id]);
  let at = cert;
  for (;;) {
    if (sameName(at.subjectName, at.issuerName) && authorityKeyId(at) === subjectKeyId(at)) return out;
    const want = authorityKeyId(at);
    const parent = stored.issuers.find((i) => {
      const c = certs.get(i.id)!;
      return !seen.has(i.id) && sameName(c.subjectName, at.issuerName) && (!want || subjectKeyId(c) === want);
    });
    if (!parent) break;
    seen.add(parent.id);
    out.push(parent.certificate);
    at = certs.get(parent.id)!;
  }
  return out.length > 1 ? out : [issuer.certificate, ...issuer.importedChain];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An issuer by reference: `default`, an id or a name; a 400 naming it when none matches. */
export function resolveIssuer(issuers: Issuers, ref: string): Ca {
  const found = findIssuer(issuers, ref);
  if (!found) {
    if (ref === DEFAULT_REF) throw badInput('no default issuer currently configured');
    throw badInput(`unable to find PKI issuer for reference: ${ref}`);
  }
  return found;
}

export function findIssuer(issuers: Issuers, ref: string): Ca | undefined {
  const id = ref === DEFAULT_REF ? issuers.stored.defaultIssuer : ref;
  return issuers.byId.get(id) ?? (UUID.test(ref) ? undefined : [...issuers.byId.values()].find((c) => c.issuer.name === ref));
}

/** A key by reference: `default`, an id or a name. */
export function resolveKey(issuers: Issuers, ref: string): { entry: KeyEntry; key: KeyObject } {
  const id = ref === DEFAULT_REF ? issuers.stored.defaultKey : ref;
  const found = issuers.keys.get(id) ?? [...issuers.keys.values()].find((k) => k.entry.name === ref);
  if (!found) throw badInput(ref === DEFAULT_REF ? 'no default key currently configured' : `unable to find PKI key for reference: ${ref}`);
  return found;
}

/** An issuer that may sign: it has its key and the `issuing-certificates` usage. */
export function signingCa(ca: Ca): Ca & { key: KeyObject } {
  if (!ca.key) throw badInput(`issuer ${ca.issuer.name || ca.issuer.id} has no key in this mount; unable to use this issuer for signing`);
  if (!ca.issuer.usage.includes('issuing-certificates')) {
    throw badInput(`requested usage issuing-certificates for issuer [id:${ca.issuer.id}${ca.issuer.name ? ` / name:${ca.issuer.name}` : ''}] but only had usage ${ca.issuer.usage.join(',')}`);
  }
  return ca as Ca & { key: KeyObject };
}

const NAME = /^[a-zA-Z0-9_-]*$/;

/** A new issuer or key name: letters, digits, `_`, `-`; not `default`; unique among its kind (except `self`). */
export function checkName(field: string, name: string, taken: readonly { id: string; name: string }[], self?: string): string {
  if (!NAME.test(name) || name.length > 128) throw badInput(`${field}: "${name}" is outside of valid character limits (letters, digits, "_", "-")`);
  if (name === DEFAULT_REF) throw badInput(`${field}: reserved keyword 'default' can not be used as ${field.replace('_name', '')} name`);
  if (name && taken.some((t) => t.name === name && t.id !== self)) throw badInput(`${field}: ${field.startsWith('issuer') ? 'issuer' : 'key'} name already in use`);
  return name;
}

/** Adds a key (or finds the mount's key with the same public key). */
export function addKey(
  stored: StoredIssuers,
  privateKey: KeyObject,
  pem: string,
  name: string,
): { stored: StoredIssuers; id: string; existed: boolean } {
  const spki = (k: KeyObject) => createPublicKey(k).export({ type: 'spki', format: 'der' }).toString('base64');
  const mine = spki(privateKey);
  const same = stored.keys.find((k) => spki(parsePrivateKey('key', k.privateKey)) === mine);
  if (same) return { stored, id: same.id, existed: true };
  checkName('key_name', name, stored.keys);
  const id = randomUUID();
  const keys = [...stored.keys, { id, name, privateKey: pem }];
  return { stored: { ...stored, keys, defaultKey: stored.defaultKey || id }, id, existed: false };
}

/**
 * Adds an issuer for a certificate (or finds the mount's issuer with the same certificate), linked
 * to the mount's key of its public key when there is one. It becomes the default when there is none
 * or when `default_follows_latest_issuer`.
 */
export function addIssuer(
  issuers: Issuers,
  stored: StoredIssuers,
  cert: x509.X509Certificate,
  chain: readonly string[],
  name: string,
  now: number,
): { stored: StoredIssuers; id: string; existed: boolean; keyId: string } {
  const pem = certPem(cert);
  const same = stored.issuers.find((i) => i.certificate.replace(/\s+/g, '') === pem.replace(/\s+/g, ''));
  if (same) return { stored, id: same.id, existed: true, keyId: same.keyId };
  checkName('issuer_name', name, stored.issuers);
  const key = stored.keys.find((k) => keyMatches(cert, issuers.keys.get(k.id)?.key ?? parsePrivateKey('key', k.privateKey)));
  const id = randomUUID();
  const entry: IssuerEntry = { ...newIssuerFields(), id, name, keyId: key?.id ?? '', certificate: pem, importedChain: chain, createdAt: now };
  const becomesDefault = !stored.defaultIssuer || stored.defaultFollowsLatestIssuer;
  const next = { ...stored, issuers: [...stored.issuers, entry], defaultIssuer: becomesDefault ? id : stored.defaultIssuer };
  return { stored: next, id, existed: false, keyId: entry.keyId };
}

/** The key's type as the public service shows it (`rsa`, `ec`, `ed25519`). */
export const keyTypeOf = (key: KeyObject) => keyInfo(key).type;
