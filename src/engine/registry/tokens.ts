import { randomUUID } from 'node:crypto';
import { newToken, sha256Hex } from '../crypto';
import { Db } from '../storage';
import { findOwnerById, Owner } from './owners';

export interface TokenRecord {
  readonly description: string;
  readonly token?: string;
  readonly token_hash: string;
  readonly created_at: string;
}

/** Issues a token for a user; only its SHA-256 is stored, the value is returned once. */
export async function issueToken(db: Db, user: Owner, description: string, now: number): Promise<TokenRecord> {
  const token = newToken('hgr.');
  const hash = sha256Hex(token);
  await db.run('INSERT INTO registry_tokens (id, token_hash, user_id, description, created_at) VALUES (?, ?, ?, ?, ?)', [
    randomUUID(),
    hash,
    user.id,
    description,
    now,
  ]);
  return { description, token, token_hash: hash, created_at: new Date(now).toISOString() };
}

export async function findTokenUser(db: Db, token: string): Promise<{ user: Owner; tokenId: string } | undefined> {
  const row = await db.get<{ id: string; user_id: string }>('SELECT id, user_id FROM registry_tokens WHERE token_hash = ?', [
    sha256Hex(token),
  ]);
  if (!row) return undefined;
  const user = await findOwnerById(db, row.user_id);
  return user ? { user, tokenId: row.id } : undefined;
}

export async function deleteToken(db: Db, tokenId: string): Promise<void> {
  await db.run('DELETE FROM registry_tokens WHERE id = ?', [tokenId]);
}
