import { Construct } from 'constructs';
import { engineMountPath, envName, httpUrl, objectName, ttlWithMax } from './common';
import { SecretsMount } from './mounts';
import { CustomResource } from '../custom-resource';
import { Hangar } from '../hangar';


export interface RabbitmqSecretBackendProps {
  /**
   * The `rabbitmq` mount to configure; the backend is configured after it exists.
   * @default - the mount at `path`
   */
  readonly mount?: SecretsMount;
  /**
   * Path of the engine when `mount` is not given.
   * @default "rabbitmq"
   */
  readonly path?: string;
  /** The broker's management API, e.g. "http://rabbit.internal:15672". */
  readonly connectionUri: string;
  /** A management user with the `administrator` tag, which creates and deletes the issued users. */
  readonly username: string;
  /**
   * Environment variable holding that user's password at deploy time; the password never enters
   * the configuration, the plan or the state.
   */
  readonly passwordEnv: string;
  /**
   * Check the address and credentials with a real call to the management API when deploying.
   * @default true
   */
  readonly verifyConnection?: boolean;
  /**
   * Name of a password policy (`sys/policies/password/<name>`) that issued passwords follow.
   * @default - 36 random alphanumeric characters
   */
  readonly passwordPolicy?: string;
  /**
   * Lease TTL of issued credentials: seconds ("3600") or a duration ("1h").
   * @default - the mount's default lease TTL
   */
  readonly leaseTtl?: string;
  /**
   * Maximum lease TTL of issued credentials, with renewals.
   * @default - the mount's maximum lease TTL
   */
  readonly leaseMaxTtl?: string;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

/** The connection and lease settings of a message broker engine (`<path>/config/connection`, `config/lease`). */
export class RabbitmqSecretBackend extends Construct {
  /** The mount path. */
  public readonly path: string;
  /** @internal */
  public readonly _resource: CustomResource;
  /** @internal the connection its roles use too */
  public readonly _hangar: Hangar;

  constructor(scope: Construct, id: string, props: RabbitmqSecretBackendProps) {
    super(scope, id);
    this._hangar = props.hangar ?? Hangar.of(this);
    this.path = engineMountPath('RabbitmqSecretBackend', props.mount, props.path, { type: 'rabbitmq', fallback: 'rabbitmq' });
    const what = `RabbitmqSecretBackend ${this.path}`;
    if (!props.username) throw new Error(`${what}: username is empty; give the management administrator's name`);
    const [ttl, maxTtl] = ttlWithMax(what, ['leaseTtl', 'leaseMaxTtl'], props.leaseTtl, props.leaseMaxTtl);
    const desired = {
      connectionUri: httpUrl(`${what} connectionUri`, props.connectionUri),
      username: props.username,
      passwordEnv: envName(`${what} passwordEnv`, props.passwordEnv),
      verifyConnection: props.verifyConnection ?? true,
      passwordPolicy: props.passwordPolicy ?? '',
      leaseTtl: ttl,
      leaseMaxTtl: maxTtl,
    };
    this._resource = new CustomResource(this, 'Resource', {
      hangar: this._hangar,
      kind: 'secrets.rabbitmq-config',
      key: this.path,
      desired,
      dependsOn: props.mount ? [props.mount._resource] : [],
    });
  }
}

/** A user's permissions in one virtual host: regular expressions on resource names ("" grants nothing). */
export interface RabbitmqVhostPermission {
  /** The virtual host, e.g. "/" (the default one) or "orders". */
  readonly vhost: string;
  /**
   * Resources the user may declare and delete.
   * @default "" (none)
   */
  readonly configure?: string;
  /**
   * Resources the user may publish to.
   * @default "" (none)
   */
  readonly write?: string;
  /**
   * Resources the user may consume from.
   * @default "" (none)
   */
  readonly read?: string;
}

/** A user's topic permissions on one exchange of a virtual host: regular expressions on routing keys. */
export interface RabbitmqTopicPermission {
  /** The virtual host. */
  readonly vhost: string;
  /** The topic exchange, e.g. "amq.topic". */
  readonly exchange: string;
  /**
   * Routing keys the user may publish with.
   * @default "" (none)
   */
  readonly write?: string;
  /**
   * Routing keys the user may bind with.
   * @default "" (none)
   */
  readonly read?: string;
}

export interface RabbitmqRoleProps {
  /** The engine the role belongs to. */
  readonly backend: RabbitmqSecretBackend;
  /** The role name. Changing it makes a new role. */
  readonly name: string;
  /**
   * User tags of the issued users, e.g. ["management"].
   * @default - none (then `vhosts` must grant something)
   */
  readonly tags?: string[];
  /**
   * Permissions in virtual hosts, one entry per virtual host.
   * @default - none (then `tags` must be given)
   */
  readonly vhosts?: RabbitmqVhostPermission[];
  /**
   * Topic permissions, one entry per virtual host and exchange (RabbitMQ 3.7 or later).
   * @default - none
   */
  readonly vhostTopics?: RabbitmqTopicPermission[];
}

/** A role of a message broker engine (`<path>/roles/<name>`): what the users issued from it may do. */
export class RabbitmqRole extends Construct {
  /** The role name. */
  public readonly name: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: RabbitmqRoleProps) {
    super(scope, id);
    const what = `RabbitmqRole ${props.name}`;
    objectName('RabbitmqRole', props.name);
    for (const tag of props.tags ?? []) {
      if (!/^[^,\s]+$/.test(tag)) throw new Error(`${what}: tag "${tag}" is invalid: one tag per entry, without commas or spaces, e.g. ["management"]`);
    }
    const vhosts: Record<string, { configure: string; write: string; read: string }> = {};
    for (const v of props.vhosts ?? []) {
      if (v.vhost in vhosts) throw new Error(`${what}: vhost "${v.vhost}" is listed twice; give one entry per virtual host`);
      vhosts[v.vhost] = { configure: v.configure ?? '', write: v.write ?? '', read: v.read ?? '' };
    }
    const topics: Record<string, Record<string, { write: string; read: string }>> = {};
    for (const t of props.vhostTopics ?? []) {
      topics[t.vhost] ??= {};
      if (t.exchange in topics[t.vhost]) throw new Error(`${what}: exchange "${t.exchange}" of vhost "${t.vhost}" is listed twice in vhostTopics`);
      topics[t.vhost][t.exchange] = { write: t.write ?? '', read: t.read ?? '' };
    }
    const tags = (props.tags ?? []).join(',');
    if (!tags && Object.keys(vhosts).length === 0) throw new Error(`${what}: give tags or vhosts (or both): a user with neither can do nothing`);
    this.name = props.name;
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.backend._hangar,
      kind: 'secrets.rabbitmq-role',
      key: `${props.backend.path}/${props.name}`,
      desired: { tags, vhosts: Object.keys(vhosts).length ? vhosts : null, vhostTopics: Object.keys(topics).length ? topics : null },
      dependsOn: [props.backend._resource],
    });
  }
}
