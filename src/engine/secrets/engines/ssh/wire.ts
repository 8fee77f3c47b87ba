import { createHash } from 'node:crypto';
import * as sshpk from 'sshpk';

/**
 * The SSH wire encoding (RFC 4251 section 5) that OpenSSH certificates are made of, and the parsing
 * of the public keys a client sends. sshpk parses keys of every format; the certificate itself is
 * written here (certificate.ts), because sshpk cannot write critical options or RSA SHA-2 signatures.
 */
export class WireWriter {
  private readonly parts: Buffer[] = [];

  uint32(n: number): this {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    this.parts.push(b);
    return this;
  }

  uint64(n: bigint): this {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(n);
    this.parts.push(b);
    return this;
  }

  string(s: string | Buffer): this {
    const data = typeof s === 'string' ? Buffer.from(s, 'utf8') : s;
    this.uint32(data.length);
    this.parts.push(data);
    return this;
  }

  /** An unsigned big-endian integer as an mpint: minimal, with a zero byte when the top bit is set. */
  mpint(unsigned: Buffer): this {
    let i = 0;
    while (i < unsigned.length && unsigned[i] === 0) i++;
    const trimmed = unsigned.subarray(i);
    return this.string(trimmed.length && trimmed[0] >= 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
  }

  raw(b: Buffer): this {
    this.parts.push(b);
    return this;
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** A public key as the engine checks and certifies it. */
export interface SshPublicKey {
  /** Key type identifier: `ssh-rsa`, `ecdsa-sha2-nistp256`, `ssh-ed25519`, `ssh-dss`. */
  readonly type: string;
  /** Family as the role's key length map names it: `rsa`, `ecdsa`, `ed25519`, `dsa`. */
  readonly family: 'rsa' | 'ecdsa' | 'ed25519' | 'dsa';
  readonly bits: number;
  /** The public key in wire format (RFC 4253), as certificates and fingerprints use it. */
  readonly blob: Buffer;
}

const FAMILY: Record<string, SshPublicKey['family']> = { rsa: 'rsa', ecdsa: 'ecdsa', ed25519: 'ed25519', dsa: 'dsa' };

/** Parses an authorized_keys line (`ssh-ed25519 AAAA... comment`); undefined when it is not one. */
export function parsePublicKey(text: string): SshPublicKey | undefined {
  const line = text.trim();
  if (line === '' || line.includes('\n') || line.length > 16_384) return undefined;
  let key: sshpk.Key;
  try {
    key = sshpk.parseKey(line, 'ssh');
  } catch {
    return undefined;
  }
  const family = FAMILY[key.type];
  if (!family || /-cert-v01@openssh\.com/.test(line.split(/\s+/)[0])) return undefined;
  const blob = key.toBuffer('rfc4253', {});
  return { type: blob.subarray(4, 4 + blob.readUInt32BE(0)).toString(), family, bits: key.size, blob };
}

/** SHA-256 of the key's wire format in hex, the `{{public_key_hash}}` of key ids. */
export const publicKeyHash = (key: SshPublicKey): string => createHash('sha256').update(key.blob).digest('hex');

/** The one-line text form, `type base64` plus a newline, as Vault stores and returns keys. */
export const authorizedKey = (type: string, blob: Buffer): string => `${type} ${blob.toString('base64')}\n`;
