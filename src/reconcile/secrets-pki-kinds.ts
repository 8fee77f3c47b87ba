import { X509Certificate } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { Clients } from './clients';
import { differences, ResourceKind } from './kind';
import { named, pathKind } from './secrets-path-kind';

/**
 * The PKI engine's managed objects: a mount's CA (a generated root, or an intermediate signed by
 * another mount), roles, URLs and CRL settings. An exported root key is written to a file the user
 * names at deploy time; it never travels in a payload or the state.
 */

const CaFields = {
  commonName: z.string().min(1),
  keyType: z.enum(['rsa', 'ec', 'ed25519']).default('rsa'),
  keyBits: z.number().int().min(0).default(0),
  ttl: z.number().int().min(0).default(0),
  maxPathLength: z.number().int().min(-1).default(-1),
  organization: z.array(z.string()).default([]),
  ou: z.array(z.string()).default([]),
  country: z.array(z.string()).default([]),
  permittedDnsDomains: z.array(z.string()).default([]),
};
const RootDesired = z.object({ ...CaFields, privateKeyFile: z.string().optional() });
const IntermediateDesired = z.object({ ...CaFields, issuerPath: z.string().min(1) });
type RootDesired = z.infer<typeof RootDesired>;
type IntermediateDesired = z.infer<typeof IntermediateDesired>;
type CaDesired = z.infer<z.ZodObject<typeof CaFields>>;

async function liveCa(clients: Clients, mount: string): Promise<X509Certificate | undefined> {
  const res = await clients.secrets.read(`${mount}/cert/ca`);
  const pem = res?.data?.certificate as string | undefined;
  return pem ? new X509Certificate(pem) : undefined;
}

const DEFAULT_BITS: Record<string, number> = { rsa: 2048, ec: 256, ed25519: 0 };
const CURVE_BITS: Record<string, number> = { prime256v1: 256, secp224r1: 224, secp384r1: 384, secp521r1: 521 };

/** The name and key of a live CA certificate, in the desired state's terms. */
function caShown(cert: X509Certificate): Pick<CaDesired, 'commonName' | 'keyType' | 'keyBits'> {
  const key = cert.publicKey;
  const details = key.asymmetricKeyDetails ?? {};
  const keyBits = key.asymmetricKeyType === 'rsa' ? details.modulusLength ?? 0 : key.asymmetricKeyType === 'ec' ? CURVE_BITS[details.namedCurve ?? ''] ?? 0 : 0;
  return { commonName: /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1] ?? '', keyType: key.asymmetricKeyType as CaDesired['keyType'], keyBits };
}

/** Whether a live CA certificate is what the desired state asks for (name and key); TTLs are not compared. */
function caMatches(desired: CaDesired, cert: X509Certificate): boolean {
  const live = caShown(cert);
  const bits = desired.keyBits || DEFAULT_BITS[desired.keyType];
  return live.commonName === desired.commonName && live.keyType === desired.keyType && live.keyBits === bits;
}

/** An intermediate named as asked and still signed by its issuer mount's current CA. */
async function intermediateUpToDate(clients: Clients, desired: IntermediateDesired, live: X509Certificate): Promise<boolean> {
  const issuer = await liveCa(clients, desired.issuerPath);
  return caMatches(desired, live) && issuer !== undefined && live.checkIssued(issuer) && live.verify(issuer.publicKey);
}

function caBody(d: CaDesired): Record<string, unknown> {
  return {
    common_name: d.commonName,
    key_type: d.keyType,
    key_bits: d.keyBits,
    ...(d.ttl ? { ttl: d.ttl } : {}),
    max_path_length: d.maxPathLength,
    organization: d.organization,
    ou: d.ou,
    country: d.country,
    permitted_dns_domains: d.permittedDnsDomains,
  };
}

async function deleteCa(clients: Clients, mount: string): Promise<boolean> {
  const existed = (await liveCa(clients, mount)) !== undefined;
  if (existed) await clients.secrets.delete(`${mount}/root`);
  return existed;
}

export const secretsPkiRootKind: ResourceKind<RootDesired> = {
  kind: 'secrets.pki-root',
  deleteOrder: 10,
  desired: RootDesired,
  async read(clients, key, desired) {
    const live = await liveCa(clients, key);
    if (!live) return undefined;
    return desired && caMatches(desired, live) ? desired : RootDesired.parse(caShown(live));
  },
  async upsert(clients, key, desired) {
    const live = await liveCa(clients, key);
    if (live && caMatches(desired, live)) return 'unchanged';
    // A CA's name or key cannot change in place: the old CA goes, a new one is generated.
    if (live) await clients.secrets.delete(`${key}/root`);
    const res = await clients.secrets.write(`${key}/root/generate/${desired.privateKeyFile ? 'exported' : 'internal'}`, caBody(desired));
    if (desired.privateKeyFile) {
      writeFileSync(desired.privateKeyFile, `${res?.data?.private_key as string}\n`, { mode: 0o600 });
      chmodSync(desired.privateKeyFile, 0o600);
    }
    return live ? 'updated' : 'created';
  },
  delete: (clients, key) => deleteCa(clients, key),
};

export const secretsPkiIntermediateKind: ResourceKind<IntermediateDesired> = {
  kind: 'secrets.pki-intermediate',
  deleteOrder: 15,
  desired: IntermediateDesired,
  async read(clients, key, desired) {
    const live = await liveCa(clients, key);
    if (!live) return undefined;
    if (desired && (await intermediateUpToDate(clients, desired, live))) return desired;
    return IntermediateDesired.parse({ ...caShown(live), issuerPath: desired?.issuerPath ?? '?' });
  },
  async upsert(clients, key, desired) {
    const live = await liveCa(clients, key);
    if (live && (await intermediateUpToDate(clients, desired, live))) return 'unchanged';
    const { common_name, key_type, key_bits, organization, ou, country } = caBody(desired);
    const csr = await clients.secrets.write(`${key}/intermediate/generate/internal`, { common_name, key_type, key_bits, organization, ou, country });
    const signed = await clients.secrets.write(`${desired.issuerPath}/root/sign-intermediate`, { ...caBody(desired), csr: csr?.data?.csr });
    const chain = [signed?.data?.certificate, ...((signed?.data?.ca_chain as string[] | undefined) ?? [])].join('\n');
    const set = await clients.secrets.write(`${key}/intermediate/set-signed`, { certificate: chain });
    // The mount may hold an earlier intermediate (issuers add up): the new one becomes its default.
    const imported = (set?.data?.imported_issuers as string[] | null | undefined)?.[0];
    if (imported) await clients.secrets.write(`${key}/config/issuers`, { default: imported });
    return live ? 'updated' : 'created';
  },
  delete: (clients, key) => deleteCa(clients, key),
};

/** A role as the API takes it (snake_case, durations in seconds). */
const RoleDesired = z.record(z.string(), z.unknown());
type RoleDesired = z.infer<typeof RoleDesired>;

export const secretsPkiRoleKind = pathKind<RoleDesired>({ kind: 'secrets.pki-role', deleteOrder: 30, desired: RoleDesired, path: named('roles') });

/** A mount-wide setting (config/urls, config/crl): "deleting" it writes the defaults back. */
function settingKind<D extends Record<string, unknown>>(
  kind: string,
  path: string,
  schema: z.ZodType<D>,
  defaults: D,
  fromLive: (data: Record<string, any>) => D,
): ResourceKind<D> {
  return {
    kind,
    deleteOrder: 20,
    desired: schema,
    async read(clients, key) {
      const data = (await clients.secrets.read(`${key}/${path}`))?.data;
      const live = data && fromLive(data);
      return live && differences(live, defaults).length ? live : undefined;
    },
    async upsert(clients, key, desired) {
      const actual = await this.read(clients, key);
      if (differences(desired, actual ?? defaults).length === 0) return 'unchanged';
      await clients.secrets.write(`${key}/${path}`, desired);
      return actual ? 'updated' : 'created';
    },
    async delete(clients, key) {
      const existed = (await this.read(clients, key)) !== undefined;
      if (existed) await clients.secrets.write(`${key}/${path}`, defaults);
      return existed;
    },
  };
}

const Urls = z.object({ issuing_certificates: z.array(z.string()), crl_distribution_points: z.array(z.string()), ocsp_servers: z.array(z.string()) });
export const secretsPkiUrlsKind = settingKind(
  'secrets.pki-urls',
  'config/urls',
  Urls,
  { issuing_certificates: [], crl_distribution_points: [], ocsp_servers: [] },
  (d) => ({
    issuing_certificates: d.issuing_certificates ?? [],
    crl_distribution_points: d.crl_distribution_points ?? [],
    ocsp_servers: d.ocsp_servers ?? [],
  }),
);

const UNIT: Record<string, number> = { s: 1, m: 60, h: 3600 };
const Crl = z.object({ expiry: z.number().int().min(1), disable: z.boolean() });
export const secretsPkiCrlKind = settingKind('secrets.pki-crl', 'config/crl', Crl, { expiry: 72 * 3600, disable: false }, (d) => {
  // The engine shows `expiry` as "72h", "90m" or "45s".
  const m = /^(\d+)([smh])$/.exec(String(d.expiry));
  return { expiry: m ? Number(m[1]) * UNIT[m[2]] : Number(d.expiry), disable: d.disable === true };
});

export const SECRETS_PKI_KINDS = [secretsPkiRootKind, secretsPkiIntermediateKind, secretsPkiRoleKind, secretsPkiUrlsKind, secretsPkiCrlKind] as const;
