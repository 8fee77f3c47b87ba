import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Construct } from 'constructs';
import { durationSeconds, engineMountPath, envName, mountPath, objectName } from './common';
import { MountOptions, SecretsMount } from './mounts';
import { kvValue, kvValueHash } from '../../reconcile/kv-value';
import { CustomResource } from '../custom-resource';
import { Hangar } from '../hangar';

/** Versions of the key/value store. */
export enum KvVersion {
  /** One unversioned value per path. */
  V1 = '1',
  /** Versioned values under `data/` and `metadata/`. */
  V2 = '2',
}

export interface KvMountProps extends MountOptions {
  /** Where the store is mounted, e.g. "secret" or "team/kv". Changing it makes a new mount. */
  readonly path: string;
  /**
   * The store's version. Changing 1 to 2 upgrades the mount in place (each secret becomes its
   * version 1); 2 cannot go back to 1.
   * @default KvVersion.V2
   */
  readonly version?: KvVersion;
  /**
   * Version 2: versions kept per secret.
   * @default 0 (the store's default of 10)
   */
  readonly maxVersions?: number;
  /**
   * Version 2: every write must give `cas` (check-and-set).
   * @default false
   */
  readonly casRequired?: boolean;
  /**
   * Version 2: versions are soft-deleted this long after being written: seconds or a duration ("30d").
   * @default - never
   */
  readonly deleteVersionAfter?: string;
}

/** A key/value secrets store (`sys/mounts/<path>` of type `kv`, and its `config` for version 2). */
export class KvMount extends Construct {
  /** The mount path, without slashes. */
  public readonly path: string;
  public readonly version: KvVersion;
  /** @internal */
  public readonly _resource: CustomResource;
  /** @internal */
  public readonly _hangar: Hangar;

  constructor(scope: Construct, id: string, props: KvMountProps) {
    super(scope, id);
    this.path = mountPath('KvMount path', props.path);
    const what = `KvMount ${this.path}`;
    this.version = props.version ?? KvVersion.V2;
    if (!Object.values(KvVersion).includes(this.version)) throw new Error(`${what}: version "${props.version}" is invalid: use KvVersion.V1 or KvVersion.V2`);
    const maxVersions = props.maxVersions ?? 0;
    if (!Number.isInteger(maxVersions) || maxVersions < 0) throw new Error(`${what}: maxVersions ${maxVersions} is invalid: use 0 (the default of 10) or more`);
    const v2Only = [props.maxVersions, props.casRequired, props.deleteVersionAfter].some((v) => v !== undefined);
    if (this.version === KvVersion.V1 && v2Only) {
      throw new Error(`${what}: maxVersions, casRequired and deleteVersionAfter need version 2; set version: KvVersion.V2 or drop them`);
    }
    const defaultLeaseTtl = durationSeconds(`${what} defaultLeaseTtl`, props.defaultLeaseTtl);
    const maxLeaseTtl = durationSeconds(`${what} maxLeaseTtl`, props.maxLeaseTtl);
    if (maxLeaseTtl && defaultLeaseTtl > maxLeaseTtl) throw new Error(`${what}: defaultLeaseTtl (${defaultLeaseTtl}s) is longer than maxLeaseTtl (${maxLeaseTtl}s)`);
    this._hangar = props.hangar ?? Hangar.of(this);
    this._resource = new CustomResource(this, 'Resource', {
      hangar: this._hangar,
      kind: 'secrets.kv-mount',
      key: this.path,
      desired: {
        version: Number(this.version),
        description: props.description ?? '',
        defaultLeaseTtl,
        maxLeaseTtl,
        maxVersions,
        casRequired: props.casRequired ?? false,
        deleteVersionAfter: durationSeconds(`${what} deleteVersionAfter`, props.deleteVersionAfter),
      },
    });
  }
}

export interface KvSecretProps {
  /** The store the secret lives in. */
  readonly mount: KvMount;
  /** The secret's path in the store, e.g. "app/db". Changing it makes a new secret. */
  readonly path: string;
  /**
   * Environment variable holding the value at deploy time: a JSON object such as
   * `{"password": "..."}`. The value never enters the configuration, the plan or the state.
   * @default - `valueFile` (give exactly one)
   */
  readonly valueEnv?: string;
  /**
   * File holding the value at deploy time (a JSON object), read when deploying; relative paths
   * are resolved against the directory synthesis runs in.
   * @default - `valueEnv` (give exactly one)
   */
  readonly valueFile?: string;
}

/**
 * A secret of a key/value store (`<mount>/<path>`, or `<mount>/data/<path>` for version 2). Its
 * value comes from an environment variable or a file at deploy time; the stack holds only a
 * SHA-256 of it, computed at synthesis when the value is readable then, so that a new value
 * deploys a new version.
 */
export class KvSecret extends Construct {
  /** The secret's path in its store. */
  public readonly path: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: KvSecretProps) {
    super(scope, id);
    const path = props.path.replace(/^\/+|\/+$/g, '');
    const what = `KvSecret ${path}`;
    if (!path || path.split('/').some((s) => s === '' || s === '.' || s === '..')) throw new Error(`KvSecret path "${props.path}" is invalid: use segments separated by "/", e.g. "app/db"`);
    if ((props.valueEnv === undefined) === (props.valueFile === undefined)) throw new Error(`${what}: give exactly one of valueEnv and valueFile (the value itself never goes into the stack)`);
    envName(`${what} valueEnv`, props.valueEnv);
    const valueFile = props.valueFile === undefined ? undefined : resolve(props.valueFile);
    this.path = path;
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.mount._hangar,
      kind: 'secrets.kv-secret',
      key: `${props.mount.path}:${path}`,
      desired: { valueEnv: props.valueEnv, valueFile, valueHash: synthHash(what, props.valueEnv, valueFile) },
      dependsOn: [props.mount._resource],
    });
  }
}

/** The value's hash when synthesis can read it (checking it is a JSON object); undefined otherwise. */
function synthHash(what: string, env: string | undefined, file: string | undefined): string | undefined {
  const text = env !== undefined ? process.env[env] : file !== undefined && existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  if (text === undefined || text === '') return undefined;
  return kvValueHash(kvValue(text, `${what}: ${env !== undefined ? `the environment variable ${env}` : `the file ${file}`}`));
}

/** Types of transit keys. */
export enum TransitKeyType {
  AES128_GCM96 = 'aes128-gcm96',
  AES256_GCM96 = 'aes256-gcm96',
  CHACHA20_POLY1305 = 'chacha20-poly1305',
  ED25519 = 'ed25519',
  ECDSA_P256 = 'ecdsa-p256',
  ECDSA_P384 = 'ecdsa-p384',
  ECDSA_P521 = 'ecdsa-p521',
  RSA_2048 = 'rsa-2048',
  RSA_3072 = 'rsa-3072',
  RSA_4096 = 'rsa-4096',
  HMAC = 'hmac',
}

export interface TransitKeyProps {
  /**
   * The `transit` mount, when the stack declares it (the key is created after it).
   * @default - the mount at `path`
   */
  readonly mount?: SecretsMount;
  /**
   * Path of the transit engine when `mount` is not given.
   * @default "transit"
   */
  readonly path?: string;
  /** The key's name. Changing it makes a new key. */
  readonly name: string;
  /**
   * The key type; it cannot change once the key exists.
   * @default TransitKeyType.AES256_GCM96
   */
  readonly type?: TransitKeyType;
  /**
   * Derive a key per `context` (aes and chacha20 types only); cannot change once the key exists.
   * @default false
   */
  readonly derived?: boolean;
  /**
   * Allow exporting the key; cannot be turned off again.
   * @default false
   */
  readonly exportable?: boolean;
  /**
   * Allow backups that hold the key in plaintext; cannot be turned off again.
   * @default false
   */
  readonly allowPlaintextBackup?: boolean;
  /**
   * Allow deleting the key through the API. Removing the construct deletes the key regardless.
   * @default false
   */
  readonly deletionAllowed?: boolean;
  /**
   * Oldest key version that may decrypt.
   * @default 1
   */
  readonly minDecryptionVersion?: number;
  /**
   * Key version that encrypts; 0 is the latest.
   * @default 0
   */
  readonly minEncryptionVersion?: number;
  /**
   * Rotate automatically this often: a duration of at least "1h", or "0" for never.
   * @default - never
   */
  readonly autoRotatePeriod?: string;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

/** A named key of a transit engine (`<mount>/keys/<name>` and its `config`). */
export class TransitKey extends Construct {
  public readonly name: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: TransitKeyProps) {
    super(scope, id);
    objectName('TransitKey', props.name);
    const what = `TransitKey ${props.name}`;
    const type = props.type ?? TransitKeyType.AES256_GCM96;
    if (!Object.values(TransitKeyType).includes(type)) throw new Error(`${what}: type "${type}" is invalid: use a TransitKeyType`);
    if (props.derived && !/^(aes|chacha20)/.test(type)) throw new Error(`${what}: derived keys need an aes or chacha20 type, not ${type}`);
    const minDecryptionVersion = props.minDecryptionVersion ?? 1;
    const minEncryptionVersion = props.minEncryptionVersion ?? 0;
    for (const [name, v, min] of [['minDecryptionVersion', minDecryptionVersion, 1], ['minEncryptionVersion', minEncryptionVersion, 0]] as const) {
      if (!Number.isInteger(v) || v < min) throw new Error(`${what}: ${name} ${v} is invalid: use an integer of at least ${min}`);
    }
    const autoRotatePeriod = durationSeconds(`${what} autoRotatePeriod`, props.autoRotatePeriod);
    if (autoRotatePeriod !== 0 && autoRotatePeriod < 3600) throw new Error(`${what}: autoRotatePeriod "${props.autoRotatePeriod}" is too short: use "0" (never) or at least "1h"`);
    const mount = engineMountPath(what, props.mount, props.path, { type: 'transit', fallback: 'transit' });
    this.name = props.name;
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? Hangar.of(this),
      kind: 'secrets.transit-key',
      key: `${mount}/${props.name}`,
      desired: {
        type,
        derived: props.derived ?? false,
        exportable: props.exportable ?? false,
        allowPlaintextBackup: props.allowPlaintextBackup ?? false,
        deletionAllowed: props.deletionAllowed ?? false,
        minDecryptionVersion,
        minEncryptionVersion,
        autoRotatePeriod,
      },
      dependsOn: props.mount ? [props.mount._resource] : [],
    });
  }
}

/** Types of the tokens a token role creates. */
export enum TokenRoleTokenType {
  /** Service tokens unless the request asks for batch. */
  DEFAULT_SERVICE = 'default-service',
  /** Batch tokens unless the request asks for service. */
  DEFAULT_BATCH = 'default-batch',
  SERVICE = 'service',
  BATCH = 'batch',
}

export interface TokenRoleProps {
  /** The role name (`auth/token/roles/<name>`). Changing it makes a new role. */
  readonly name: string;
  /**
   * Policies its tokens may have (and get when none is asked).
   * @default - any subset of the creating token's policies
   */
  readonly allowedPolicies?: string[];
  /**
   * Policies its tokens may never have.
   * @default - none
   */
  readonly disallowedPolicies?: string[];
  /**
   * Globs ("app-*") of policies its tokens may have.
   * @default - none
   */
  readonly allowedPoliciesGlob?: string[];
  /**
   * Globs of policies its tokens may never have.
   * @default - none
   */
  readonly disallowedPoliciesGlob?: string[];
  /**
   * Its tokens are orphans (not revoked with their creator).
   * @default false
   */
  readonly orphan?: boolean;
  /**
   * Its tokens may be renewed.
   * @default true
   */
  readonly renewable?: boolean;
  /**
   * Suffix of its tokens' path (`auth/token/create/<name>/<suffix>`), for revoke-prefix.
   * @default - none
   */
  readonly pathSuffix?: string;
  /**
   * Entity aliases (or globs) a creation may name.
   * @default - none
   */
  readonly allowedEntityAliases?: string[];
  /**
   * Its tokens are periodic with this period: seconds or a duration ("24h").
   * @default - not periodic
   */
  readonly tokenPeriod?: string;
  /**
   * Hard limit of its tokens' lifetime: seconds or a duration.
   * @default - none
   */
  readonly tokenExplicitMaxTtl?: string;
  /**
   * The type of its tokens.
   * @default TokenRoleTokenType.DEFAULT_SERVICE
   */
  readonly tokenType?: TokenRoleTokenType;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

/** A token role of the token store (`auth/token/roles/<name>`); tokens are created with `auth/token/create/<name>`. */
export class TokenRole extends Construct {
  public readonly name: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: TokenRoleProps) {
    super(scope, id);
    objectName('TokenRole', props.name);
    const what = `TokenRole ${props.name}`;
    const suffix = props.pathSuffix ?? '';
    if (suffix && (!/^\w(?:[\w./-]*\w)?$/.test(suffix) || suffix.includes('..'))) {
      throw new Error(`${what}: pathSuffix "${suffix}" is invalid: use letters, digits, "_", "-", "." and "/", starting and ending with a letter or digit`);
    }
    const tokenType = props.tokenType ?? TokenRoleTokenType.DEFAULT_SERVICE;
    const orphan = props.orphan ?? false;
    const renewable = props.renewable ?? true;
    const tokenPeriod = durationSeconds(`${what} tokenPeriod`, props.tokenPeriod);
    const tokenExplicitMaxTtl = durationSeconds(`${what} tokenExplicitMaxTtl`, props.tokenExplicitMaxTtl);
    if (tokenType === TokenRoleTokenType.BATCH && (!orphan || renewable || tokenPeriod || tokenExplicitMaxTtl)) {
      throw new Error(`${what}: batch tokens must be orphans, not renewable, not periodic and without an explicit max TTL: set orphan: true, renewable: false`);
    }
    const names = (list: string[] | undefined) => [...new Set((list ?? []).map((p) => p.trim().toLowerCase()).filter((p) => p))].sort();
    this.name = props.name;
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? Hangar.of(this),
      kind: 'secrets.token-role',
      key: props.name,
      desired: {
        allowedPolicies: names(props.allowedPolicies),
        disallowedPolicies: names(props.disallowedPolicies),
        allowedPoliciesGlob: names(props.allowedPoliciesGlob),
        disallowedPoliciesGlob: names(props.disallowedPoliciesGlob),
        orphan,
        renewable,
        pathSuffix: suffix,
        allowedEntityAliases: names(props.allowedEntityAliases),
        tokenPeriod,
        tokenExplicitMaxTtl,
        tokenType,
      },
    });
  }
}
