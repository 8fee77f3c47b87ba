import { randomBytes } from 'node:crypto';
import { Signer, sshSignature } from './keys';
import { authorizedKey, SshPublicKey, WireWriter } from './wire';

export const USER_CERT = 1;
export const HOST_CERT = 2;

export interface CertificateSpec {
  readonly publicKey: SshPublicKey;
  readonly certType: typeof USER_CERT | typeof HOST_CERT;
  readonly keyId: string;
  readonly principals: readonly string[];
  /** Epoch seconds. */
  readonly validAfter: number;
  readonly validBefore: number;
  readonly criticalOptions: Readonly<Record<string, string>>;
  readonly extensions: Readonly<Record<string, string>>;
  /** The signature algorithm (`rsa-sha2-256`, `ssh-ed25519`, ...), see signatureAlgorithm. */
  readonly algorithm: string;
}

/** `name, data` pairs sorted by name; a non-empty value is itself a string inside data (PROTOCOL.certkeys). */
function options(map: Readonly<Record<string, string>>): Buffer {
  const w = new WireWriter();
  for (const name of Object.keys(map).sort()) {
    w.string(name);
    w.string(map[name] === '' ? Buffer.alloc(0) : new WireWriter().string(map[name]).toBuffer());
  }
  return w.toBuffer();
}

/**
 * Signs an OpenSSH certificate (PROTOCOL.certkeys, `<type>-cert-v01@openssh.com`): the subject key's
 * own fields are copied from its wire form, so every key type sshpk parses is certified alike.
 * Returns the serial (random, as the public service does) and the authorized_keys line.
 */
export function signCertificate(signer: Signer, spec: CertificateSpec): { serial: bigint; signedKey: string } {
  const certType = `${spec.publicKey.type}-cert-v01@openssh.com`;
  const serial = randomBytes(8).readBigUInt64BE();
  const typeLength = 4 + spec.publicKey.blob.readUInt32BE(0);
  const principals = new WireWriter();
  for (const p of spec.principals) principals.string(p);
  const body = new WireWriter()
    .string(certType)
    .string(randomBytes(32))
    .raw(spec.publicKey.blob.subarray(typeLength))
    .uint64(serial)
    .uint32(spec.certType)
    .string(spec.keyId)
    .string(principals.toBuffer())
    .uint64(BigInt(Math.max(0, spec.validAfter)))
    .uint64(BigInt(spec.validBefore))
    .string(options(spec.criticalOptions))
    .string(options(spec.extensions))
    .string('')
    .string(signer.publicKey.blob)
    .toBuffer();
  const cert = Buffer.concat([body, new WireWriter().string(sshSignature(signer, spec.algorithm, body)).toBuffer()]);
  return { serial, signedKey: authorizedKey(certType, cert) };
}
