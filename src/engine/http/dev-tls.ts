import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { basicConstraints, extendedKeyUsage, keyUsage, subjectAltName } from '../secrets/engines/pki/extensions';
import { EXT_KEY_USAGES, keyUsageFlags } from '../secrets/engines/pki/usages';
import { generateKey, newSerial, signCertificate, storedKey, x509 } from '../secrets/engines/pki/x509';

/**
 * `hangar server --dev-tls` (as `vault server -dev-tls`): a CA and a certificate for
 * localhost/127.0.0.1/::1 that it signed, made with the PKI engine's own key generation, extensions
 * and signing, and written to the data directory. Clients trust `ca.pem`; the CA's key is thrown
 * away once the certificate is signed (a dev CA signs nothing else). A data directory kept between
 * starts (--data) keeps its files while they are good for another day, so that clients trust the CA once.
 */
export const DEV_TLS_FILES = { ca: 'ca.pem', cert: 'dev-tls-cert.pem', key: 'dev-tls-key.pem' } as const;

/** How long the dev certificates last: a dev server is not expected to run for a year. */
const DEV_TLS_DAYS = 365;

export interface DevTls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** The paths of the dev TLS files in a data directory (what worker threads read after the main thread wrote them). */
export function devTlsPaths(dataDir: string): DevTls {
  return { ca: join(dataDir, DEV_TLS_FILES.ca), cert: join(dataDir, DEV_TLS_FILES.cert), key: join(dataDir, DEV_TLS_FILES.key) };
}

/** How long the files of an earlier start must still be valid to be kept. */
const KEEP_IF_VALID_FOR_MS = 86_400_000;

/**
 * The dev CA and server certificate in `dataDir` (ca.pem and the certificate 0644, the key 0600):
 * those of an earlier start while they are whole and valid for another day, else new ones.
 */
export async function makeDevTls(dataDir: string, now = new Date()): Promise<DevTls> {
  const paths = devTlsPaths(dataDir);
  if (stillGood(paths, now)) return paths;
  const notBefore = new Date(now.getTime() - 30_000);
  const notAfter = new Date(now.getTime() + DEV_TLS_DAYS * 86_400_000);
  const spki = (key: Parameters<typeof createPublicKey>[0]) => createPublicKey(key).export({ type: 'spki', format: 'der' });
  const caKey = await generateKey('ec', 256);
  const ca = await signCertificate({
    serial: newSerial(),
    subject: [{ CN: ['Hangar dev CA'] }],
    notBefore,
    notAfter,
    spki: spki(caKey.privateKey),
    extensions: [basicConstraints(true, undefined, true), keyUsage(keyUsageFlags(['CertSign', 'CRLSign']), true)],
    signer: caKey.privateKey,
  });
  const serverKey = await generateKey('ec', 256);
  const leaf = await signCertificate({
    serial: newSerial(),
    subject: [{ CN: ['localhost'] }],
    issuer: new x509.X509Certificate(ca.pem),
    notBefore,
    notAfter,
    spki: spki(serverKey.privateKey),
    extensions: [
      basicConstraints(false, undefined, true),
      keyUsage(keyUsageFlags(['DigitalSignature', 'KeyEncipherment', 'KeyAgreement']), true),
      extendedKeyUsage([EXT_KEY_USAGES.ServerAuth]),
      subjectAltName([
        { type: 'dns', value: 'localhost' },
        { type: 'ip', value: '127.0.0.1' },
        { type: 'ip', value: '::1' },
      ]),
    ],
    signer: caKey.privateKey,
  });
  write(paths.ca, `${ca.pem}\n`, 0o644);
  // The chain after the leaf, as --tls-cert-file takes it.
  write(paths.cert, `${leaf.pem}\n${ca.pem}\n`, 0o644);
  write(paths.key, storedKey(serverKey.privateKey), 0o600);
  return paths;
}

/** Whether the files hold a certificate that ca.pem signed, valid from now for another day, and its key. */
function stillGood(paths: DevTls, now: Date): boolean {
  try {
    const cert = new X509Certificate(readFileSync(paths.cert));
    const ca = new X509Certificate(readFileSync(paths.ca));
    const key = createPrivateKey(readFileSync(paths.key));
    return cert.checkPrivateKey(key) && cert.verify(ca.publicKey) && cert.checkIssued(ca)
      && new Date(cert.validFrom) <= now && new Date(cert.validTo).getTime() > now.getTime() + KEEP_IF_VALID_FOR_MS;
  } catch {
    return false;
  }
}

function write(path: string, text: string, mode: number): void {
  writeFileSync(path, text, { mode });
  // The mode of writeFileSync applies to a new file only (and through the umask).
  chmodSync(path, mode);
}
