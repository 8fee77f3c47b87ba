import { Construct } from 'constructs';
import { durationSeconds, mountPath } from './common';
import { CustomResource } from '../custom-resource';
import { Hangar } from '../hangar';

export interface MountOptions {
  /**
   * Human-friendly description.
   * @default ""
   */
  readonly description?: string;
  /**
   * Default lease TTL: seconds ("3600") or a duration ("1h").
   * @default - the system default (768h)
   */
  readonly defaultLeaseTtl?: string;
  /**
   * Maximum lease TTL: seconds or a duration.
   * @default - the system maximum (768h)
   */
  readonly maxLeaseTtl?: string;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

export interface SecretsMountProps extends MountOptions {
  /** Where the engine is mounted, e.g. "pki" or "team/database". Changing it makes a new mount. */
  readonly path: string;
  /** The engine type: "pki", "ssh", "database", "transform", "ad", "rabbitmq". */
  readonly type: string;
}

function mountDesired(props: MountOptions & { type: string }, what: string): Record<string, unknown> {
  const defaultLeaseTtl = durationSeconds(`${what} defaultLeaseTtl`, props.defaultLeaseTtl);
  const maxLeaseTtl = durationSeconds(`${what} maxLeaseTtl`, props.maxLeaseTtl);
  if (maxLeaseTtl && defaultLeaseTtl > maxLeaseTtl) {
    throw new Error(`${what} defaultLeaseTtl (${defaultLeaseTtl}s) is longer than maxLeaseTtl (${maxLeaseTtl}s); shorten it or raise maxLeaseTtl`);
  }
  return { type: props.type, description: props.description ?? '', defaultLeaseTtl, maxLeaseTtl };
}

/** A secrets engine mounted in the Hangar secrets service (`sys/mounts/<path>`). */
export class SecretsMount extends Construct {
  /** The mount path, without slashes. */
  public readonly path: string;
  public readonly type: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: SecretsMountProps) {
    super(scope, id);
    this.path = mountPath('SecretsMount path', props.path);
    if (this.path === 'sys' || this.path.startsWith('auth/') || this.path === 'auth') {
      throw new Error(`SecretsMount path "${props.path}" is reserved; choose another, e.g. "team/${this.path}"`);
    }
    if (!/^[a-z][a-z0-9_-]*$/.test(props.type)) throw new Error(`SecretsMount type "${props.type}" is invalid: use an engine type such as "pki"`);
    this.type = props.type;
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? Hangar.of(this),
      kind: 'secrets.mount',
      key: this.path,
      desired: mountDesired(props, 'SecretsMount'),
    });
  }
}

/** Types of login methods. */
export enum AuthMethodType {
  /** JWT and OIDC login. */
  JWT = 'jwt',
  /** The same login method under its other name. */
  OIDC = 'oidc',
}

export interface AuthMountProps extends MountOptions {
  /** Where the method is mounted, under `auth/`: "jwt" serves `auth/jwt/`. */
  readonly path: string;
  /**
   * The login method.
   * @default AuthMethodType.JWT
   */
  readonly type?: AuthMethodType;
}

/** A login method mounted in the Hangar secrets service (`sys/auth/<path>`). */
export class AuthMount extends Construct {
  /** The mount path under `auth/`, without slashes. */
  public readonly path: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: AuthMountProps) {
    super(scope, id);
    this.path = mountPath('AuthMount path', props.path);
    if (this.path === 'token') throw new Error('AuthMount path "token" is the built-in token store; choose another, e.g. "oidc"');
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? Hangar.of(this),
      kind: 'secrets.auth',
      key: this.path,
      desired: mountDesired({ ...props, type: props.type ?? AuthMethodType.JWT }, 'AuthMount'),
    });
  }
}
