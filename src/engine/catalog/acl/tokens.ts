import { randomUUID } from 'node:crypto';
import { NodeIdentity, ServiceIdentity, sha256, TemplatedPolicy, TokenRow } from './store';
import { sha256Hex } from '../../crypto';
import type { Engine } from '../../engine';
import { recordSecret } from '../../leak-watch';
import { ROOT_TOKEN_SETTING } from '../../root-token';
import type { Barrier } from '../../secrets/core/barrier';
import { secretsCore } from '../../secrets/service';
import { getSetting } from '../../settings';
import type { Db } from '../../storage';
import { UniqueViolation } from '../../storage';
import type { Writes } from '../index-state';
import { actorOf, badRequest, CatalogContext, GLOBAL_MANAGEMENT_ID } from '../route';

/** A stable UUID-shaped id derived from a value (the root token's and the local administrator's accessors). */
export function uuidOf(value: string): string {
  const h = sha256Hex(value);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** The root token's AccessorID, derived from the stored hash of its secret (so reads and lists can show it). */
export function rootAccessorId(secretSha256: string): string {
  // Every request with the root token asks: the last answer is kept (one root token at a time).
  if (lastRootAccessor?.hash !== secretSha256) lastRootAccessor = { hash: secretSha256, accessorId: uuidOf(`accessor:${secretSha256}`) };
  return lastRootAccessor.accessorId;
}
let lastRootAccessor: { readonly hash: string; readonly accessorId: string } | undefined;

/** The root token's AccessorID, or undefined when the data directory has none. */
export async function storedRootAccessor(db: Db): Promise<string | undefined> {
  const hash = await getSetting(db, ROOT_TOKEN_SETTING);
  return hash ? rootAccessorId(hash) : undefined;
}

/**
 * The root token as a token object: Hangar's initial management token. Only the hash of its secret
 * is stored, so its SecretID is shown to itself alone.
 */
export function rootTokenObject(accessorId: string, secret?: string): Record<string, unknown> {
  return {
    AccessorID: accessorId,
    SecretID: secret ?? '<hidden>',
    Description: 'Initial Management Token',
    Policies: [{ ID: GLOBAL_MANAGEMENT_ID, Name: 'global-management' }],
    Local: false,
    CreateTime: new Date(0).toISOString(),
    Hash: '',
    Namespace: 'default',
    CreateIndex: 1,
    ModifyIndex: 1,
  };
}

/**
 * The barrier that seals token secrets (the secrets service's: AES-256-GCM under the key outside
 * the database). The catalog API opens it before a request's transaction begins.
 */
export async function tokenBarrier(engine: Engine): Promise<Barrier> {
  return (await secretsCore(engine)).barrier;
}

const sealedAt = (accessorId: string) => `catalog_acl_tokens:${accessorId}`;

/**
 * The SecretID of a stored token as the caller may see it: the public service shows secrets to
 * callers with acl:write (in the token's namespace); others, and tokens stored before secrets were
 * sealed, get undefined (rendered `<hidden>`).
 */
export async function visibleSecret(ctx: CatalogContext, db: Db, row: TokenRow): Promise<string | undefined> {
  if (!row.secret_sealed || !actorOf(ctx).authz.allowed('acl', 'write', undefined, row.ns)) return undefined;
  return (await tokenBarrier(ctx.engine)).open(db, row.secret_sealed, sealedAt(row.accessor_id));
}

export interface TokenFields {
  readonly accessorId?: string;
  readonly secretId?: string;
  readonly ns: string;
  readonly description: string;
  readonly policyIds: readonly string[];
  readonly roleIds: readonly string[];
  readonly services: readonly ServiceIdentity[];
  readonly nodes: readonly NodeIdentity[];
  readonly templated?: readonly TemplatedPolicy[];
  readonly local: boolean;
  readonly authMethod?: string;
  readonly expirationTime?: number;
  readonly now: number;
}

/**
 * Stores a new token: the SHA-256 of its secret (for lookups) and the secret sealed by the barrier
 * (for acl:write readers). Returns the row and the secret.
 */
export async function insertToken(writes: Writes, barrier: Barrier, fields: TokenFields): Promise<{ row: TokenRow; secret: string }> {
  const index = await writes.next('acl');
  const accessorId = fields.accessorId ?? randomUUID();
  const secret = fields.secretId ?? randomUUID();
  recordSecret('token', secret);
  const row: TokenRow = {
    accessor_id: accessorId,
    secret_hash: sha256(secret),
    ns: fields.ns,
    description: fields.description,
    policies: JSON.stringify(fields.policyIds),
    roles: JSON.stringify(fields.roleIds),
    service_identities: JSON.stringify(fields.services),
    node_identities: JSON.stringify(fields.nodes),
    templated_policies: JSON.stringify(fields.templated ?? []),
    secret_sealed: await barrier.seal(writes.db, secret, sealedAt(accessorId)),
    local: fields.local ? 1 : 0,
    auth_method: fields.authMethod ?? null,
    expiration_time: fields.expirationTime ?? null,
    create_time: fields.now,
    create_index: index,
    modify_index: index,
  };
  try {
    await writes.db.run(
      `INSERT INTO catalog_acl_tokens (accessor_id, secret_hash, ns, description, policies, roles, service_identities,
         node_identities, templated_policies, secret_sealed, local, auth_method, expiration_time, create_time, create_index, modify_index)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.accessor_id, row.secret_hash, row.ns, row.description, row.policies, row.roles, row.service_identities,
        row.node_identities, row.templated_policies, row.secret_sealed, row.local, row.auth_method, row.expiration_time, row.create_time,
        row.create_index, row.modify_index,
      ],
    );
  } catch (err) {
    if (err instanceof UniqueViolation) throw badRequest('Invalid Token: AccessorID or SecretID is already in use');
    throw err;
  }
  return { row, secret };
}

export async function deleteToken(writes: Writes, accessorId: string): Promise<void> {
  await writes.next('acl');
  await writes.db.run('DELETE FROM catalog_acl_tokens WHERE accessor_id = ?', [accessorId]);
}
