import { Construct } from 'constructs';
import { durationSeconds, envName, mountPath } from './common';
import { SecretsMount } from './mounts';
import { CustomResource } from '../custom-resource';
import { Hangar } from '../hangar';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/;

/** How the directory stores passwords and their last change. */
export enum DirectorySchema {
  /** Active Directory: `unicodePwd`, `pwdLastSet`, accounts by userPrincipalName or sAMAccountName. */
  ACTIVE_DIRECTORY = 'ad',
  /** OpenLDAP: `userPassword`, `pwdChangedTime` (ppolicy overlay), accounts by uid or cn. */
  OPENLDAP = 'openldap',
}

/** A TLS protocol version bound. */
export enum DirectoryTlsVersion {
  TLS10 = 'tls10',
  TLS11 = 'tls11',
  TLS12 = 'tls12',
  TLS13 = 'tls13',
}

export interface DirectorySecretBackendProps {
  /**
   * The `ad` mount to configure; the backend is configured after it exists.
   * @default - the mount at `path`
   */
  readonly mount?: SecretsMount;
  /**
   * Path of the engine when `mount` is not given.
   * @default "ad"
   */
  readonly path?: string;
  /** LDAP URLs tried in order, e.g. ["ldaps://dc1.example.com", "ldaps://dc2.example.com"]. */
  readonly urls: string[];
  /** The DN Hangar binds as to manage passwords. */
  readonly binddn: string;
  /**
   * Environment variable holding the bind password at deploy time; it never enters the
   * configuration, the plan or the state. Written when another setting changes (or on creation),
   * so a password rotated by `rotate-root` is not overwritten by an unchanged stack.
   */
  readonly bindpassEnv: string;
  /** The base DN under which service accounts are searched. */
  readonly userdn: string;
  /**
   * Domain appended to bare account names (`name@upndomain`) in the Active Directory schema.
   * @default - none
   */
  readonly upndomain?: string;
  /**
   * The directory's schema.
   * @default DirectorySchema.ACTIVE_DIRECTORY
   */
  readonly schema?: DirectorySchema;
  /**
   * Upgrade ldap:// connections with StartTLS.
   * @default false
   */
  readonly starttls?: boolean;
  /**
   * Skip verification of the directory's certificate (tests only).
   * @default false
   */
  readonly insecureTls?: boolean;
  /**
   * PEM CA certificate that signed the directory's certificate.
   * @default - the system's trusted certificates
   */
  readonly certificate?: string;
  /**
   * Minimum TLS version.
   * @default DirectoryTlsVersion.TLS12
   */
  readonly tlsMinVersion?: DirectoryTlsVersion;
  /**
   * Maximum TLS version.
   * @default DirectoryTlsVersion.TLS12
   */
  readonly tlsMaxVersion?: DirectoryTlsVersion;
  /**
   * Default password lifetime of roles: seconds ("3600") or a duration ("1h").
   * @default "768h" (32 days)
   */
  readonly ttl?: string;
  /**
   * Longest password lifetime a role may ask for.
   * @default "768h" (32 days)
   */
  readonly maxTtl?: string;
  /**
   * Length of generated passwords (at least 14).
   * @default 64
   */
  readonly length?: number;
  /**
   * Password template containing `{{PASSWORD}}` exactly once.
   * @default - a fixed complexity prefix followed by random characters
   */
  readonly formatter?: string;
  /**
   * Timeout of each directory request.
   * @default "90s"
   */
  readonly requestTimeout?: string;
  /**
   * How much later than Hangar's own rotation the directory's last-set time may be before Hangar
   * assumes someone else changed the password and rotates again.
   * @default "5s"
   */
  readonly lastRotationTolerance?: string;
  /**
   * Compare account names case-sensitively.
   * @default false
   */
  readonly caseSensitiveNames?: boolean;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

/** The configuration of a directory accounts engine (`<path>/config`). */
export class DirectorySecretBackend extends Construct {
  /** The mount path. */
  public readonly path: string;
  /** @internal */
  public readonly _resource: CustomResource;
  /** @internal the connection its roles and sets use too */
  public readonly _hangar: Hangar;

  constructor(scope: Construct, id: string, props: DirectorySecretBackendProps) {
    super(scope, id);
    this._hangar = props.hangar ?? Hangar.of(this);
    this.path = props.mount?.path ?? mountPath('DirectorySecretBackend path', props.path ?? 'ad');
    const what = `DirectorySecretBackend ${this.path}`;
    if (props.mount && props.mount.type !== 'ad') throw new Error(`${what}: mount is a "${props.mount.type}" mount; give a SecretsMount of type "ad"`);
    if (props.urls.length === 0) throw new Error(`${what}: urls is empty; give at least one, e.g. ["ldaps://dc1.example.com"]`);
    for (const url of props.urls) {
      if (!/^ldaps?:\/\/[^\s/,]+\/?$/.test(url)) throw new Error(`${what}: url "${url}" is not an LDAP URL; use e.g. "ldaps://dc1.example.com:636"`);
    }
    if (!props.binddn) throw new Error(`${what}: binddn is empty; give the DN Hangar binds as`);
    if (!props.userdn) throw new Error(`${what}: userdn is empty; give the base DN of the service accounts, e.g. "ou=service,dc=example,dc=com"`);
    const length = props.length ?? 0;
    if (props.length !== undefined && (!Number.isInteger(length) || length < 14)) throw new Error(`${what}: length ${props.length} is too short; use 14 or more`);
    if (props.formatter !== undefined && props.formatter.split('{{PASSWORD}}').length !== 2) {
      throw new Error(`${what}: formatter "${props.formatter}" must contain {{PASSWORD}} exactly once, e.g. "svc-{{PASSWORD}}"`);
    }
    const ttl = durationSeconds(`${what} ttl`, props.ttl);
    const maxTtl = durationSeconds(`${what} maxTtl`, props.maxTtl);
    if (maxTtl && ttl > maxTtl) throw new Error(`${what}: ttl (${ttl}s) is longer than maxTtl (${maxTtl}s); shorten it or raise maxTtl`);
    if (props.certificate !== undefined && !props.certificate.includes('-----BEGIN CERTIFICATE-----')) {
      throw new Error(`${what}: certificate is not a PEM certificate; give the CA's "-----BEGIN CERTIFICATE-----" text`);
    }
    this._resource = new CustomResource(this, 'Resource', {
      hangar: this._hangar,
      kind: 'secrets.ad-config',
      key: this.path,
      desired: {
        url: props.urls.join(','),
        binddn: props.binddn,
        bindpassEnv: envName(`${what} bindpassEnv`, props.bindpassEnv),
        userdn: props.userdn,
        upndomain: props.upndomain ?? '',
        schema: props.schema ?? DirectorySchema.ACTIVE_DIRECTORY,
        starttls: props.starttls ?? false,
        insecureTls: props.insecureTls ?? false,
        certificate: props.certificate ?? '',
        ttl,
        maxTtl,
        length,
        formatter: props.formatter ?? '',
        requestTimeout: durationSeconds(`${what} requestTimeout`, props.requestTimeout),
        lastRotationTolerance: durationSeconds(`${what} lastRotationTolerance`, props.lastRotationTolerance),
        caseSensitiveNames: props.caseSensitiveNames ?? false,
        tlsMinVersion: props.tlsMinVersion ?? '',
        tlsMaxVersion: props.tlsMaxVersion ?? '',
      },
      dependsOn: props.mount ? [props.mount._resource] : [],
    });
  }
}

export interface DirectoryRoleProps {
  /** The engine the role belongs to. */
  readonly backend: DirectorySecretBackend;
  /** The role name. Changing it makes a new role. */
  readonly name: string;
  /** The directory account whose password the role rotates; it must exist when deploying. */
  readonly serviceAccountName: string;
  /**
   * Password lifetime: seconds ("3600") or a duration ("24h").
   * @default - the backend's ttl
   */
  readonly ttl?: string;
}

/** A role of a directory accounts engine (`<path>/roles/<name>`): one account's rotated password. */
export class DirectoryRole extends Construct {
  /** The role name. */
  public readonly name: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: DirectoryRoleProps) {
    super(scope, id);
    if (!NAME.test(props.name)) throw new Error(`DirectoryRole name "${props.name}" is invalid: use letters, digits, ".", "_", "-", "@" (at most 128)`);
    if (!props.serviceAccountName.trim()) throw new Error(`DirectoryRole ${props.name}: serviceAccountName is empty; give the account, e.g. "svc-app@example.com"`);
    this.name = props.name;
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.backend._hangar,
      kind: 'secrets.ad-role',
      key: `${props.backend.path}/${props.name}`,
      desired: { serviceAccountName: props.serviceAccountName, ttl: durationSeconds(`DirectoryRole ${props.name} ttl`, props.ttl) },
      dependsOn: [props.backend._resource],
    });
  }
}

export interface DirectoryLibrarySetProps {
  /** The engine the set belongs to. */
  readonly backend: DirectorySecretBackend;
  /** The set name. Changing it makes a new set. */
  readonly name: string;
  /** The accounts it lends; each must exist and belong to no other set or role. */
  readonly serviceAccountNames: string[];
  /**
   * Longest single check-out: seconds or a duration; "0" is unlimited.
   * @default "24h"
   */
  readonly ttl?: string;
  /**
   * Longest check-out with renewals; "0" is unlimited.
   * @default "24h"
   */
  readonly maxTtl?: string;
  /**
   * Let any caller with access check an account in, not only its borrower.
   * @default false
   */
  readonly disableCheckInEnforcement?: boolean;
}

/** A library set of a directory accounts engine (`<path>/library/<name>`): accounts lent by check-out. */
export class DirectoryLibrarySet extends Construct {
  /** The set name. */
  public readonly name: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: DirectoryLibrarySetProps) {
    super(scope, id);
    const what = `DirectoryLibrarySet ${props.name}`;
    if (!NAME.test(props.name) || props.name === 'manage') {
      throw new Error(`DirectoryLibrarySet name "${props.name}" is invalid: use letters, digits, ".", "_", "-", "@" (at most 128; not "manage")`);
    }
    if (props.serviceAccountNames.length === 0) throw new Error(`${what}: serviceAccountNames is empty; give the accounts it lends`);
    const seen = new Set<string>();
    for (const n of props.serviceAccountNames) {
      if (!n.trim()) throw new Error(`${what}: serviceAccountNames has an empty entry`);
      if (seen.has(n.toLowerCase())) throw new Error(`${what}: "${n}" is listed twice in serviceAccountNames`);
      seen.add(n.toLowerCase());
    }
    const ttl = props.ttl === undefined ? 86400 : durationSeconds(`${what} ttl`, props.ttl);
    const maxTtl = props.maxTtl === undefined ? 86400 : durationSeconds(`${what} maxTtl`, props.maxTtl);
    if (ttl && maxTtl && ttl > maxTtl) throw new Error(`${what}: ttl (${ttl}s) is longer than maxTtl (${maxTtl}s); shorten it or raise maxTtl`);
    this.name = props.name;
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.backend._hangar,
      kind: 'secrets.ad-library',
      key: `${props.backend.path}/${props.name}`,
      desired: { serviceAccountNames: props.serviceAccountNames, ttl, maxTtl, disableCheckInEnforcement: props.disableCheckInEnforcement ?? false },
      dependsOn: [props.backend._resource],
    });
  }
}
