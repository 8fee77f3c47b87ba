import { readIssuers, resolveIssuer } from './issuers';
import { CertRecord, crlPem, readCa, readCrlDer, rebuildCrl, RevokedRecord } from './store';
import { pemBlocks, storageSerial } from './x509';
import { rfc3339 } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { EngineRoute, SecretsRequest, SecretsResponse } from '../../core/types';

/** A raw (non-JSON) answer, 204 when there is nothing yet (no CA, no CRL), as the public service. */
function raw(contentType: string, body: string | Buffer | undefined): SecretsResponse {
  if (!body || body.length === 0) return { status: 204, raw: { contentType, body: '' } };
  return { raw: { contentType, body } };
}

async function caPem(req: SecretsRequest): Promise<string | undefined> {
  return (await readCa(req.store))?.issuer.certificate;
}

async function chainPem(req: SecretsRequest): Promise<string | undefined> {
  const ca = await readCa(req.store);
  return ca?.chain.join('\n');
}

async function crlText(req: SecretsRequest): Promise<string | undefined> {
  const der = await readCrlDer(req.store);
  return der && crlPem(der);
}

/** A stored certificate by serial (colon or hyphen form) and its revocation, or a 404. */
async function certBySerial(req: SecretsRequest): Promise<{ record: CertRecord; revoked?: RevokedRecord }> {
  const key = storageSerial(req.params.serial);
  if (!key) throw badInput(`serial: "${req.params.serial}" is not a serial number (hex bytes separated by colons or hyphens)`);
  const revoked = await req.store.get<RevokedRecord>(`revoked/${key}`);
  const record = revoked ?? (await req.store.get<CertRecord>(`certs/${key}`));
  if (!record) throw missing();
  return { record, revoked };
}

/** `cert/:serial`, with the special serials `ca`, `ca_chain` and `crl`. */
async function readCert(req: SecretsRequest): Promise<SecretsResponse> {
  const serial = req.params.serial;
  const special: Record<string, (r: SecretsRequest) => Promise<string | undefined>> = { ca: caPem, ca_chain: chainPem, crl: crlText };
  if (Object.prototype.hasOwnProperty.call(special, serial)) {
    const certificate = await special[serial](req);
    if (!certificate) throw missing();
    return { data: { certificate, revocation_time: 0, revocation_time_rfc3339: '', ...(serial === 'ca_chain' ? { ca_chain: certificate } : {}) } };
  }
  const { record, revoked } = await certBySerial(req);
  return {
    data: {
      certificate: record.certificate,
      revocation_time: revoked ? Math.floor(revoked.revokedAt / 1000) : 0,
      revocation_time_rfc3339: revoked ? rfc3339(revoked.revokedAt) : '',
    },
  };
}

/** An issuer by the path's reference (`issuer/:ref/...`). */
const issuerOf = async (req: SecretsRequest) => resolveIssuer(await readIssuers(req.store), req.params.ref);

async function issuerCrl(req: SecretsRequest): Promise<Buffer | undefined> {
  return readCrlDer(req.store, (await issuerOf(req)).issuer.id);
}

const listSerials = async (req: SecretsRequest, dir: string) => ({ data: { keys: (await req.store.list(dir)).map((k) => k.replace(/-/g, ':')) } });

/** The unauthenticated fetch paths (CA, chain, CRL, certificates by serial) and the certificate lists. */
export const fetchRoutes: EngineRoute[] = [
  { pattern: 'ca', unauthenticated: true, readOnly: true, read: async (req) => raw('application/pkix-cert', pemBlocks((await caPem(req)) ?? '')[0]?.der) },
  { pattern: 'ca/pem', unauthenticated: true, readOnly: true, read: async (req) => raw('application/pem-certificate-chain', await caPem(req)) },
  { pattern: 'ca_chain', unauthenticated: true, readOnly: true, read: async (req) => raw('application/pkix-cert', await chainPem(req)) },
  { pattern: 'crl', unauthenticated: true, readOnly: true, read: async (req) => raw('application/pkix-crl', await readCrlDer(req.store)) },
  { pattern: 'crl/pem', unauthenticated: true, readOnly: true, read: async (req) => raw('application/x-pem-file', await crlText(req)) },
  { pattern: 'cert/:serial', unauthenticated: true, readOnly: true, read: readCert },
  {
    pattern: 'cert/:serial/raw',
    unauthenticated: true,
    readOnly: true,
    read: async (req) => raw('application/pkix-cert', pemBlocks((await certBySerial(req)).record.certificate)[0].der),
  },
  {
    pattern: 'cert/:serial/raw/pem',
    unauthenticated: true,
    readOnly: true,
    read: async (req) => raw('application/pem-certificate-chain', (await certBySerial(req)).record.certificate),
  },
  {
    pattern: 'issuer/:ref/json',
    unauthenticated: true,
    readOnly: true,
    read: async (req) => {
      const ca = await issuerOf(req);
      return { data: { certificate: ca.issuer.certificate, ca_chain: ca.chain, issuer_id: ca.issuer.id, issuer_name: ca.issuer.name } };
    },
  },
  { pattern: 'issuer/:ref/pem', unauthenticated: true, readOnly: true, read: async (req) => raw('application/pem-certificate-chain', (await issuerOf(req)).issuer.certificate) },
  { pattern: 'issuer/:ref/der', unauthenticated: true, readOnly: true, read: async (req) => raw('application/pkix-cert', pemBlocks((await issuerOf(req)).issuer.certificate)[0].der) },
  {
    pattern: 'issuer/:ref/crl',
    unauthenticated: true,
    readOnly: true,
    read: async (req) => {
      const der = await issuerCrl(req);
      return { data: { crl: der ? crlPem(der) : '' } };
    },
  },
  { pattern: 'issuer/:ref/crl/der', unauthenticated: true, readOnly: true, read: async (req) => raw('application/pkix-crl', await issuerCrl(req)) },
  {
    pattern: 'issuer/:ref/crl/pem',
    unauthenticated: true,
    readOnly: true,
    read: async (req) => {
      const der = await issuerCrl(req);
      return raw('application/x-pem-file', der && crlPem(der));
    },
  },
  { pattern: 'certs', readOnly: true, list: (req) => listSerials(req, 'certs/') },
  { pattern: 'certs/revoked', readOnly: true, list: (req) => listSerials(req, 'revoked/') },
  {
    pattern: 'crl/rotate',
    read: async (req) => {
      if (!(await readCa(req.store))) throw badInput('backend must be configured with a CA certificate/key');
      await rebuildCrl(req.store, req.now);
      return { data: { success: true } };
    },
  },
];
