import { randomUUID } from 'node:crypto';
import { invalid } from '../http/errors';
import { Db, UniqueViolation } from '../storage';

export interface Owner {
  readonly id: string;
  readonly username: string;
  readonly kind: 'user' | 'organization';
  readonly email: string | null;
  readonly phone: string | null;
  readonly password_hash: string | null;
  readonly profile_markdown: string;
  /** 'sms' when two-factor login is on, else null. */
  readonly two_factor_method: string | null;
  /** 1 when the owner is delinquent on billing (an administrator's flag): its resources answer 402. */
  readonly delinquent: number;
  readonly created_at: number;
  readonly updated_at: number;
}

export async function findOwner(db: Db, username: string): Promise<Owner | undefined> {
  return db.get<Owner>('SELECT * FROM registry_owners WHERE username_lower = ?', [username.toLowerCase()]);
}

export async function findOwnerById(db: Db, id: string): Promise<Owner | undefined> {
  return db.get<Owner>('SELECT * FROM registry_owners WHERE id = ?', [id]);
}

/** A user by username or e-mail, as `user.login` allows either. */
export async function findUserByLogin(db: Db, login: string): Promise<Owner | undefined> {
  const lower = login.toLowerCase();
  return db.get<Owner>(
    "SELECT * FROM registry_owners WHERE kind = 'user' AND (username_lower = ? OR email_lower = ?)",
    [lower, lower],
  );
}

export interface NewOwner {
  readonly username: string;
  readonly kind: Owner['kind'];
  readonly email?: string;
  readonly phone?: string;
  readonly passwordHash?: string;
}

export async function createOwner(db: Db, owner: NewOwner, now: number): Promise<Owner> {
  if (await findOwner(db, owner.username)) throw invalid(`username: "${owner.username}" has already been taken`);
  const row: Owner = {
    id: randomUUID(),
    username: owner.username,
    kind: owner.kind,
    email: owner.email ?? null,
    phone: owner.phone ?? null,
    password_hash: owner.passwordHash ?? null,
    profile_markdown: '',
    two_factor_method: null,
    delinquent: 0,
    created_at: now,
    updated_at: now,
  };
  try {
    await db.run(
      `INSERT INTO registry_owners (id, username, username_lower, kind, email, email_lower, phone, password_hash,
         profile_markdown, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [row.id, row.username, row.username.toLowerCase(), row.kind, row.email, row.email?.toLowerCase() ?? null,
        row.phone, row.password_hash, row.profile_markdown, now, now],
    );
  } catch (err) {
    if (err instanceof UniqueViolation) throw invalid('username or email has already been taken');
    throw err;
  }
  return row;
}

export type MemberRole = 'owner' | 'member';

export async function addMember(db: Db, orgId: string, userId: string, role: MemberRole): Promise<void> {
  await db.run(
    `INSERT INTO registry_memberships (org_id, user_id, role) VALUES (?, ?, ?)
     ON CONFLICT (org_id, user_id) DO UPDATE SET role = excluded.role`,
    [orgId, userId, role],
  );
}

export async function isMember(db: Db, orgId: string, userId: string): Promise<boolean> {
  return (await db.get('SELECT 1 AS x FROM registry_memberships WHERE org_id = ? AND user_id = ?', [orgId, userId])) !== undefined;
}

/** Public view of an owner (no e-mail, phone or password hash). */
export function publicOwner(owner: Owner): { username: string; kind: Owner['kind']; created_at: string } {
  return { username: owner.username, kind: owner.kind, created_at: new Date(owner.created_at).toISOString() };
}

export async function memberRole(db: Db, orgId: string, userId: string): Promise<MemberRole | undefined> {
  const row = await db.get<{ role: MemberRole }>('SELECT role FROM registry_memberships WHERE org_id = ? AND user_id = ?', [orgId, userId]);
  return row?.role;
}

export async function removeMember(db: Db, orgId: string, userId: string): Promise<boolean> {
  return (await db.run('DELETE FROM registry_memberships WHERE org_id = ? AND user_id = ?', [orgId, userId])) > 0;
}

export async function membersOf(db: Db, orgId: string): Promise<{ username: string; role: MemberRole }[]> {
  return db.all(
    `SELECT o.username AS username, m.role AS role FROM registry_memberships m JOIN registry_owners o ON o.id = m.user_id
     WHERE m.org_id = ? ORDER BY o.username_lower`,
    [orgId],
  );
}
