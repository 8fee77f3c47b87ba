import { Construct } from 'constructs';
import { durationSeconds, engineMountPath, envName, objectName, ttlWithMax } from './common';
import { SecretsMount } from './mounts';
import { CustomResource } from '../custom-resource';
import { Hangar } from '../hangar';


/** Key types of an SSH certificate authority. */
export enum SshCaKeyType {
  /** RSA (`ssh-rsa`); `keyBits` 2048, 3072 or 4096 (the default). */
  RSA = 'ssh-rsa',
  /** ECDSA on P-256. */
  ECDSA_P256 = 'ecdsa-sha2-nistp256',
  /** ECDSA on P-384. */
  ECDSA_P384 = 'ecdsa-sha2-nistp384',
  /** ECDSA on P-521. */
  ECDSA_P521 = 'ecdsa-sha2-nistp521',
  /** Ed25519. */
  ED25519 = 'ssh-ed25519',
}

/** Where an SSH engine is: a mount of the stack, or the path of one that exists. */
export interface SshMountOptions {
  /**
   * The `ssh` mount; objects are configured after it exists.
   * @default - the mount at `path`
   */
  readonly mount?: SecretsMount;
  /**
   * Path of the engine when `mount` is not given.
   * @default "ssh"
   */
  readonly path?: string;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

function sshMount(what: string, props: SshMountOptions): string {
  return engineMountPath(what, props.mount, props.path, { type: 'ssh', fallback: 'ssh' });
}

export interface SshSecretBackendCaProps extends SshMountOptions {
  /**
   * Key type of a generated CA key.
   * @default SshCaKeyType.RSA
   */
  readonly keyType?: SshCaKeyType;
  /**
   * Size of a generated RSA key: 2048, 3072 or 4096.
   * @default 4096
   */
  readonly keyBits?: number;
  /**
   * Import a key instead of generating one: the environment variable holding the CA's private key
   * (PEM or OpenSSH format) at deploy time. The key never enters the configuration, plan or state.
   * @default - a key is generated
   */
  readonly privateKeyEnv?: string;
  /**
   * The public key of an imported private key ("ssh-ed25519 AAAA..."); required with `privateKeyEnv`.
   * @default - none (a key is generated)
   */
  readonly publicKey?: string;
}

/**
 * The certificate authority of an SSH engine (`<path>/config/ca`): generated, or imported from an
 * environment variable. A deploy keeps the CA while it matches the props; a changed key type or
 * public key replaces it. Removing the construct deletes the CA.
 */
export class SshSecretBackendCa extends Construct {
  /** The mount path. */
  public readonly path: string;
  /** @internal */
  public readonly _resource: CustomResource;
  /** @internal the connection its roles use too */
  public readonly _hangar: Hangar;

  constructor(scope: Construct, id: string, props: SshSecretBackendCaProps = {}) {
    super(scope, id);
    this._hangar = props.hangar ?? Hangar.of(this);
    this.path = sshMount('SshSecretBackendCa', props);
    const what = `SshSecretBackendCa ${this.path}`;
    const imported = props.privateKeyEnv !== undefined;
    if (imported !== (props.publicKey !== undefined)) {
      throw new Error(`${what}: give privateKeyEnv and publicKey together to import a CA, or neither to generate one`);
    }
    if (imported && (props.keyType !== undefined || props.keyBits !== undefined)) {
      throw new Error(`${what}: keyType and keyBits apply to a generated key; an imported key has its own (remove them)`);
    }
    if (props.publicKey !== undefined && !/^(ssh-rsa|ssh-ed25519|ecdsa-sha2-nistp(256|384|521)) [A-Za-z0-9+/]+=*( .*)?\n?$/.test(props.publicKey)) {
      throw new Error(`${what}: publicKey "${props.publicKey.slice(0, 40)}..." is not an SSH public key line such as "ssh-ed25519 AAAA..."`);
    }
    const keyType = props.keyType ?? SshCaKeyType.RSA;
    if (props.keyBits !== undefined && (keyType !== SshCaKeyType.RSA || ![2048, 3072, 4096].includes(props.keyBits))) {
      throw new Error(`${what}: keyBits ${props.keyBits} is invalid: give 2048, 3072 or 4096 with SshCaKeyType.RSA (other key types have a fixed size)`);
    }
    const desired = imported
      ? { privateKeyEnv: envName(`${what} privateKeyEnv`, props.privateKeyEnv), publicKey: props.publicKey!.trim().split(/\s+/).slice(0, 2).join(' ') }
      : { keyType, keyBits: keyType === SshCaKeyType.RSA ? props.keyBits ?? 4096 : 0 };
    this._resource = new CustomResource(this, 'Resource', {
      hangar: this._hangar,
      kind: 'secrets.ssh-ca',
      key: this.path,
      desired,
      dependsOn: props.mount ? [props.mount._resource] : [],
    });
  }
}

/** The two kinds of SSH roles. */
export enum SshRoleKeyType {
  /** Signs and issues OpenSSH certificates. */
  CA = 'ca',
  /** One-time passwords, verified by the target host. */
  OTP = 'otp',
}

/** Signature algorithms of an RSA CA. */
export enum SshAlgorithmSigner {
  /** rsa-sha2-256 for RSA CAs, the CA's own algorithm otherwise. */
  DEFAULT = 'default',
  /** RSA with SHA-1: refused by current OpenSSH servers. */
  SSH_RSA = 'ssh-rsa',
  /** RSA with SHA-256. */
  RSA_SHA2_256 = 'rsa-sha2-256',
  /** RSA with SHA-512. */
  RSA_SHA2_512 = 'rsa-sha2-512',
}

export interface SshRoleProps extends SshMountOptions {
  /** The role name. Changing it makes a new role. */
  readonly name: string;
  /** What the role issues. */
  readonly keyType: SshRoleKeyType;
  /**
   * The CA that signs for this role; the role is configured after it.
   * @default - none
   */
  readonly ca?: SshSecretBackendCa;
  /**
   * The default user (OTP: required; CA: the principal when a request names none, if also allowed).
   * @default - none
   */
  readonly defaultUser?: string;
  /**
   * Users credentials may be created for; ["*"] allows any. OTP: empty allows any; CA: empty allows none.
   * @default []
   */
  readonly allowedUsers?: string[];
  /**
   * OTP: the CIDR blocks the role serves (unless it is a zero-address role).
   * @default []
   */
  readonly cidrList?: string[];
  /**
   * OTP: CIDR blocks excluded from `cidrList`.
   * @default []
   */
  readonly excludeCidrList?: string[];
  /**
   * OTP: the SSH port returned with the password.
   * @default 22
   */
  readonly port?: number;
  /**
   * CA: host certificate domains; ["*"] allows any.
   * @default []
   */
  readonly allowedDomains?: string[];
  /**
   * CA: host certificates may name an allowed domain itself.
   * @default false
   */
  readonly allowBareDomains?: boolean;
  /**
   * CA: host certificates may name subdomains of the allowed domains.
   * @default false
   */
  readonly allowSubdomains?: boolean;
  /**
   * CA: user certificates may be signed.
   * @default false
   */
  readonly allowUserCertificates?: boolean;
  /**
   * CA: host certificates may be signed.
   * @default false
   */
  readonly allowHostCertificates?: boolean;
  /**
   * CA: requests may set the key id.
   * @default false
   */
  readonly allowUserKeyIds?: boolean;
  /**
   * CA: format of the key id, with {{token_display_name}}, {{role_name}}, {{public_key_hash}}.
   * @default - "vault-{{token_display_name}}-{{public_key_hash}}"
   */
  readonly keyIdFormat?: string;
  /**
   * CA: certificate TTL when a request gives none: seconds or a duration ("1h").
   * @default - the mount's default
   */
  readonly ttl?: string;
  /**
   * CA: the longest certificate TTL.
   * @default - the mount's maximum
   */
  readonly maxTtl?: string;
  /**
   * CA: critical options a request may set; empty allows any.
   * @default []
   */
  readonly allowedCriticalOptions?: string[];
  /**
   * CA: extensions a request may set; ["*"] allows any; empty: requests get `defaultExtensions` only.
   * @default []
   */
  readonly allowedExtensions?: string[];
  /**
   * CA: critical options of certificates whose request sets none.
   * @default {}
   */
  readonly defaultCriticalOptions?: Record<string, string>;
  /**
   * CA: extensions of certificates whose request sets none, e.g. { "permit-pty": "" }.
   * @default {}
   */
  readonly defaultExtensions?: Record<string, string>;
  /**
   * CA: key types and sizes that may be signed, e.g. { rsa: 4096, ed25519: 0 }.
   * @default - any key
   */
  readonly allowedUserKeyLengths?: Record<string, number>;
  /**
   * CA: signature algorithm of an RSA CA.
   * @default SshAlgorithmSigner.DEFAULT
   */
  readonly algorithmSigner?: SshAlgorithmSigner;
  /**
   * CA: how far `ValidAfter` is backdated: seconds or a duration.
   * @default "30s"
   */
  readonly notBeforeDuration?: string;
}

const list = (v: string[] | undefined) => (v ?? []).join(',');

/** A role of an SSH engine (`<path>/roles/<name>`), of type `ca` or `otp`. */
export class SshRole extends Construct {
  /** The role name. */
  public readonly name: string;
  /** The mount path. */
  public readonly path: string;
  /** @internal */
  public readonly _resource: CustomResource;
  /** @internal */
  public readonly _hangar: Hangar;

  constructor(scope: Construct, id: string, props: SshRoleProps) {
    super(scope, id);
    const what = `SshRole ${props.name}`;
    objectName('SshRole', props.name, true);
    this._hangar = props.hangar ?? props.ca?._hangar ?? Hangar.of(this);
    this.path = props.ca?.path ?? sshMount(what, props);
    this.name = props.name;
    for (const [field, values] of [['allowedUsers', props.allowedUsers], ['cidrList', props.cidrList], ['allowedDomains', props.allowedDomains]] as const) {
      for (const v of values ?? []) if (!v || /[,\s]/.test(v)) throw new Error(`${what}: ${field} entry "${v}" is invalid: one value per entry, without commas or spaces`);
    }
    let desired: Record<string, unknown>;
    if (props.keyType === SshRoleKeyType.OTP) {
      if (!props.defaultUser) throw new Error(`${what}: defaultUser is required for OTP roles (the user an OTP is for when a request names none)`);
      if (props.port !== undefined && !(Number.isInteger(props.port) && props.port > 0 && props.port < 65536)) throw new Error(`${what}: port ${props.port} is not a TCP port`);
      desired = {
        key_type: 'otp',
        default_user: props.defaultUser,
        allowed_users: list(props.allowedUsers),
        cidr_list: list(props.cidrList),
        exclude_cidr_list: list(props.excludeCidrList),
        port: props.port ?? 22,
      };
    } else {
      if (!props.allowUserCertificates && !props.allowHostCertificates) {
        throw new Error(`${what}: a CA role signs user or host certificates: set allowUserCertificates or allowHostCertificates (or both)`);
      }
      const [ttl, maxTtl] = ttlWithMax(what, ['ttl', 'maxTtl'], props.ttl, props.maxTtl);
      desired = {
        key_type: 'ca',
        default_user: props.defaultUser ?? '',
        allowed_users: list(props.allowedUsers),
        allowed_domains: list(props.allowedDomains),
        allow_bare_domains: props.allowBareDomains ?? false,
        allow_subdomains: props.allowSubdomains ?? false,
        allow_user_certificates: props.allowUserCertificates ?? false,
        allow_host_certificates: props.allowHostCertificates ?? false,
        allow_user_key_ids: props.allowUserKeyIds ?? false,
        key_id_format: props.keyIdFormat ?? '',
        ttl,
        max_ttl: maxTtl,
        allowed_critical_options: list(props.allowedCriticalOptions),
        allowed_extensions: list(props.allowedExtensions),
        default_critical_options: props.defaultCriticalOptions ?? {},
        default_extensions: props.defaultExtensions ?? {},
        allowed_user_key_lengths: Object.fromEntries(Object.entries(props.allowedUserKeyLengths ?? {}).map(([k, v]) => [k, [v]])),
        algorithm_signer: props.algorithmSigner ?? SshAlgorithmSigner.DEFAULT,
        not_before_duration: props.notBeforeDuration === undefined ? 30 : durationSeconds(`${what} notBeforeDuration`, props.notBeforeDuration),
      };
    }
    this._resource = new CustomResource(this, 'Resource', {
      hangar: this._hangar,
      kind: 'secrets.ssh-role',
      key: `${this.path}/${props.name}`,
      desired,
      dependsOn: [...(props.ca ? [props.ca._resource] : []), ...(props.mount ? [props.mount._resource] : [])],
    });
  }
}

export interface SshZeroAddressProps extends SshMountOptions {
  /** OTP roles that serve any IP address (their CIDR lists are then ignored). */
  readonly roles: SshRole[];
}

/** The zero-address roles of an SSH engine (`<path>/config/zeroaddress`). Removing it clears the list. */
export class SshZeroAddress extends Construct {
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: SshZeroAddressProps) {
    super(scope, id);
    const path = props.roles[0]?.path ?? sshMount('SshZeroAddress', props);
    if (props.roles.length === 0) throw new Error('SshZeroAddress: roles is empty; give at least one SshRole (or remove the construct)');
    const other = props.roles.find((r) => r.path !== path);
    if (other) throw new Error(`SshZeroAddress: role ${other.name} is on mount "${other.path}", not "${path}"; one SshZeroAddress per mount`);
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? props.roles[0]._hangar,
      kind: 'secrets.ssh-zeroaddress',
      key: path,
      desired: { roles: [...new Set(props.roles.map((r) => r.name))].sort() },
      dependsOn: props.roles.map((r) => r._resource),
    });
  }
}
