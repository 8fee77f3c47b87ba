import { z } from 'zod';
import { fromEnv } from './secrets-kinds';
import { named, pathKind } from './secrets-path-kind';

/**
 * The database engine's managed objects: connections, dynamic and static roles (keyed
 * `<mount>/<name>`) and password policies (keyed by name). The connection's password never travels
 * in a payload: the payload names an environment variable, read at deploy time.
 */

const ConnectionDesired = z.object({
  pluginName: z.string().min(1),
  connectionUrl: z.string().min(1),
  username: z.string().default(''),
  passwordEnv: z.string().default(''),
  allowedRoles: z.array(z.string()).default([]),
  verifyConnection: z.boolean().default(true),
  rootRotationStatements: z.array(z.string()).default([]),
  passwordPolicy: z.string().default(''),
  maxOpenConnections: z.number().int().default(4),
  maxIdleConnections: z.number().int().default(4),
  maxConnectionLifetime: z.number().int().min(0).default(0),
  usernameTemplate: z.string().default(''),
});
type ConnectionDesired = z.infer<typeof ConnectionDesired>;

/**
 * A connection. Its password is sent when the connection is created; later updates leave it as
 * stored, so that a `rotate-root` (a password only Hangar knows) survives the next deploy.
 */
export const secretsDatabaseConnectionKind = pathKind<ConnectionDesired>({
  kind: 'secrets.database-connection',
  deleteOrder: 20,
  desired: ConnectionDesired,
  path: named('config'),
  fromApi: (d, desired) => ({
    pluginName: d.plugin_name,
    connectionUrl: d.connection_details?.connection_url ?? '',
    username: d.connection_details?.username ?? '',
    passwordEnv: desired?.passwordEnv ?? '',
    allowedRoles: d.allowed_roles ?? [],
    verifyConnection: d.verify_connection ?? true,
    rootRotationStatements: d.root_credentials_rotate_statements ?? [],
    passwordPolicy: d.password_policy ?? '',
    maxOpenConnections: Number(d.connection_details?.max_open_connections ?? 4),
    maxIdleConnections: Number(d.connection_details?.max_idle_connections ?? 4),
    maxConnectionLifetime: Number(String(d.connection_details?.max_connection_lifetime ?? '0').replace(/s$/, '')),
    usernameTemplate: d.connection_details?.username_template ?? '',
  }),
  toApi: (d, created) => ({
    plugin_name: d.pluginName,
    connection_url: d.connectionUrl,
    username: d.username,
    ...(created && d.passwordEnv ? { password: fromEnv(d.passwordEnv, 'passwordEnv') } : {}),
    allowed_roles: d.allowedRoles,
    verify_connection: d.verifyConnection,
    root_rotation_statements: d.rootRotationStatements,
    password_policy: d.passwordPolicy,
    max_open_connections: d.maxOpenConnections,
    max_idle_connections: d.maxIdleConnections,
    max_connection_lifetime: d.maxConnectionLifetime,
    username_template: d.usernameTemplate,
  }),
});

const statements = z.array(z.string()).default([]);
const RoleDesired = z.object({
  dbName: z.string().min(1),
  defaultTtl: z.number().int().min(0).default(0),
  maxTtl: z.number().int().min(0).default(0),
  creationStatements: z.array(z.string()).min(1),
  revocationStatements: statements,
  rollbackStatements: statements,
  renewStatements: statements,
});
type RoleDesired = z.infer<typeof RoleDesired>;

export const secretsDatabaseRoleKind = pathKind<RoleDesired>({
  kind: 'secrets.database-role',
  deleteOrder: 30,
  desired: RoleDesired,
  path: named('roles'),
  fromApi: (d) => ({
    dbName: d.db_name,
    defaultTtl: Number(d.default_ttl ?? 0),
    maxTtl: Number(d.max_ttl ?? 0),
    creationStatements: d.creation_statements ?? [],
    revocationStatements: d.revocation_statements ?? [],
    rollbackStatements: d.rollback_statements ?? [],
    renewStatements: d.renew_statements ?? [],
  }),
  toApi: (d) => ({
    db_name: d.dbName,
    default_ttl: d.defaultTtl,
    max_ttl: d.maxTtl,
    creation_statements: d.creationStatements,
    revocation_statements: d.revocationStatements,
    rollback_statements: d.rollbackStatements,
    renew_statements: d.renewStatements,
  }),
});

const StaticRoleDesired = z.object({
  dbName: z.string().min(1),
  username: z.string().min(1),
  rotationPeriod: z.number().int().min(5),
  rotationStatements: statements,
});
type StaticRoleDesired = z.infer<typeof StaticRoleDesired>;

export const secretsDatabaseStaticRoleKind = pathKind<StaticRoleDesired>({
  kind: 'secrets.database-static-role',
  deleteOrder: 30,
  desired: StaticRoleDesired,
  path: named('static-roles'),
  fromApi: (d) => ({
    dbName: d.db_name,
    username: d.username,
    rotationPeriod: Number(d.rotation_period),
    rotationStatements: d.rotation_statements ?? [],
  }),
  toApi: (d) => ({ db_name: d.dbName, username: d.username, rotation_period: d.rotationPeriod, rotation_statements: d.rotationStatements }),
  // The API cannot change a static role's user: another user is another role.
  replace: (desired, actual) => desired.username !== actual.username,
});

const PasswordPolicyDesired = z.object({ policy: z.string().min(1) });

export const secretsPasswordPolicyKind = pathKind<z.infer<typeof PasswordPolicyDesired>>({
  kind: 'secrets.password-policy',
  deleteOrder: 10,
  desired: PasswordPolicyDesired,
  path: (name) => `sys/policies/password/${name}`,
  fromApi: (d) => ({ policy: d.policy }),
  toApi: (d) => ({ policy: d.policy }),
});

export const SECRETS_DATABASE_KINDS = [
  secretsDatabaseConnectionKind,
  secretsDatabaseRoleKind,
  secretsDatabaseStaticRoleKind,
  secretsPasswordPolicyKind,
] as const;
