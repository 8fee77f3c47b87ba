import { Construct } from 'constructs';
import { durationSeconds, engineMountPath, httpUrl, ttlWithMax } from './common';
import { MountOptions, SecretsMount } from './mounts';
import { CustomResource } from '../custom-resource';
import { Hangar } from '../hangar';

const ROLE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/;
const OID = /^[0-2](\.(0|[1-9][0-9]*))+$/;

export interface PkiSecretBackendProps extends MountOptions {
  /**
   * Where the engine is mounted. Changing it makes a new mount.
   * @default "pki"
   */
  readonly path?: string;
}

/** A PKI secrets engine mounted in the Hangar secrets service (a `SecretsMount` of type "pki"). */
export class PkiSecretBackend extends SecretsMount {
  constructor(scope: Construct, id: string, props: PkiSecretBackendProps = {}) {
    super(scope, id, { ...props, path: props.path ?? 'pki', type: 'pki' });
  }
}

/** Where a PKI object lives: a backend of the stack, or the path of one that exists. */
export interface PkiMountOptions {
  /**
   * The PKI backend; the object is configured after it exists.
   * @default - the mount at `path`
   */
  readonly backend?: SecretsMount;
  /**
   * Path of the engine when `backend` is not given.
   * @default "pki"
   */
  readonly path?: string;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

function pkiMount(what: string, props: PkiMountOptions): string {
  return engineMountPath(what, props.backend, props.path, { type: 'pki', fallback: 'pki', prop: 'backend', give: 'a PkiSecretBackend' });
}

const parents = (props: PkiMountOptions, ...more: CustomResource[]) => [...(props.backend ? [props.backend._resource] : []), ...more];

/** Key types of CA and role keys. */
export enum PkiKeyType {
  /** RSA; keyBits 2048 (default), 3072, 4096 or 8192. */
  RSA = 'rsa',
  /** ECDSA; keyBits 224, 256 (default), 384 or 521. */
  EC = 'ec',
  /** Ed25519 (no keyBits). */
  ED25519 = 'ed25519',
  /** Roles only: any key type in CSRs (signing only, no issuing). */
  ANY = 'any',
}

function keyBits(what: string, type: PkiKeyType, bits: number | undefined): number {
  const allowed: Record<PkiKeyType, number[]> = { rsa: [2048, 3072, 4096, 8192], ec: [224, 256, 384, 521], ed25519: [], any: [] };
  if (bits === undefined) return { rsa: 2048, ec: 256, ed25519: 0, any: 0 }[type];
  if (!allowed[type].includes(bits)) {
    throw new Error(`${what}: keyBits ${bits} does not fit key type ${type}: use ${allowed[type].join(', ') || 'no keyBits (the size is fixed)'}`);
  }
  return bits;
}

export interface PkiCaProps extends PkiMountOptions {
  /** The CA's common name. Changing it replaces the CA. */
  readonly commonName: string;
  /**
   * The CA key's type. Changing it replaces the CA.
   * @default PkiKeyType.RSA
   */
  readonly keyType?: PkiKeyType;
  /**
   * The CA key's size.
   * @default - 2048 for RSA, 256 for EC
   */
  readonly keyBits?: number;
  /**
   * Validity: seconds or a duration ("87600h"); capped at the mount's maximum lease TTL.
   * @default - the mount's default lease TTL
   */
  readonly ttl?: string;
  /**
   * Path length constraint; -1 is unlimited.
   * @default -1
   */
  readonly maxPathLength?: number;
  /**
   * Subject organization(s).
   * @default []
   */
  readonly organization?: string[];
  /**
   * Subject organizational unit(s).
   * @default []
   */
  readonly ou?: string[];
  /**
   * Subject country code(s), two letters.
   * @default []
   */
  readonly country?: string[];
  /**
   * DNS domains the CA may issue for (name constraints).
   * @default - no constraint
   */
  readonly permittedDnsDomains?: string[];
}

function caDesired(what: string, props: PkiCaProps): Record<string, unknown> {
  if (!props.commonName) throw new Error(`${what}: commonName is required, e.g. "Example Root CA"`);
  const keyType = props.keyType ?? PkiKeyType.RSA;
  if (keyType === PkiKeyType.ANY) throw new Error(`${what}: keyType ANY is for roles; give RSA, EC or ED25519`);
  if (props.maxPathLength !== undefined && (!Number.isInteger(props.maxPathLength) || props.maxPathLength < -1)) {
    throw new Error(`${what}: maxPathLength ${props.maxPathLength} is invalid: use -1 (unlimited) or a count such as 0 or 1`);
  }
  for (const c of props.country ?? []) if (!/^[A-Za-z]{2}$/.test(c)) throw new Error(`${what}: country "${c}" is not a two-letter code such as "DE"`);
  return {
    commonName: props.commonName,
    keyType,
    keyBits: keyBits(what, keyType, props.keyBits),
    ttl: durationSeconds(`${what} ttl`, props.ttl),
    maxPathLength: props.maxPathLength ?? -1,
    organization: props.organization ?? [],
    ou: props.ou ?? [],
    country: props.country ?? [],
    permittedDnsDomains: props.permittedDnsDomains ?? [],
  };
}

/** A certificate authority of a PKI mount: a root or an intermediate. */
export abstract class PkiCa extends Construct {
  /** The mount path the CA serves. */
  public abstract readonly path: string;
  /** @internal */
  public abstract readonly _resource: CustomResource;
}

export interface PkiRootCaProps extends PkiCaProps {
  /**
   * Export the root's private key to this file (mode 0600) when it is generated, on the machine that
   * runs the deploy. The key never enters the configuration, plan or state.
   * @default - not exported (the key stays sealed in the engine)
   */
  readonly privateKeyFile?: string;
}

/**
 * A self-signed root CA of a PKI mount (`root/generate`). A deploy keeps the root while its name and
 * key type match the props; a change replaces it (a CA's name and key cannot change in place).
 * Removing the construct deletes the CA (`DELETE root`).
 */
export class PkiRootCa extends PkiCa {
  public readonly path: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: PkiRootCaProps) {
    super(scope, id);
    this.path = pkiMount('PkiRootCa', props);
    const what = `PkiRootCa ${this.path}`;
    if (props.privateKeyFile !== undefined && !props.privateKeyFile.trim()) throw new Error(`${what}: privateKeyFile is empty; give a file path or leave it out`);
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? Hangar.of(this),
      kind: 'secrets.pki-root',
      key: this.path,
      desired: { ...caDesired(what, props), ...(props.privateKeyFile ? { privateKeyFile: props.privateKeyFile } : {}) },
      dependsOn: parents(props),
    });
  }
}

export interface PkiIntermediateCaProps extends PkiCaProps {
  /** The CA of another mount that signs this intermediate. */
  readonly issuer: PkiCa;
}

/**
 * An intermediate CA: its key is generated in this mount (never exported), its CSR signed by the
 * issuer's mount (`root/sign-intermediate`), and the result set (`intermediate/set-signed`). A deploy
 * re-does this when the name or key type changes, or when the issuer's CA is no longer the signer.
 */
export class PkiIntermediateCa extends PkiCa {
  public readonly path: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: PkiIntermediateCaProps) {
    super(scope, id);
    this.path = pkiMount('PkiIntermediateCa', props);
    const what = `PkiIntermediateCa ${this.path}`;
    if (props.issuer.path === this.path) throw new Error(`${what}: the issuer is on the same mount; an intermediate needs another mount's CA`);
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? Hangar.of(this),
      kind: 'secrets.pki-intermediate',
      key: this.path,
      desired: { ...caDesired(what, props), issuerPath: props.issuer.path },
      dependsOn: parents(props, props.issuer._resource),
    });
  }
}

/** Key usages of issued certificates. */
export enum PkiKeyUsage {
  DIGITAL_SIGNATURE = 'DigitalSignature',
  CONTENT_COMMITMENT = 'ContentCommitment',
  KEY_ENCIPHERMENT = 'KeyEncipherment',
  DATA_ENCIPHERMENT = 'DataEncipherment',
  KEY_AGREEMENT = 'KeyAgreement',
  CERT_SIGN = 'CertSign',
  CRL_SIGN = 'CRLSign',
  ENCIPHER_ONLY = 'EncipherOnly',
  DECIPHER_ONLY = 'DecipherOnly',
}

/** Extended key usages of issued certificates (beyond the server, client, code signing and email flags). */
export enum PkiExtKeyUsage {
  ANY = 'Any',
  SERVER_AUTH = 'ServerAuth',
  CLIENT_AUTH = 'ClientAuth',
  CODE_SIGNING = 'CodeSigning',
  EMAIL_PROTECTION = 'EmailProtection',
  IPSEC_END_SYSTEM = 'IPSECEndSystem',
  IPSEC_TUNNEL = 'IPSECTunnel',
  IPSEC_USER = 'IPSECUser',
  TIME_STAMPING = 'TimeStamping',
  OCSP_SIGNING = 'OCSPSigning',
}

export interface PkiRoleProps extends PkiMountOptions {
  /** The role name. Changing it makes a new role. */
  readonly name: string;
  /** Certificate TTL when a request gives none: seconds or a duration ("24h"). @default - the mount's default */
  readonly ttl?: string;
  /** The longest certificate TTL; longer requests are capped. @default - the mount's maximum */
  readonly maxTtl?: string;
  /** Domains names may be in (see the allow switches). @default [] */
  readonly allowedDomains?: string[];
  /** Names may equal an allowed domain. @default false */
  readonly allowBareDomains?: boolean;
  /** Names may be below an allowed domain, wildcards included. @default false */
  readonly allowSubdomains?: boolean;
  /** Allowed domains may be globs ("web-*.example.com"). @default false */
  readonly allowGlobDomains?: boolean;
  /** Wildcard names may be issued. @default true */
  readonly allowWildcardCertificates?: boolean;
  /** Any name is allowed (enforceHostnames still applies). @default false */
  readonly allowAnyName?: boolean;
  /** "localhost" and "localdomain" are allowed. @default true */
  readonly allowLocalhost?: boolean;
  /** DNS names must be valid hostnames. @default true */
  readonly enforceHostnames?: boolean;
  /** IP SANs may be requested. @default true */
  readonly allowIpSans?: boolean;
  /** URI SANs allowed (globs). @default [] */
  readonly allowedUriSans?: string[];
  /** Other SANs allowed, as "<oid>;UTF8:<value>" (value "*" allows any; "*" alone allows all). @default [] */
  readonly allowedOtherSans?: string[];
  /** TLS server authentication. @default true */
  readonly serverFlag?: boolean;
  /** TLS client authentication. @default true */
  readonly clientFlag?: boolean;
  /** Code signing. @default false */
  readonly codeSigningFlag?: boolean;
  /** Email protection. @default false */
  readonly emailProtectionFlag?: boolean;
  /** Key type of issued keys and accepted CSRs. @default PkiKeyType.RSA */
  readonly keyType?: PkiKeyType;
  /** Key size. @default - 2048 for RSA, 256 for EC */
  readonly keyBits?: number;
  /** Key usages; an empty list omits the extension. @default [DIGITAL_SIGNATURE, KEY_AGREEMENT, KEY_ENCIPHERMENT] */
  readonly keyUsage?: PkiKeyUsage[];
  /** Extended key usages. @default [] */
  readonly extKeyUsage?: PkiExtKeyUsage[];
  /** Extended key usage OIDs. @default [] */
  readonly extKeyUsageOids?: string[];
  /** CSR signing takes the CSR's common name. @default true */
  readonly useCsrCommonName?: boolean;
  /** CSR signing takes the CSR's SANs. @default true */
  readonly useCsrSans?: boolean;
  /** Subject organizational units. @default [] */
  readonly ou?: string[];
  /** Subject organizations. @default [] */
  readonly organization?: string[];
  /** Subject countries. @default [] */
  readonly country?: string[];
  /** Subject localities. @default [] */
  readonly locality?: string[];
  /** Subject provinces. @default [] */
  readonly province?: string[];
  /** Subject street addresses. @default [] */
  readonly streetAddress?: string[];
  /** Subject postal codes. @default [] */
  readonly postalCode?: string[];
  /** Subject serial number. @default "" */
  readonly serialNumber?: string;
  /** Issued certificates get a lease (revoked with it). @default false */
  readonly generateLease?: boolean;
  /** Certificates are not stored (not listed, not revocable). @default false */
  readonly noStore?: boolean;
  /** A common name is required. @default true */
  readonly requireCn?: boolean;
  /** Certificate policy OIDs. @default [] */
  readonly policyIdentifiers?: string[];
  /** Add basic constraints CA:FALSE. @default false */
  readonly basicConstraintsValidForNonCa?: boolean;
  /** Backdating of notBefore: seconds or a duration. @default "30s" */
  readonly notBeforeDuration?: string;
}

/**
 * A role of a PKI mount (`roles/<name>`): what certificates it issues and signs. A deploy updates it
 * in place; removing the construct deletes the role (certificates it issued stay valid).
 */
export class PkiRole extends Construct {
  /** The mount path. */
  public readonly path: string;
  /** The role name. */
  public readonly name: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: PkiRoleProps) {
    super(scope, id);
    this.path = pkiMount('PkiRole', props);
    if (!ROLE_NAME.test(props.name)) throw new Error(`PkiRole name "${props.name}" is invalid: use letters, digits, ".", "_", "-", "@"`);
    this.name = props.name;
    const what = `PkiRole ${this.path}/${props.name}`;
    const keyType = props.keyType ?? PkiKeyType.RSA;
    const [ttl, maxTtl] = ttlWithMax(what, ['ttl', 'maxTtl'], props.ttl, props.maxTtl);
    for (const oid of [...(props.extKeyUsageOids ?? []), ...(props.policyIdentifiers ?? [])]) {
      if (!OID.test(oid)) throw new Error(`${what}: "${oid}" is not an OID such as "1.3.6.1.4.1.311.20.2.3"`);
    }
    for (const o of props.allowedOtherSans ?? []) {
      if (o !== '*' && !/^[0-9.]+;UTF-?8:.*$/i.test(o)) throw new Error(`${what}: allowedOtherSans "${o}" must be "<oid>;UTF8:<value>" or "*"`);
    }
    const desired = {
      ttl,
      max_ttl: maxTtl,
      allow_localhost: props.allowLocalhost ?? true,
      allowed_domains: props.allowedDomains ?? [],
      allow_bare_domains: props.allowBareDomains ?? false,
      allow_subdomains: props.allowSubdomains ?? false,
      allow_glob_domains: props.allowGlobDomains ?? false,
      allow_wildcard_certificates: props.allowWildcardCertificates ?? true,
      allow_any_name: props.allowAnyName ?? false,
      enforce_hostnames: props.enforceHostnames ?? true,
      allow_ip_sans: props.allowIpSans ?? true,
      allowed_uri_sans: props.allowedUriSans ?? [],
      allowed_other_sans: props.allowedOtherSans ?? [],
      server_flag: props.serverFlag ?? true,
      client_flag: props.clientFlag ?? true,
      code_signing_flag: props.codeSigningFlag ?? false,
      email_protection_flag: props.emailProtectionFlag ?? false,
      key_type: keyType,
      key_bits: keyBits(what, keyType, props.keyBits),
      key_usage: props.keyUsage ?? [PkiKeyUsage.DIGITAL_SIGNATURE, PkiKeyUsage.KEY_AGREEMENT, PkiKeyUsage.KEY_ENCIPHERMENT],
      ext_key_usage: props.extKeyUsage ?? [],
      ext_key_usage_oids: props.extKeyUsageOids ?? [],
      use_csr_common_name: props.useCsrCommonName ?? true,
      use_csr_sans: props.useCsrSans ?? true,
      ou: props.ou ?? [],
      organization: props.organization ?? [],
      country: props.country ?? [],
      locality: props.locality ?? [],
      province: props.province ?? [],
      street_address: props.streetAddress ?? [],
      postal_code: props.postalCode ?? [],
      serial_number: props.serialNumber ?? '',
      generate_lease: props.generateLease ?? false,
      no_store: props.noStore ?? false,
      require_cn: props.requireCn ?? true,
      policy_identifiers: props.policyIdentifiers ?? [],
      basic_constraints_valid_for_non_ca: props.basicConstraintsValidForNonCa ?? false,
      not_before_duration: props.notBeforeDuration === undefined ? 30 : durationSeconds(`${what} notBeforeDuration`, props.notBeforeDuration),
    };
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? Hangar.of(this),
      kind: 'secrets.pki-role',
      key: `${this.path}/${props.name}`,
      desired,
      dependsOn: parents(props),
    });
  }
}

export interface PkiConfigUrlsProps extends PkiMountOptions {
  /** URLs of the issuing CA certificate (AIA), written into issued certificates. @default [] */
  readonly issuingCertificates?: string[];
  /** CRL distribution points written into issued certificates. @default [] */
  readonly crlDistributionPoints?: string[];
  /** OCSP responder URLs written into issued certificates. @default [] */
  readonly ocspServers?: string[];
}

/** The URLs a PKI mount writes into the certificates it issues (`config/urls`). Removal resets them. */
export class PkiConfigUrls extends Construct {
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: PkiConfigUrlsProps) {
    super(scope, id);
    const path = pkiMount('PkiConfigUrls', props);
    const urls = (field: string, list: string[] | undefined) => (list ?? []).map((u) => httpUrl(`PkiConfigUrls ${path} ${field}`, u)!);
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? Hangar.of(this),
      kind: 'secrets.pki-urls',
      key: path,
      desired: {
        issuing_certificates: urls('issuingCertificates', props.issuingCertificates),
        crl_distribution_points: urls('crlDistributionPoints', props.crlDistributionPoints),
        ocsp_servers: urls('ocspServers', props.ocspServers),
      },
      dependsOn: parents(props),
    });
  }
}

export interface PkiCrlConfigProps extends PkiMountOptions {
  /** How long each CRL is valid: seconds or a duration. @default "72h" */
  readonly expiry?: string;
  /** Publish empty CRLs. @default false */
  readonly disable?: boolean;
}

/** The CRL settings of a PKI mount (`config/crl`). Removal resets them. */
export class PkiCrlConfig extends Construct {
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: PkiCrlConfigProps = {}) {
    super(scope, id);
    const path = pkiMount('PkiCrlConfig', props);
    const expiry = props.expiry === undefined ? 72 * 3600 : durationSeconds(`PkiCrlConfig ${path} expiry`, props.expiry);
    if (expiry < 1) throw new Error(`PkiCrlConfig ${path}: expiry "${props.expiry}" must be at least one second, e.g. "72h"`);
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? Hangar.of(this),
      kind: 'secrets.pki-crl',
      key: path,
      desired: { expiry, disable: props.disable ?? false },
      dependsOn: parents(props),
    });
  }
}
