import { randomUUID } from 'node:crypto';
import { readConnection, readLease } from './config';
import { ManagementClient } from './management';
import { readRole, roleName } from './roles';
import { HangarError } from '../../../http/errors';
import { badInput } from '../../core/request';
import { EngineContext, EngineRoute, LeaseRecord, SecretsRequest, SecretsResponse } from '../../core/types';
import { PasswordPolicy, passwordFor } from '../../system/password-policy';
import { renderUsername } from '../database/template';

/** The public service's default password: 36 alphanumeric characters. */
const DEFAULT_POLICY: PasswordPolicy = {
  length: 36,
  rules: [{ charset: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', minChars: 0 }],
};

/** What the lease keeps (sealed) to revoke the user later. */
interface CredsInternal {
  readonly username: string;
}

/** The role, the connection, the lease settings and a new password, read in one transaction. */
function prepare(req: SecretsRequest, name: string) {
  return req.core.context(req.mount).tx(async (store, db) => {
    const role = await readRole(store, name);
    if (!role) throw badInput(`unknown role: ${name}`);
    const conn = await readConnection(store);
    if (!conn) throw badInput('the connection is not configured: write config/connection first');
    let password: string;
    try {
      password = await passwordFor(req.core, db, conn.password_policy || undefined, DEFAULT_POLICY);
    } catch (err) {
      throw badInput(`password_policy: ${(err as Error).message}`);
    }
    return { role, conn, lease: await readLease(store), password };
  });
}

/**
 * `creds/:name`: a new broker user with the role's tags, then its vhost and topic permissions.
 * If a permission cannot be set the user is deleted again, so no half-made user stays behind.
 * The broker is called outside any transaction; the lease is registered after it succeeded.
 */
async function issue(req: SecretsRequest): Promise<SecretsResponse> {
  const name = roleName(req);
  const { role, conn, lease, password } = await prepare(req, name);
  // The connection's username_template (Vault's fields: DisplayName, RoleName), else the public
  // service's default: the token's display name and a UUID.
  const username = conn.username_template
    ? renderUsername(conn.username_template, req, name)
    : `${req.caller?.entry.displayName || 'token'}-${randomUUID()}`;
  const client = new ManagementClient(conn);
  try {
    await client.putUser(username, password, role.tags);
  } catch (err) {
    throw new HangarError(502, [`failed to create a new user with the generated credentials: ${(err as Error).message}`]);
  }
  try {
    for (const [vhost, p] of Object.entries(role.vhosts ?? {})) await client.putPermissions(vhost, username, p);
    for (const [vhost, exchanges] of Object.entries(role.vhost_topics ?? {})) {
      for (const [exchange, p] of Object.entries(exchanges)) await client.putTopicPermissions(vhost, username, exchange, p);
    }
  } catch (err) {
    await client.deleteUser(username).catch((e: Error) => req.engine.logger.warn({ user: username, error: e.message }, 'could not delete a half-made broker user'));
    throw new HangarError(502, [`error setting the permissions of the new user: ${(err as Error).message}`]);
  }
  const internal: CredsInternal = { username };
  return { data: { username, password }, lease: { ttl: lease?.ttl ?? 0, maxTtl: lease?.max_ttl ?? 0, renewable: true, internal } };
}

export const credsRoutes: EngineRoute[] = [{ pattern: 'creds/:name', ownTransactions: ['read'], read: issue }];

/** Lease expiry or revocation (also through the token): the user is deleted from the broker. */
export async function revokeCreds(lease: LeaseRecord, ctx: EngineContext): Promise<void> {
  const { username } = lease.internal as CredsInternal;
  const conn = await ctx.tx((store) => readConnection(store));
  if (!conn) throw new Error('the connection is not configured: cannot delete the broker user');
  await new ManagementClient(conn).deleteUser(username);
}
