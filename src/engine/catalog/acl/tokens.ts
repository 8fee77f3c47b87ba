import { randomUUID } from 'node:crypto';
import { UniqueViolation } from '../../storage';
import type { Writes } from '../index-state';
import { badRequest } from '../route';
import { NodeIdentity, ServiceIdentity, sha256, TokenRow } from './store';

export interface TokenFields {
  readonly accessorId?: string;
  readonly secretId?: string;
  readonly ns: string;
  readonly description: string;
  readonly policyIds: readonly string[];
  readonly roleIds: readonly string[];
  readonly services: readonly ServiceIdentity[];
  readonly nodes: readonly NodeIdentity[];
  readonly local: boolean;
  readonly authMethod?: string;
  readonly expirationTime?: number;
  readonly now: number;
}

/** Stores a new token (only the SHA-256 of its secret); returns the row and the secret. */
export async function insertToken(writes: Writes, fields: TokenFields): Promise<{ row: TokenRow; secret: string }> {
  const index = await writes.next('acl');
  const accessorId = fields.accessorId ?? randomUUID();
  const secret = fields.secretId ?? randomUUID();
  const row: TokenRow = {
    accessor_id: accessorId,
    secret_hash: sha256(secret),
    ns: fields.ns,
    description: fields.description,
    policies: JSON.stringify(fields.policyIds),
    roles: JSON.stringify(fields.roleIds),
    service_identities: JSON.stringify(fields.services),
    node_identities: JSON.stringify(fields.nodes),
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
         node_identities, local, auth_method, expiration_time, create_time, create_index, modify_index)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.accessor_id, row.secret_hash, row.ns, row.description, row.policies, row.roles, row.service_identities,
        row.node_identities, row.local, row.auth_method, row.expiration_time, row.create_time, row.create_index, row.modify_index,
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
