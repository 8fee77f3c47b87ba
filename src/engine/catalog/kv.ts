import type { Db } from '../storage';
import type { Writes } from './index-state';
import { jsonInteger } from './route';

export interface KvRow {
  ns: string;
  key: string;
  /** uint64 as decimal text. */
  flags: string;
  value: string | null;
  session: string | null;
  lock_index: number;
  create_index: number;
  modify_index: number;
}

/** An entry as the public service shows it (Value in base64, Session only when locked). */
export function renderKv(row: KvRow): Record<string, unknown> {
  return {
    LockIndex: Number(row.lock_index),
    Key: row.key,
    Flags: jsonInteger(String(row.flags)),
    Value: row.value,
    ...(row.session ? { Session: row.session } : {}),
    Namespace: row.ns,
    CreateIndex: Number(row.create_index),
    ModifyIndex: Number(row.modify_index),
  };
}

export async function getKv(db: Db, ns: string, key: string): Promise<KvRow | undefined> {
  return db.get<KvRow>('SELECT * FROM catalog_kv WHERE ns = ? AND key = ?', [ns, key]);
}

/** Entries under a prefix, sorted bytewise by key (not by the database's collation). */
export async function listKv(db: Db, ns: string, prefix: string): Promise<KvRow[]> {
  const rows = prefix
    ? await db.all<KvRow>('SELECT * FROM catalog_kv WHERE ns = ? AND substr(key, 1, ?) = ?', [ns, prefix.length, prefix])
    : await db.all<KvRow>('SELECT * FROM catalog_kv WHERE ns = ?', [ns]);
  return rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Keys under a prefix; with a separator, keys are cut after its first occurrence past the prefix. */
export function keysOf(rows: readonly KvRow[], prefix: string, separator?: string): string[] {
  const out: string[] = [];
  for (const row of rows) {
    let key = row.key;
    if (separator) {
      const at = key.indexOf(separator, prefix.length);
      if (at >= 0) key = key.slice(0, at + separator.length);
    }
    if (out[out.length - 1] !== key) out.push(key);
  }
  return out;
}

export interface KvWrite {
  readonly ns: string;
  readonly key: string;
  readonly value: string | null;
  /** uint64 as decimal text. */
  readonly flags: string;
  readonly cas?: number;
  readonly acquire?: string;
  readonly release?: string;
}

/**
 * A PUT of the KV store, with the public service's semantics: `cas` (0: only if absent, N: only if
 * ModifyIndex is N), `acquire` (lock for a session unless another holds it or a lock-delay runs;
 * LockIndex counts acquisitions), `release` (only by the holder). False when refused.
 */
export async function putKv(writes: Writes, input: KvWrite, now: number): Promise<boolean> {
  const db = writes.db;
  const existing = await getKv(db, input.ns, input.key);
  if (input.cas !== undefined) {
    if (input.cas === 0 ? existing !== undefined : existing?.modify_index === undefined || Number(existing.modify_index) !== input.cas) return false;
  }
  let session = existing?.session ?? null;
  let lockIndex = Number(existing?.lock_index ?? 0);
  if (input.acquire !== undefined) {
    if (session && session !== input.acquire) return false;
    if (session !== input.acquire) {
      const delay = await db.get<{ until: number }>('SELECT until FROM catalog_kv_lock_delays WHERE ns = ? AND key = ?', [input.ns, input.key]);
      if (delay && Number(delay.until) > now) return false;
      session = input.acquire;
      lockIndex++;
    }
  } else if (input.release !== undefined) {
    if (session !== input.release) return false;
    session = null;
  }
  const index = await writes.next('kvs');
  if (existing) {
    await db.run('UPDATE catalog_kv SET flags = ?, value = ?, session = ?, lock_index = ?, modify_index = ? WHERE ns = ? AND key = ?', [
      input.flags, input.value, session, lockIndex, index, input.ns, input.key,
    ]);
  } else {
    await db.run(
      'INSERT INTO catalog_kv (ns, key, flags, value, session, lock_index, create_index, modify_index) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      [input.ns, input.key, input.flags, input.value, session, lockIndex, index, index],
    );
  }
  return true;
}

/** Deletes a key (or, recursively, a prefix); with `cas`, only the key at that ModifyIndex. */
export async function deleteKv(writes: Writes, ns: string, key: string, options: { recurse?: boolean; cas?: number }): Promise<boolean> {
  const db = writes.db;
  if (options.cas !== undefined) {
    const existing = await getKv(db, ns, key);
    if (!existing) return options.cas === 0;
    if (Number(existing.modify_index) !== options.cas) return false;
  }
  await writes.next('kvs');
  if (options.recurse) {
    if (key) await db.run('DELETE FROM catalog_kv WHERE ns = ? AND substr(key, 1, ?) = ?', [ns, key.length, key]);
    else await db.run('DELETE FROM catalog_kv WHERE ns = ?', [ns]);
  } else {
    await db.run('DELETE FROM catalog_kv WHERE ns = ? AND key = ?', [ns, key]);
  }
  return true;
}
