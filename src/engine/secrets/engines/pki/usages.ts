import { x509 } from './x509';
import { badInput } from '../../core/request';

const F = x509.KeyUsageFlags;

/** Key usage names of the public service (Go's x509.KeyUsage without the prefix), matched case-insensitively. */
export const KEY_USAGES: Readonly<Record<string, number>> = {
  DigitalSignature: F.digitalSignature,
  ContentCommitment: F.nonRepudiation,
  KeyEncipherment: F.keyEncipherment,
  DataEncipherment: F.dataEncipherment,
  KeyAgreement: F.keyAgreement,
  CertSign: F.keyCertSign,
  CRLSign: F.cRLSign,
  EncipherOnly: F.encipherOnly,
  DecipherOnly: F.decipherOnly,
};

/** Extended key usage names and their OIDs. */
export const EXT_KEY_USAGES: Readonly<Record<string, string>> = {
  Any: '2.5.29.37.0',
  ServerAuth: '1.3.6.1.5.5.7.3.1',
  ClientAuth: '1.3.6.1.5.5.7.3.2',
  CodeSigning: '1.3.6.1.5.5.7.3.3',
  EmailProtection: '1.3.6.1.5.5.7.3.4',
  IPSECEndSystem: '1.3.6.1.5.5.7.3.5',
  IPSECTunnel: '1.3.6.1.5.5.7.3.6',
  IPSECUser: '1.3.6.1.5.5.7.3.7',
  TimeStamping: '1.3.6.1.5.5.7.3.8',
  OCSPSigning: '1.3.6.1.5.5.7.3.9',
  MicrosoftServerGatedCrypto: '1.3.6.1.4.1.311.10.3.3',
  NetscapeServerGatedCrypto: '2.16.840.1.113730.4.1',
  MicrosoftCommercialCodeSigning: '1.3.6.1.4.1.311.2.1.22',
  MicrosoftKernelCodeSigning: '1.3.6.1.4.1.311.61.1.1',
};

/** The canonical name of a usage given in any case (an `x509.KeyUsage` prefix is accepted too). */
export function usageName(field: string, given: string, known: Readonly<Record<string, unknown>>): string {
  const want = given.replace(/^(x509\.)?(KeyUsage|ExtKeyUsage)/i, '').toLowerCase();
  const found = Object.keys(known).find((k) => k.toLowerCase() === want);
  if (!found) throw badInput(`${field}: unknown usage "${given}"; use one of ${Object.keys(known).join(', ')}`);
  return found;
}

export function checkOid(field: string, oid: string): void {
  if (!/^[0-2](\.(0|[1-9][0-9]*))+$/.test(oid)) throw badInput(`${field}: "${oid}" is not an OID (dotted numbers such as 1.3.6.1.4.1.311)`);
}

/** The key usage bit string of a list of names. */
export const keyUsageFlags = (names: readonly string[]) => [...new Set(names)].reduce((f, n) => f + KEY_USAGES[n], 0);
