import { forbidden, HangarError, notFound } from '../http/errors';
import { Db } from '../storage';
import { isMember, Owner } from './owners';

/** Who is calling the registry: the administrator (root token, local CLI) or a user with a token. */
export type RegistryActor = { readonly kind: 'admin' } | { readonly kind: 'user'; readonly user: Owner; readonly tokenId?: string };

/** 'public': anyone, a token is optional; 'user': a valid token; 'admin': the root token. */
export type RegistryPermission = 'public' | 'user' | 'admin';

/** May the actor create and change things owned by `owner`? A user writes their own and their organizations'. */
export async function canWrite(db: Db, actor: RegistryActor | undefined, owner: Owner): Promise<boolean> {
  if (!actor) return false;
  if (actor.kind === 'admin') return true;
  if (actor.user.id === owner.id) return true;
  return owner.kind === 'organization' && isMember(db, owner.id, actor.user.id);
}

/** May the actor see a thing of `owner` with this privacy? Private things are seen only by writers. */
export async function canRead(db: Db, actor: RegistryActor | undefined, owner: Owner, isPrivate: boolean): Promise<boolean> {
  return !isPrivate || canWrite(db, actor, owner);
}

/**
 * For a change to something the actor found: 404 when it may not even see it (private things stay
 * invisible), 403 when it sees it but may not change it.
 */
export async function requireWrite(db: Db, actor: RegistryActor | undefined, owner: Owner, isPrivate: boolean): Promise<void> {
  if (!(await canWrite(db, actor, owner))) {
    if (isPrivate) throw notFound();
    throw forbidden(`You do not have permission to change resources owned by ${owner.username}`);
  }
  if (actor?.kind !== 'admin') requireInGoodStanding(owner);
}

/** 402 for an owner an administrator marked delinquent on billing: its boxes are read-only (public) or locked (private). */
export function requireInGoodStanding(owner: Owner): void {
  if (owner.delinquent === 1) {
    throw new HangarError(402, [`The account ${owner.username} is delinquent on billing; its boxes cannot be changed or privately downloaded`]);
  }
}
