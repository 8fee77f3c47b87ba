import { randomUUID } from 'node:crypto';
import { BoundedMap } from '../bounded-map';
import type { Db } from '../storage';
import type { Writes } from './index-state';
import { badRequest, formatDuration, parseDuration } from './route';

export interface SessionRow {
  id: string;
  ns: string;
  name: string;
  node: string;
  lock_delay: number;
  behavior: string;
  ttl: string;
  node_checks: string;
  service_checks: string | null;
  expires_at: number | null;
  create_index: number;
  modify_index: number;
}

export interface ServiceCheckRef {
  readonly ID: string;
  readonly Namespace?: string;
}

export const SERF_HEALTH = 'serfHealth';
const TTL_MIN_NS = 10e9;
const TTL_MAX_NS = 86_400e9;
const LOCK_DELAY_MAX_NS = 60e9;
/** Below this many nanoseconds a LockDelay number is read as seconds (as the public service does). */
const LOCK_DELAY_SECONDS_BELOW = 1000;

/** LockDelay as a string ("15s") or a number, to nanoseconds; checked to be > 0 and at most 60s. */
export function parseLockDelay(value: string | number): number {
  let ns = typeof value === 'number' ? value : parseDuration(value);
  if (ns === undefined || !Number.isFinite(ns)) throw badRequest(`Invalid LockDelay ${JSON.stringify(value)}: use a duration such as "15s"`);
  if (ns > 0 && ns < LOCK_DELAY_SECONDS_BELOW) ns *= 1e9;
  if (ns <= 0) throw badRequest(`Invalid LockDelay ${JSON.stringify(value)}: must be greater than 0`);
  if (ns > LOCK_DELAY_MAX_NS) throw badRequest(`Invalid LockDelay ${JSON.stringify(value)}: must be at most ${formatDuration(LOCK_DELAY_MAX_NS)}`);
  return Math.round(ns);
}

/** A TTL string, checked to lie between 10s and 86400s; "" (or "0s") means no TTL. */
export function checkTtl(ttl: string): number | undefined {
  if (ttl === '') return undefined;
  const ns = parseDuration(ttl);
  if (ns === undefined) throw badRequest(`Session TTL '${ttl}' invalid: use a duration such as "30s", "10m" or "1h"`);
  if (ns === 0) return undefined;
  if (ns < TTL_MIN_NS || ns > TTL_MAX_NS) {
    throw badRequest(`Invalid Session TTL '${ns}', must be between [${formatDuration(TTL_MIN_NS)}=${formatDuration(TTL_MAX_NS)}]`);
  }
  return ns;
}

/** The IDs of every check a session depends on: its node checks, then its service checks. */
function allCheckIds(nodeChecks: readonly string[], serviceChecks: readonly ServiceCheckRef[] | null): string[] {
  return [...nodeChecks, ...(serviceChecks ?? []).map((c) => c.ID)];
}

function checkIdsOf(row: SessionRow): string[] {
  return allCheckIds(JSON.parse(row.node_checks) as string[], row.service_checks ? (JSON.parse(row.service_checks) as ServiceCheckRef[]) : null);
}

export function renderSession(row: SessionRow): Record<string, unknown> {
  const nodeChecks = JSON.parse(row.node_checks) as string[];
  const serviceChecks = row.service_checks ? (JSON.parse(row.service_checks) as ServiceCheckRef[]) : null;
  const all = allCheckIds(nodeChecks, serviceChecks);
  return {
    ID: row.id,
    Name: row.name,
    Node: row.node,
    LockDelay: Number(row.lock_delay),
    Behavior: row.behavior,
    TTL: row.ttl,
    NodeChecks: nodeChecks,
    ServiceChecks: serviceChecks,
    // The deprecated Checks field is left out when serfHealth is the only check (1.7+).
    ...(all.length > 0 && !(all.length === 1 && all[0] === SERF_HEALTH) ? { Checks: all } : {}),
    Namespace: row.ns,
    CreateIndex: Number(row.create_index),
    ModifyIndex: Number(row.modify_index),
  };
}

export async function getSession(db: Db, id: string): Promise<SessionRow | undefined> {
  return db.get<SessionRow>('SELECT * FROM catalog_sessions WHERE id = ?', [id]);
}

export interface SessionInput {
  readonly ns: string;
  readonly name: string;
  readonly node: string;
  readonly lockDelayNs: number;
  readonly behavior: string;
  readonly ttl: string;
  readonly nodeChecks: readonly string[];
  readonly serviceChecks: readonly ServiceCheckRef[] | null;
}

/**
 * Creates a session on a registered node whose checks exist and are not critical. `registerNode`,
 * when given, registers the node if it is missing (the server's own node, registered on first use).
 */
export async function createSession(writes: Writes, input: SessionInput, now: number, registerNode?: () => Promise<void>): Promise<SessionRow> {
  const db = writes.db;
  const checkIds = allCheckIds(input.nodeChecks, input.serviceChecks);
  let statuses = await checkStatuses(db, input.node, checkIds);
  if (!statuses && registerNode) {
    await registerNode();
    statuses = await checkStatuses(db, input.node, checkIds);
  }
  if (!statuses) throw badRequest(`Missing node registration: node ${JSON.stringify(input.node)} is not registered`);
  for (const id of checkIds) {
    const status = statuses.get(id);
    if (status === undefined) throw badRequest(`Missing check '${id}' registration`);
    if (status === 'critical') throw badRequest(`Check '${id}' is in critical state`);
  }
  const ttlNs = checkTtl(input.ttl);
  const index = await writes.next('sessions');
  const row: SessionRow = {
    id: randomUUID(),
    ns: input.ns,
    name: input.name,
    node: input.node,
    lock_delay: input.lockDelayNs,
    behavior: input.behavior,
    ttl: input.ttl,
    node_checks: JSON.stringify(input.nodeChecks),
    service_checks: input.serviceChecks ? JSON.stringify(input.serviceChecks) : null,
    // 2 TTL, as the public service arms a new session's timer (TTL x its multiplier of 2): a
    // client's renewals within the first TTL then write nothing (renewSession).
    expires_at: ttlNs === undefined ? null : now + 2 * Math.round(ttlNs / 1e6),
    create_index: index,
    modify_index: index,
  };
  await db.run(
    `INSERT INTO catalog_sessions (id, ns, name, node, lock_delay, behavior, ttl, node_checks, service_checks, expires_at, create_index, modify_index)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [row.id, row.ns, row.name, row.node, row.lock_delay, row.behavior, row.ttl, row.node_checks, row.service_checks, row.expires_at, index, index],
  );
  return row;
}

/**
 * The status of each of these checks of a node that exist, in one statement; undefined when the node
 * is not registered. The node's checks are read whole and picked here: an `IN (?, ?, …)` of the
 * request's check ids would take one SQL variable per id, and SQLite refuses a statement of more
 * than 32,766 (a 500 for a session with that many checks).
 */
async function checkStatuses(db: Db, node: string, checkIds: readonly string[]): Promise<Map<string, string> | undefined> {
  const wanted = new Set(checkIds);
  const rows = await db.all<{ check_id: string | null; status: string | null }>(
    'SELECT c.check_id, c.status FROM catalog_nodes n LEFT JOIN catalog_checks c ON c.node = n.name WHERE n.name = ?',
    [node],
  );
  if (rows.length === 0) return undefined;
  return new Map(rows.filter((r) => r.check_id !== null && wanted.has(r.check_id)).map((r) => [r.check_id!, r.status!]));
}

/**
 * Extends a TTL session's life. The public service keeps session timers in memory and invalidates
 * a session between TTL and 2x TTL after its last renewal; here the durable expiry (which every
 * server's expiry job reads) is written only when less than one TTL is left, and then set 2 TTL
 * ahead. The session so dies within [TTL, 2 TTL] of its last renewal, as there, and a client
 * renewing every TTL/2 (as the official clients do) or more often costs a write at most once per
 * TTL instead of one per call.
 */
export async function renewSession(db: Db, session: SessionRow, now: number): Promise<SessionRow> {
  const expiresAt = renewedExpiry(session, now);
  if (expiresAt === undefined) return session;
  await db.run('UPDATE catalog_sessions SET expires_at = ? WHERE id = ?', [expiresAt, session.id]);
  return { ...session, expires_at: expiresAt };
}

/** Stored TTLs parsed (a renewal parses its session's; most sessions share a few TTLs). */
const parsedTtls = new BoundedMap<string, number | undefined>(64);

function storedTtlNs(ttl: string): number | undefined {
  if (!parsedTtls.has(ttl)) parsedTtls.set(ttl, parseDuration(ttl));
  return parsedTtls.get(ttl);
}

/** The expiry a renewal at `now` stores: 2 TTL ahead; undefined while the stored one is at least one TTL ahead (nothing to write). */
export function renewedExpiry(session: SessionRow, now: number): number | undefined {
  const ttlNs = session.ttl ? storedTtlNs(session.ttl) : undefined;
  if (!ttlNs) return undefined;
  const ttlMs = Math.round(ttlNs / 1e6);
  if (session.expires_at !== null && Number(session.expires_at) >= now + ttlMs) return undefined;
  return now + 2 * ttlMs;
}

/**
 * Invalidates sessions (destroy, TTL expiry, node deregistration, a check turning critical): keys
 * they hold are released (behavior release) or deleted (behavior delete), and each such key gets
 * the session's lock-delay, during which no other session may acquire it.
 */
export async function invalidateSessions(writes: Writes, sessions: readonly SessionRow[], now: number): Promise<void> {
  if (sessions.length === 0) return;
  const db = writes.db;
  const index = await writes.next('sessions');
  for (const session of sessions) {
    const held = await db.all<{ ns: string; key: string }>('SELECT ns, key FROM catalog_kv WHERE session = ?', [session.id]);
    if (held.length > 0) {
      await writes.next('kvs');
      if (session.behavior === 'delete') await db.run('DELETE FROM catalog_kv WHERE session = ?', [session.id]);
      else await db.run('UPDATE catalog_kv SET session = NULL, modify_index = ? WHERE session = ?', [index, session.id]);
      const until = now + Math.round(Number(session.lock_delay) / 1e6);
      for (const { ns, key } of held) {
        await db.run(
          'INSERT INTO catalog_kv_lock_delays (ns, key, until) VALUES (?, ?, ?) ON CONFLICT (ns, key) DO UPDATE SET until = excluded.until',
          [ns, key, until],
        );
      }
    }
    await db.run('DELETE FROM catalog_sessions WHERE id = ?', [session.id]);
  }
}

/** Sessions of a node that depend on one of these checks (all of the node's sessions without a list). */
export async function sessionsOfNode(db: Db, node: string, checkIds?: readonly string[]): Promise<SessionRow[]> {
  const rows = await db.all<SessionRow>('SELECT * FROM catalog_sessions WHERE node = ?', [node]);
  if (!checkIds) return rows;
  return rows.filter((row) => checkIdsOf(row).some((id) => checkIds.includes(id)));
}

/** Background: invalidates sessions whose TTL ran out; returns how many. */
export async function expireSessions(writes: Writes, now: number): Promise<number> {
  const due = await writes.db.all<SessionRow>(
    'SELECT * FROM catalog_sessions WHERE expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT 500',
    [now],
  );
  await invalidateSessions(writes, due, now);
  return due.length;
}
