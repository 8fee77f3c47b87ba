import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Server as HttpsServer } from 'node:https';
import { TLSSocket, type SecureContextOptions } from 'node:tls';
import type { FastifyRequest } from 'fastify';
import type { ApiName } from './api';

/**
 * TLS on a listener: the files an operator gives (the public services' `tls_cert_file`,
 * `tls_key_file`, `tls_min_version`, `tls_client_ca_file`, and client verification), read and
 * checked before the server starts, and read again on SIGHUP (rotation without a restart).
 */

/** Client certificates: none asked; asked and checked when one is sent; required and checked. */
export type ClientAuth = 'none' | 'verify-if-given' | 'require';
export const CLIENT_AUTH_MODES: readonly ClientAuth[] = ['none', 'verify-if-given', 'require'];
export const MIN_VERSIONS = { tls12: 'TLSv1.2', tls13: 'TLSv1.3' } as const;
export type MinVersion = keyof typeof MIN_VERSIONS;

/** A file of a listener's TLS and the flag that named it, so that every complaint names both. */
export interface TlsFile {
  readonly path: string;
  readonly flag: string;
}

export interface TlsFiles {
  readonly cert: TlsFile;
  readonly key: TlsFile;
  readonly minVersion: MinVersion;
  readonly clientCa?: TlsFile;
  readonly clientAuth: ClientAuth;
}

/** What a listener's TLS server is made with: the secure context's material and the client checks. */
export interface ListenerTls {
  readonly files: TlsFiles;
  readonly context: SecureContextOptions;
}

export type ListenersTls = Partial<Record<ApiName, ListenerTls>>;

/** A TLS file that cannot serve: the message names the flag, the file and the problem. */
export class TlsFileError extends Error {
  constructor(file: TlsFile, problem: string) {
    super(`${file.flag} ${file.path}: ${problem}`);
    this.name = 'TlsFileError';
  }
}

function readText(file: TlsFile): string {
  try {
    return readFileSync(file.path, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new TlsFileError(file, `cannot be read (${e.code ?? e.message})`);
  }
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/** The certificates of a PEM file, in order; none is an error. */
function certificates(file: TlsFile, text: string): X509Certificate[] {
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new TlsFileError(file, 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw new TlsFileError(file, `certificate ${i + 1} cannot be parsed`);
    }
  });
}

/** Refuses a certificate that is not valid at `now` (expired, or not yet valid). */
function checkValidity(file: TlsFile, cert: X509Certificate, now: Date): void {
  const from = new Date(cert.validFrom);
  const to = new Date(cert.validTo);
  if (now < from) throw new TlsFileError(file, `the certificate for "${cert.subject.replace(/\n/g, ', ')}" is not valid before ${from.toISOString()}`);
  if (now > to) throw new TlsFileError(file, `the certificate for "${cert.subject.replace(/\n/g, ', ')}" expired on ${to.toISOString()}`);
}

/**
 * Reads and checks a listener's files: each readable, the certificate file a leaf (then its chain)
 * valid now, the key its leaf's, the client CA bundle holding at least one certificate.
 */
export function loadTls(files: TlsFiles, now = new Date()): ListenerTls {
  const certText = readText(files.cert);
  const chain = certificates(files.cert, certText);
  checkValidity(files.cert, chain[0], now);
  const keyText = readText(files.key);
  let key;
  try {
    key = createPrivateKey(keyText);
  } catch {
    throw new TlsFileError(files.key, 'holds no readable private key (PEM, unencrypted)');
  }
  if (!chain[0].checkPrivateKey(key)) throw new TlsFileError(files.key, `this key does not match the certificate in ${files.cert.path} (${files.cert.flag})`);
  let ca: string | undefined;
  if (files.clientCa) {
    ca = readText(files.clientCa);
    certificates(files.clientCa, ca);
  }
  return {
    files,
    context: { cert: certText, key: keyText, minVersion: MIN_VERSIONS[files.minVersion], ...(ca !== undefined ? { ca } : {}) },
  };
}

/** The options of a listener's https server (Fastify's `https`). */
export function serverOptions(tls: ListenerTls): SecureContextOptions & { requestCert: boolean; rejectUnauthorized: boolean; allowHalfOpen: true } {
  const { clientAuth } = tls.files;
  // Half-open, as node:http's plain server is (with httpAllowHalfOpen below): see prepareTlsServer.
  return { ...tls.context, requestCert: clientAuth !== 'none', rejectUnauthorized: clientAuth === 'require', allowHalfOpen: true };
}

/**
 * What a listener's https server needs beyond Node's options:
 * - A client that ends its side after its request (`curl` does not, a shell's `printf | openssl
 *   s_client` does) still gets the answer: Node's https server otherwise ends the connection on the
 *   client's FIN and drops the answer of any handler that had to wait (measured: half the requests
 *   of a route that waits 5 ms, 4% of status/leader's).
 * - `verify-if-given` accepts a connection without a client certificate (Node cannot say that by
 *   itself) but drops one whose certificate the CA did not sign, before any request is read.
 */
export function prepareTlsServer(server: HttpsServer, tls: ListenerTls): void {
  (server as HttpsServer & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  if (tls.files.clientAuth !== 'verify-if-given') return;
  server.on('secureConnection', (socket: TLSSocket) => {
    if (!socket.authorized && socket.getPeerX509Certificate() !== undefined) socket.destroy();
  });
}

/**
 * Reads a listener's files again and gives its server the new certificate, key and client CA; new
 * connections see them, open ones keep theirs. Throws (a TlsFileError) and changes nothing if a file
 * does not serve.
 */
export function reloadTls(server: HttpsServer, files: TlsFiles): ListenerTls {
  const next = loadTls(files);
  server.setSecureContext(next.context);
  return next;
}

/**
 * The client certificate a listener verified for this request's connection (mTLS), or undefined
 * (plain HTTP, no certificate, or one not verified): what certificate login needs.
 */
export function peerCertificate(req: FastifyRequest): X509Certificate | undefined {
  const socket = req.raw.socket;
  if (!(socket instanceof TLSSocket) || !socket.authorized) return undefined;
  return socket.getPeerX509Certificate();
}
