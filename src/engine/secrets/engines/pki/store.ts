import { KeyObject } from 'node:crypto';
import { keyIdentifier } from './extensions';
import { CrlEntry, parsePrivateKey, pem, serialKey, signCrl, SignedCert, x509 } from './x509';
import { MountStore, SealedMemo } from '../../core/store';

/**
 * What the PKI engine keeps in its mount's sealed storage (every value encrypted by the barrier):
 *   ca                the CA: certificate, private key (PKCS#8) and the chain above it
 *   ca-pending        the key of an intermediate CSR until its signed certificate is set
 *   certs/<serial>    issued certificates (not those of `no_store` roles)
 *   revoked/<serial>  revocations
 *   crl               the current CRL (DER) and its number
 *   config/urls, config/crl, roles/<name>
 * Serials are stored in hyphen form (`1a-2b-...`) and shown in colon form.
 */

export interface CaBundle {
  readonly certificate: string;
  readonly privateKey: string;
  /** The certificates above this CA, nearest first (empty for a root). */
  readonly chain: readonly string[];
}

export interface CertRecord {
  readonly certificate: string;
  /** notAfter, epoch ms (tidy reads it without parsing). */
  readonly expiration: number;
}

export interface RevokedRecord extends CertRecord {
  /** Epoch ms. */
  readonly revokedAt: number;
}

export interface UrlsConfig {
  readonly issuing_certificates: string[];
  readonly crl_distribution_points: string[];
  readonly ocsp_servers: string[];
}

export interface CrlConfig {
  /** Seconds until the next update. */
  readonly expiry: number;
  readonly disable: boolean;
}

export const DEFAULT_CRL_CONFIG: CrlConfig = { expiry: 72 * 3600, disable: false };
export const EMPTY_URLS: UrlsConfig = { issuing_certificates: [], crl_distribution_points: [], ocsp_servers: [] };

/** A CA as the issuing code uses it: parsed certificate and key. */
export interface Ca {
  readonly bundle: CaBundle;
  readonly cert: x509.X509Certificate;
  readonly key: KeyObject;
}

// Opened and parsed once per process while unchanged (MountStore.getMemo): issuing reads them every time.
const cas = new SealedMemo<Ca>(32);
const urls = new SealedMemo<UrlsConfig>(32);

export function readCa(store: MountStore): Promise<Ca | undefined> {
  return store.getMemo('ca', cas, (bundle: CaBundle) => ({
    bundle,
    cert: new x509.X509Certificate(bundle.certificate),
    key: parsePrivateKey('ca', bundle.privateKey),
  }));
}

/** The CA's PEM chain: its certificate, then the ones above it. */
export const chainOf = (ca: Ca) => [ca.bundle.certificate, ...ca.bundle.chain];

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

/**
 * Rebuilds and stores the CRL from the revocations (an empty list when CRLs are disabled, as the
 * public service). Runs in the caller's transaction, so a revocation and its CRL commit together.
 */
export async function rebuildCrl(store: MountStore, now: number): Promise<void> {
  const ca = await readCa(store);
  if (!ca) return;
  const config = await readCrlConfig(store);
  const entries: CrlEntry[] = [];
  if (!config.disable) {
    for (const serial of await store.list('revoked/')) {
      const rec = await store.get<RevokedRecord>(`revoked/${serial}`);
      if (rec) entries.push({ serial: serial.replace(/-/g, ''), revokedAt: rec.revokedAt });
    }
  }
  const previous = await store.get<{ number: number }>('crl');
  const number = (previous?.number ?? 0) + 1;
  const crl = await signCrl({
    issuer: ca.cert,
    signer: ca.key,
    number,
    thisUpdate: new Date(now),
    nextUpdate: new Date(now + config.expiry * 1000),
    entries,
  });
  await store.put('crl', { number, der: Buffer.from(crl.rawData).toString('base64'), issuerKeyId: keyIdentifier(Buffer.from(ca.cert.publicKey.rawData)).toString('hex') });
}

export async function readCrlDer(store: MountStore): Promise<Buffer | undefined> {
  const crl = await store.get<{ der: string }>('crl');
  return crl && Buffer.from(crl.der, 'base64');
}

export const crlPem = (der: Buffer) => pem('X509 CRL', der);
