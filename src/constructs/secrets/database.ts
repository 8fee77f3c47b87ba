import { TerraformStack } from 'cdktf';
import { Construct } from 'constructs';
import { durationSeconds, envName, objectName, ttlWithMax } from './common';
import { MountOptions, SecretsMount } from './mounts';
import { CustomResource } from '../custom-resource';
import { Hangar } from '../hangar';

function checkStatements(what: string, statements: string[] | undefined): string[] {
  const list = statements ?? [];
  if (list.some((s) => s.trim() === '')) throw new Error(`${what}: a statement is empty; remove it or write the SQL`);
  return list;
}

export interface DatabaseSecretsMountProps extends MountOptions {
  /**
   * Where the engine is mounted, e.g. "database" or "team/db". Changing it makes a new mount.
   * @default "database"
   */
  readonly path?: string;
}

/** A database secrets engine (`sys/mounts/<path>` of type "database"). */
export class DatabaseSecretsMount extends SecretsMount {
  constructor(scope: Construct, id: string, props: DatabaseSecretsMountProps = {}) {
    super(scope, id, { ...props, path: props.path ?? 'database', type: 'database' });
  }
}

/** The database plugins of a connection. */
export enum DatabasePluginName {
  /** PostgreSQL (`postgresql-database-plugin`). */
  POSTGRESQL = 'postgresql-database-plugin',
  /** MySQL and MariaDB (`mysql-database-plugin`). */
  MYSQL = 'mysql-database-plugin',
}

export interface DatabaseConnectionProps {
  /** The database mount (a `DatabaseSecretsMount`, or a `SecretsMount` of type "database"). */
  readonly mount: SecretsMount;
  /** The connection name (`<mount>/config/<name>`). Changing it makes a new connection. */
  readonly name: string;
  /** The plugin that speaks to the database. */
  readonly plugin: DatabasePluginName;
  /**
   * Where the database is, with `{{username}}` and `{{password}}` slots, e.g.
   * "postgresql://{{username}}:{{password}}@db.internal:5432/app" or, for MySQL,
   * "{{username}}:{{password}}@tcp(db.internal:3306)/".
   */
  readonly connectionUrl: string;
  /** The administrative user that creates, changes and drops users. */
  readonly username: string;
  /**
   * Environment variable holding that user's password at deploy time; the password never enters
   * the configuration, the plan or the state. It is sent when the connection is created, so a
   * later `rotate-root` (a password only Hangar knows) survives redeploys.
   */
  readonly passwordEnv: string;
  /**
   * Roles that may use this connection; globs allowed, "*" for any.
   * @default - none
   */
  readonly allowedRoles?: string[];
  /**
   * Connect to the database when deploying; a failure fails the deploy and stores nothing.
   * @default true
   */
  readonly verifyConnection?: boolean;
  /**
   * SQL that rotates the administrative user's password (`{{username}}`, `{{password}}`).
   * @default - the plugin's ALTER ROLE / ALTER USER
   */
  readonly rootRotationStatements?: string[];
  /**
   * The password policy of the passwords this connection generates: a policy's name. A
   * `PasswordPolicy` of that name declared earlier in the same stack is deployed first.
   * @default - 20 characters with an uppercase letter, a lowercase letter, a digit and a dash
   */
  readonly passwordPolicy?: string;
  /**
   * Open connections to the database at most.
   * @default 4
   */
  readonly maxOpenConnections?: number;
  /**
   * Idle connections kept open at most.
   * @default - maxOpenConnections
   */
  readonly maxIdleConnections?: number;
  /**
   * How long a connection is reused: seconds ("300") or a duration ("5m").
   * @default - unlimited
   */
  readonly maxConnectionLifetime?: string;
  /**
   * Template of generated usernames, e.g. '{{ printf "app-%s-%s" .RoleName (random 8) }}'.
   * @default - the plugin's ("v-<display name>-<role>-<random>-<time>")
   */
  readonly usernameTemplate?: string;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

/** A connection of a database engine (`<mount>/config/<name>`). */
export class DatabaseConnection extends Construct {
  /** The connection name. */
  public readonly name: string;
  /** The mount path. */
  public readonly mountPath: string;
  /** @internal */
  public readonly _resource: CustomResource;
  /** @internal */
  public readonly _hangar: Hangar;

  constructor(scope: Construct, id: string, props: DatabaseConnectionProps) {
    super(scope, id);
    const what = `DatabaseConnection ${props.name}`;
    this.name = objectName('DatabaseConnection', props.name);
    if (props.mount.type !== 'database') throw new Error(`${what}: mount is a "${props.mount.type}" mount; give a DatabaseSecretsMount`);
    if (!Object.values(DatabasePluginName).includes(props.plugin)) throw new Error(`${what}: plugin "${props.plugin}" is unknown; use DatabasePluginName.POSTGRESQL or MYSQL`);
    if (!props.connectionUrl) throw new Error(`${what}: connectionUrl is empty; e.g. "postgresql://{{username}}:{{password}}@db:5432/app"`);
    if (props.plugin === DatabasePluginName.POSTGRESQL && !/^postgres(ql)?:\/\//.test(props.connectionUrl)) {
      throw new Error(`${what}: connectionUrl "${props.connectionUrl}" is not a postgresql:// URL`);
    }
    if (/:\/\/[^/@{]*:[^/@{][^/@]*@/.test(props.connectionUrl)) {
      throw new Error(`${what}: connectionUrl holds a literal password; write {{password}} and give passwordEnv instead`);
    }
    if (!props.username) throw new Error(`${what}: username is empty; give the administrative database user`);
    const maxOpen = props.maxOpenConnections ?? 4;
    if (!Number.isInteger(maxOpen) || maxOpen < 1) throw new Error(`${what}: maxOpenConnections ${maxOpen} must be a whole number of 1 or more`);
    const maxIdle = props.maxIdleConnections ?? maxOpen;
    if (!Number.isInteger(maxIdle) || maxIdle < 0 || maxIdle > maxOpen) throw new Error(`${what}: maxIdleConnections ${maxIdle} must be between 0 and maxOpenConnections (${maxOpen})`);
    this.mountPath = props.mount.path;
    const policy = props.passwordPolicy
      ? TerraformStack.of(this).node.findAll().find((c): c is PasswordPolicy => c instanceof PasswordPolicy && c.name === props.passwordPolicy)
      : undefined;
    this._hangar = props.hangar ?? Hangar.of(this);
    this._resource = new CustomResource(this, 'Resource', {
      hangar: this._hangar,
      kind: 'secrets.database-connection',
      key: `${this.mountPath}/${this.name}`,
      desired: {
        pluginName: props.plugin,
        connectionUrl: props.connectionUrl,
        username: props.username,
        passwordEnv: envName(`${what} passwordEnv`, props.passwordEnv),
        allowedRoles: props.allowedRoles ?? [],
        verifyConnection: props.verifyConnection ?? true,
        rootRotationStatements: checkStatements(`${what} rootRotationStatements`, props.rootRotationStatements),
        passwordPolicy: props.passwordPolicy ?? '',
        maxOpenConnections: maxOpen,
        maxIdleConnections: maxIdle,
        maxConnectionLifetime: durationSeconds(`${what} maxConnectionLifetime`, props.maxConnectionLifetime),
        usernameTemplate: props.usernameTemplate ?? '',
      },
      dependsOn: [props.mount._resource, ...(policy ? [policy._resource] : [])],
    });
  }
}

export interface DatabaseRoleProps {
  /** The connection the role's users are created through. */
  readonly connection: DatabaseConnection;
  /** The role name (`<mount>/roles/<name>`). Changing it makes a new role. */
  readonly name: string;
  /** SQL that creates a user: `{{name}}`, `{{password}}`, `{{expiration}}`. */
  readonly creationStatements: string[];
  /**
   * SQL that drops a user.
   * @default - the plugin's (PostgreSQL: revoke everything and DROP ROLE; MySQL: DROP USER)
   */
  readonly revocationStatements?: string[];
  /**
   * SQL that undoes a failed creation.
   * @default - none
   */
  readonly rollbackStatements?: string[];
  /**
   * SQL that extends a user on lease renewal.
   * @default - the plugin's (PostgreSQL: ALTER ROLE ... VALID UNTIL)
   */
  readonly renewStatements?: string[];
  /**
   * Lease TTL of issued credentials: seconds ("3600") or a duration ("1h").
   * @default - the mount's default lease TTL
   */
  readonly defaultTtl?: string;
  /**
   * Maximum lease TTL with renewals.
   * @default - the mount's maximum lease TTL
   */
  readonly maxTtl?: string;
}

/** A dynamic role of a database engine (`<mount>/roles/<name>`): leased users on demand. */
export class DatabaseRole extends Construct {
  /** The role name. */
  public readonly name: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: DatabaseRoleProps) {
    super(scope, id);
    const what = `DatabaseRole ${props.name}`;
    this.name = objectName('DatabaseRole', props.name);
    if (!props.creationStatements.length) throw new Error(`${what}: creationStatements is empty; give the SQL that creates the user`);
    const [defaultTtl, maxTtl] = ttlWithMax(what, ['defaultTtl', 'maxTtl'], props.defaultTtl, props.maxTtl);
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.connection._hangar,
      kind: 'secrets.database-role',
      key: `${props.connection.mountPath}/${this.name}`,
      desired: {
        dbName: props.connection.name,
        defaultTtl,
        maxTtl,
        creationStatements: checkStatements(`${what} creationStatements`, props.creationStatements),
        revocationStatements: checkStatements(`${what} revocationStatements`, props.revocationStatements),
        rollbackStatements: checkStatements(`${what} rollbackStatements`, props.rollbackStatements),
        renewStatements: checkStatements(`${what} renewStatements`, props.renewStatements),
      },
      dependsOn: [props.connection._resource],
    });
  }
}

export interface DatabaseStaticRoleProps {
  /** The connection the password is rotated through. */
  readonly connection: DatabaseConnection;
  /** The role name (`<mount>/static-roles/<name>`). Changing it makes a new role. */
  readonly name: string;
  /** The existing database user whose password Hangar rotates. Changing it replaces the role. */
  readonly username: string;
  /** How often the password is rotated: seconds ("86400") or a duration ("24h"); at least 5 seconds. */
  readonly rotationPeriod: string;
  /**
   * SQL that sets the password: `{{name}}`, `{{password}}`.
   * @default - the plugin's ALTER ROLE / ALTER USER
   */
  readonly rotationStatements?: string[];
}

/** A static role of a database engine (`<mount>/static-roles/<name>`): one user, its password rotated. */
export class DatabaseStaticRole extends Construct {
  /** The role name. */
  public readonly name: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: DatabaseStaticRoleProps) {
    super(scope, id);
    const what = `DatabaseStaticRole ${props.name}`;
    this.name = objectName('DatabaseStaticRole', props.name);
    if (!props.username || /['"`\\]/.test(props.username)) throw new Error(`${what}: username "${props.username}" is empty or holds quotes or backslashes`);
    const rotationPeriod = durationSeconds(`${what} rotationPeriod`, props.rotationPeriod);
    if (rotationPeriod < 5) throw new Error(`${what}: rotationPeriod "${props.rotationPeriod}" is shorter than 5 seconds; use e.g. "24h"`);
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.connection._hangar,
      kind: 'secrets.database-static-role',
      key: `${props.connection.mountPath}/${this.name}`,
      desired: {
        dbName: props.connection.name,
        username: props.username,
        rotationPeriod,
        rotationStatements: checkStatements(`${what} rotationStatements`, props.rotationStatements),
      },
      dependsOn: [props.connection._resource],
    });
  }
}

export interface PasswordPolicyProps {
  /** The policy name (`sys/policies/password/<name>`). Changing it makes a new policy. */
  readonly name: string;
  /**
   * The policy in HCL: `length = 20` and `rule "charset" { charset = "abc..." min-chars = 1 }` blocks.
   */
  readonly policy: string;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

/** A password policy of the secrets service (`sys/policies/password/<name>`). */
export class PasswordPolicy extends Construct {
  /** The policy name. */
  public readonly name: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: PasswordPolicyProps) {
    super(scope, id);
    this.name = objectName('PasswordPolicy', props.name);
    if (!/\blength\s*=\s*\d+/.test(props.policy) || !/rule\s*"charset"/.test(props.policy)) {
      throw new Error(`PasswordPolicy ${props.name}: policy needs "length = N" and at least one rule "charset" { charset = "..." } block`);
    }
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? Hangar.of(this),
      kind: 'secrets.password-policy',
      key: this.name,
      desired: { policy: props.policy },
    });
  }
}
