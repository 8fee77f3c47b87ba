import { randomUUID } from 'node:crypto';
import type { Db } from '../../storage';

/** The stamp of the mount table and the policies, in `secrets_stamps`. */
const CONFIG = 'config';

/**
 * The change stamp of the secrets configuration every request reads (the mount table and the ACL
 * policies): a random value, replaced in the writer's own transaction by every write of a mount or
 * a policy. Readers keep what they derived from those tables (opened mounts, compiled ACLs) under
 * the stamp they read, and read one small row per request instead of the sealed tables.
 *
 * A write by another server or process shows in the stamp as soon as it commits (the stamp is read
 * in the reader's transaction, as the rows were), and a rolled-back write leaves behind a stamp
 * that never comes back (random, not a counter), so nothing derived from uncommitted rows is served.
 */
export async function configStamp(db: Db): Promise<string> {
  let stamp = READ.get(db);
  if (stamp === undefined) {
    stamp = (await db.get<{ value: string }>('SELECT value FROM secrets_stamps WHERE name = ?', [CONFIG]))?.value ?? '';
    READ.set(db, stamp);
  }
  return stamp;
}

/** Marks the mount table or the policies changed, in the writer's transaction. */
export async function bumpConfigStamp(db: Db): Promise<void> {
  const stamp = randomUUID();
  await db.run('INSERT INTO secrets_stamps (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value', [CONFIG, stamp]);
  READ.set(db, stamp);
}

/** The stamp each transaction (its Db object) read or wrote: a request resolves its mount and its ACL with one read. */
const READ = new WeakMap<Db, string>();
