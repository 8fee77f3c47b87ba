import { randomInt } from 'node:crypto';
import { recordSecret } from '../../../leak-watch';
import type { MountStore } from '../../core/store';
import type { EngineContext } from '../../core/types';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** Where a formatter puts the random part. */
export const PLACEHOLDER = '{{PASSWORD}}';
/** The public service's fixed prefix: one of each class a directory's complexity rule asks for. */
export const COMPLEXITY_PREFIX = '?@09AZ';

function random(n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

/** A new password of `length` characters: the formatter's text around a random part, else the prefix and a random part. */
export function generatePassword(config: { readonly length: number; readonly formatter: string }): string {
  const password = config.formatter
    ? config.formatter.replace(PLACEHOLDER, random(config.length - (config.formatter.length - PLACEHOLDER.length)))
    : COMPLEXITY_PREFIX + random(config.length - COMPLEXITY_PREFIX.length);
  recordSecret('password', password);
  return password;
}

/** A rotation under way: the password being set in the directory, and since when (epoch ms). */
export interface Pending {
  readonly password: string;
  readonly startedAt: number;
}

/** What `rotate` needs of the stored entry it rotates (a role's credentials, a library account, the config). */
export interface Rotatable {
  readonly pending?: Pending;
}

/**
 * Sets a new password in the directory in two phases around the (slow, external) directory call,
 * so no transaction stays open during it and a crash loses nothing silently:
 * 1. in a transaction, the entry at `key` records the new password as pending (sealed like the
 *    rest); a pending rotation younger than `staleMs` means another one runs: 'busy';
 * 2. `apply` sets the password in the directory;
 * 3. in a transaction, `finish` turns the entry into its rotated form, if it still holds this
 *    pending password (a deletion meanwhile wins). A failure clears the mark and rethrows.
 * A pending mark older than `staleMs` (a crashed server) no longer blocks, and callers treat it as
 * "rotation needed": the directory may hold either password until the next rotation succeeds.
 */
export async function rotate<E extends Rotatable>(args: {
  ctx: Pick<EngineContext, 'tx'>;
  key: string;
  password: string;
  now: () => number;
  staleMs: number;
  /** Checks the entry in phase one: throw to refuse, false when there is nothing to rotate ('gone'). */
  check?: (entry: E) => boolean;
  apply: (password: string) => Promise<void>;
  finish: (entry: E, password: string, at: number) => E;
}): Promise<E | 'busy' | 'gone'> {
  const { ctx, key, password, now } = args;
  const claimed = await ctx.tx(async (store) => {
    await lock(store, key);
    const entry = await store.get<E>(key);
    if (!entry || args.check?.(entry) === false) return 'gone' as const;
    if (entry.pending && now() - entry.pending.startedAt < args.staleMs) return 'busy' as const;
    await store.put(key, { ...entry, pending: { password, startedAt: now() } });
    return 'claimed' as const;
  });
  if (claimed !== 'claimed') return claimed;
  try {
    await args.apply(password);
  } catch (err) {
    await ctx.tx(async (store) => {
      const entry = await store.get<E>(key);
      if (entry?.pending?.password === password) await store.put(key, withoutPending(entry));
    });
    throw err;
  }
  return ctx.tx(async (store) => {
    const entry = await store.get<E>(key);
    if (entry?.pending?.password !== password) return 'gone' as const;
    const done = withoutPending(args.finish(entry, password, now()));
    await store.put(key, done);
    return done;
  });
}

function withoutPending<E extends Rotatable>(entry: E): E {
  const { pending: _p, ...rest } = entry;
  return rest as E;
}

/** Whether a pending mark was left by a rotation that never finished. */
export function stalePending(entry: Rotatable, now: number, staleMs: number): boolean {
  return !!entry.pending && now - entry.pending.startedAt >= staleMs;
}

/**
 * Serialises writers of one object: an upsert of a lock row takes its row lock in PostgreSQL (read
 * committed: what the transaction reads afterwards is the latest committed state); SQLite's
 * transactions are serialised already.
 */
export function lock(store: MountStore, name: string): Promise<void> {
  return store.put(`lock/${name}`, 0);
}
