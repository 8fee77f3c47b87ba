import { authorityKeyId, Ca, readIssuers, subjectKeyId } from './issuers';
import { CrlEntry, pem, serialKey, signCrl, SignedCert, x509 } from './x509';
import { MountStore, SealedMemo } from '../../core/store';

/**
 * What the PKI engine keeps in its mount's sealed storage (every value encrypted by the barrier):
 *   issuers           the issuers and keys with the mount's defaults (see ./issuers.ts; layout 1's
 *                     `ca` and `ca-pending` are read until the first change)
 *   certs/<serial>    issued certificates (not those of `no_store` roles)
 *   revoked/<serial>  revocations
 *   crls/<issuer id>  each issuer's current CRL (DER) and its number (layout 1: `crl`)
 *   config/urls, config/crl, config/auto-tidy, tidy-status, roles/<name>
 * Serials are stored in hyphen form (`1a-2b-...`) and shown in colon form.
 */

export interface CertRecord {
  readonly certificate: string;
  /** notAfter, epoch ms (tidy reads it without parsing). */
  readonly expiration: number;
}

export interface RevokedRecord extends CertRecord {
  /** Epoch ms. */
  readonly revokedAt: number;
  /** The certificate's authority key identifier (hex): which issuers' CRLs list it (absent in older records). */
  readonly authorityKeyId?: string;
}

export interface UrlsConfig {
  readonly issuing_certificates: string[];
  readonly crl_distribution_points: string[];
  readonly ocsp_servers: string[];
  /** `{{issuer_id}}`, `{{cluster_path}}`, `{{cluster_aia_path}}` replaced when issuing. */
  readonly enable_templating: boolean;
}

export interface CrlConfig {
  /** Seconds until the next update. */
  readonly expiry: number;
  readonly disable: boolean;
}

export const DEFAULT_CRL_CONFIG: CrlConfig = { expiry: 72 * 3600, disable: false };
export const EMPTY_URLS: UrlsConfig = { issuing_certificates: [], crl_distribution_points: [], ocsp_servers: [], enable_templating: false };

// Opened and parsed once per process while unchanged (MountStore.getMemo): issuing reads them every time.
const urls = new SealedMemo<UrlsConfig>(32);

export async function putCert(store: MountStore, cert: SignedCert): Promise<void> {
  const record: CertRecord = { certificate: cert.pem, expiration: cert.notAfter.getTime() };
  await store.put(`certs/${serialKey(cert.serialNumber)}`, record);
}

export async function readUrls(store: MountStore): Promise<UrlsConfig> {
  return (await store.getMemo('config/urls', urls, (stored: UrlsConfig) => ({ ...EMPTY_URLS, ...stored }))) ?? EMPTY_URLS;
}

export async function readCrlConfig(store: MountStore): Promise<CrlConfig> {
  return { ...DEFAULT_CRL_CONFIG, ...(await store.get<CrlConfig>('config/crl')) };
}

/** The authority key identifier of a revoked certificate (parsed for records written before it was kept). */
export function revokedAuthority(rec: RevokedRecord): string {
  return rec.authorityKeyId ?? authorityKeyId(new x509.X509Certificate(rec.certificate));
}

/**
 * Rebuilds and stores the CRL of every issuer that has its key and the `crl-signing` usage: the
 * revocations of certificates signed by its key (issuers sharing a key list the same ones), an empty
 * list when CRLs are disabled, as the public service. Runs in the caller's transaction, so a
 * revocation and its CRLs commit together.
 */
export async function rebuildCrl(store: MountStore, now: number): Promise<void> {
  const issuers = await readIssuers(store);
  const config = await readCrlConfig(store);
  const revoked: Array<CrlEntry & { authority: string }> = [];
  if (!config.disable) {
    for (const serial of await store.list('revoked/')) {
      const rec = await store.get<RevokedRecord>(`revoked/${serial}`);
      if (rec) revoked.push({ serial: serial.replace(/-/g, ''), revokedAt: rec.revokedAt, authority: revokedAuthority(rec) });
    }
  }
  const legacy = await store.get<{ number: number }>('crl');
  for (const ca of issuers.byId.values()) {
    if (!ca.key || !ca.issuer.usage.includes('crl-signing')) continue;
    const own = subjectKeyId(ca.cert);
    const previous = (await store.get<{ number: number }>(`crls/${ca.issuer.id}`)) ?? (ca.issuer.id === issuers.stored.defaultIssuer ? legacy : undefined);
    const number = (previous?.number ?? 0) + 1;
    const crl = await signCrl({
      issuer: ca.cert,
      signer: ca.key,
      number,
      thisUpdate: new Date(now),
      nextUpdate: new Date(now + config.expiry * 1000),
      // A revoked self-signed issuer is not listed on its own CRL.
      entries: revoked.filter((r) => r.authority === own && r.serial !== serialKey(ca.cert.serialNumber).replace(/-/g, '')),
    });
    await store.put(`crls/${ca.issuer.id}`, { number, der: Buffer.from(crl.rawData).toString('base64') });
  }
  if (legacy) await store.delete('crl');
}

/** The CRL (DER) of an issuer (the default when none is named). */
export async function readCrlDer(store: MountStore, issuerId?: string): Promise<Buffer | undefined> {
  const id = issuerId ?? (await readIssuers(store)).stored.defaultIssuer;
  const crl = (id ? await store.get<{ der: string }>(`crls/${id}`) : undefined) ?? (issuerId ? undefined : await store.get<{ der: string }>('crl'));
  return crl && Buffer.from(crl.der, 'base64');
}

export const crlPem = (der: Buffer) => pem('X509 CRL', der);

/** The default issuer, or undefined when the mount has none. */
export async function readCa(store: MountStore): Promise<Ca | undefined> {
  const issuers = await readIssuers(store);
  return issuers.byId.get(issuers.stored.defaultIssuer);
}
