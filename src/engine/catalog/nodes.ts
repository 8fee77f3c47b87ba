import type { Db } from '../storage';
import { CheckDefinition, CheckThresholds, renderDefinition } from './checks';
import type { Writes } from './index-state';
import { LOCAL_DATACENTER } from './route';
import { renderServiceFields, ServiceRow } from './services';
import { invalidateSessions, SERF_HEALTH, sessionsOfNode } from './sessions';

export interface NodeRow {
  name: string;
  id: string;
  address: string;
  tagged_addresses: string;
  meta: string;
  create_index: number;
  modify_index: number;
}

export interface CheckRow {
  node: string;
  ns: string;
  check_id: string;
  name: string;
  status: string;
  notes: string;
  output: string;
  service_id: string;
  service_name: string;
  type: string;
  interval: string;
  timeout: string;
  exposed_port: number;
  /** The CheckDefinition (JSON), durations in nanoseconds. */
  definition: string;
  /** The CheckThresholds of an agent check (JSON). */
  thresholds: string;
  /** When a TTL check turns critical unless updated (epoch ms); null when it is not waiting. */
  ttl_deadline: number | null;
  /** When the check turned critical (epoch ms, engine clock); null while it is not critical. */
  critical_since: number | null;
  create_index: number;
  modify_index: number;
}


export function renderNode(row: NodeRow): Record<string, unknown> {
  return {
    ID: row.id,
    Node: row.name,
    Address: row.address,
    Datacenter: LOCAL_DATACENTER,
    TaggedAddresses: JSON.parse(row.tagged_addresses),
    Meta: JSON.parse(row.meta),
    CreateIndex: Number(row.create_index),
    ModifyIndex: Number(row.modify_index),
  };
}

/** A service instance with its node, as /v1/catalog/service answers it (structs.ServiceNode). */
export function renderServiceNode(node: NodeRow, row: ServiceRow): Record<string, unknown> {
  return {
    ID: node.id,
    Node: node.name,
    Address: node.address,
    Datacenter: LOCAL_DATACENTER,
    TaggedAddresses: JSON.parse(node.tagged_addresses),
    NodeMeta: JSON.parse(node.meta),
    ...renderServiceFields(row),
    CreateIndex: Number(row.create_index),
    ModifyIndex: Number(row.modify_index),
  };
}

/** A check as the public service shows it (structs.HealthCheck); `serviceTags` of its service, if any. */
export function renderCheck(row: CheckRow, serviceTags: readonly string[] = []): Record<string, unknown> {
  return {
    Node: row.node,
    CheckID: row.check_id,
    Name: row.name,
    Status: row.status,
    Notes: row.notes,
    Output: row.output,
    ServiceID: row.service_id,
    ServiceName: row.service_name,
    ServiceTags: row.service_id ? serviceTags : [],
    Type: row.type,
    Interval: row.interval,
    Timeout: row.timeout,
    ExposedPort: Number(row.exposed_port),
    Definition: renderDefinition(JSON.parse(row.definition) as CheckDefinition),
    Namespace: row.ns,
    CreateIndex: Number(row.create_index),
    ModifyIndex: Number(row.modify_index),
  };
}

/** The node of that name (the table's key: what registers update and services reference). */
export async function nodeNamed(db: Db, name: string): Promise<NodeRow | undefined> {
  return db.get<NodeRow>('SELECT * FROM catalog_nodes WHERE name = ?', [name]);
}

export async function getNode(db: Db, nameOrId: string): Promise<NodeRow | undefined> {
  return (
    (await nodeNamed(db, nameOrId)) ??
    (nameOrId ? await db.get<NodeRow>('SELECT * FROM catalog_nodes WHERE id = ?', [nameOrId]) : undefined)
  );
}

export interface NodeInput {
  readonly name: string;
  readonly id?: string;
  readonly address: string;
  readonly taggedAddresses?: Record<string, string>;
  readonly meta?: Record<string, string>;
  readonly skipNodeUpdate?: boolean;
}

/**
 * Registers (or updates) a node. A new node gets a passing `serfHealth` check, the check an agent's
 * node has, which sessions depend on by default.
 */
export async function upsertNode(writes: Writes, input: NodeInput): Promise<void> {
  const db = writes.db;
  // By name only: a node found by its ID under another name would be updated under the wrong key.
  const existing = await nodeNamed(writes.db, input.name);
  if (existing && input.skipNodeUpdate) return;
  const tagged = JSON.stringify(input.taggedAddresses ?? {});
  const meta = JSON.stringify(input.meta ?? {});
  const same = (row: NodeRow) =>
    row.address === input.address && row.id === (input.id ?? row.id) && row.tagged_addresses === tagged && row.meta === meta;
  if (existing && same(existing)) return;
  const index = await writes.next('nodes');
  if (existing) {
    await db.run('UPDATE catalog_nodes SET id = ?, address = ?, tagged_addresses = ?, meta = ?, modify_index = ? WHERE name = ?', [
      input.id ?? existing.id, input.address, tagged, meta, index, input.name,
    ]);
    return;
  }
  await db.run('INSERT INTO catalog_nodes (name, id, address, tagged_addresses, meta, create_index, modify_index) VALUES (?, ?, ?, ?, ?, ?, ?)', [
    input.name, input.id ?? '', input.address, tagged, meta, index, index,
  ]);
  await db.run(
    `INSERT INTO catalog_checks (node, check_id, name, status, output, create_index, modify_index)
     VALUES (?, ?, 'Serf Health Status', 'passing', 'Agent alive and reachable', ?, ?)`,
    [input.name, SERF_HEALTH, index, index],
  );
}

export interface CheckInput {
  readonly checkId: string;
  readonly ns: string;
  readonly name: string;
  readonly status: string;
  readonly notes: string;
  readonly output: string;
  readonly serviceId: string;
  readonly serviceName: string;
  readonly type: string;
  readonly interval?: string;
  readonly timeout?: string;
  readonly exposedPort?: number;
  readonly definition: CheckDefinition;
  readonly thresholds?: CheckThresholds;
  /** When a TTL check turns critical unless updated (epoch ms). */
  readonly ttlDeadline?: number | null;
}

export async function getCheck(db: Db, node: string, ns: string, checkId: string): Promise<CheckRow | undefined> {
  return db.get<CheckRow>('SELECT * FROM catalog_checks WHERE node = ? AND ns = ? AND check_id = ?', [node, ns, checkId]);
}

/** Registers or updates a check; a check that turns critical invalidates the sessions that use it. */
export async function upsertCheck(writes: Writes, node: string, input: CheckInput, now: number): Promise<void> {
  const db = writes.db;
  const index = await writes.next('nodes');
  const values = [
    input.name, input.status, input.notes, input.output, input.serviceId, input.serviceName, input.type, input.interval ?? '',
    input.timeout ?? '', input.exposedPort ?? 0, JSON.stringify(input.definition), JSON.stringify(input.thresholds ?? {}), input.ttlDeadline ?? null,
    input.status === 'critical' ? now : null,
  ];
  // A check critical before and after keeps the time it turned critical (what the reaper measures).
  await db.run(
    `INSERT INTO catalog_checks (node, ns, check_id, name, status, notes, output, service_id, service_name, type, interval, timeout,
       exposed_port, definition, thresholds, ttl_deadline, critical_since, create_index, modify_index)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (node, ns, check_id) DO UPDATE SET name = excluded.name, status = excluded.status, notes = excluded.notes,
       output = excluded.output, service_id = excluded.service_id, service_name = excluded.service_name, type = excluded.type,
       interval = excluded.interval, timeout = excluded.timeout, exposed_port = excluded.exposed_port, definition = excluded.definition,
       thresholds = excluded.thresholds, ttl_deadline = excluded.ttl_deadline,
       critical_since = CASE WHEN excluded.status = 'critical' THEN COALESCE(catalog_checks.critical_since, excluded.critical_since) END,
       modify_index = excluded.modify_index`,
    [node, input.ns, input.checkId, ...values, index, index],
  );
  if (input.status === 'critical') await invalidateSessions(writes, await sessionsOfNode(db, node, [input.checkId]), now);
}

/** A check's status and output changed (a TTL update, a TTL expiry); the rest of it stays. */
export async function setCheckStatus(
  writes: Writes, row: CheckRow, status: string, output: string, ttlDeadline: number | null, now: number,
): Promise<void> {
  if (row.status === status && row.output === output && row.ttl_deadline === ttlDeadline) return;
  if (row.status === status && row.output === output) {
    // Only the deadline moved: no index change, nothing for blocking queries to see (as the public service).
    await writes.db.run('UPDATE catalog_checks SET ttl_deadline = ? WHERE node = ? AND ns = ? AND check_id = ?', [ttlDeadline, row.node, row.ns, row.check_id]);
    return;
  }
  const index = await writes.next('nodes');
  const criticalSince = status !== 'critical' ? null : row.status === 'critical' ? row.critical_since : now;
  await writes.db.run(
    'UPDATE catalog_checks SET status = ?, output = ?, ttl_deadline = ?, critical_since = ?, modify_index = ? WHERE node = ? AND ns = ? AND check_id = ?',
    [status, output, ttlDeadline, criticalSince, index, row.node, row.ns, row.check_id],
  );
  if (status === 'critical') await invalidateSessions(writes, await sessionsOfNode(writes.db, row.node, [row.check_id]), now);
}

/** Removes a node (with its services, checks and sessions), one service (with its checks), or one check. */
export async function deregister(
  writes: Writes, node: string, what: { ns?: string; checkId?: string; serviceId?: string }, now: number,
): Promise<void> {
  const db = writes.db;
  await writes.next('nodes');
  if (what.checkId !== undefined || what.serviceId !== undefined) {
    const ns = what.ns ?? 'default';
    const checks = what.checkId !== undefined
      ? [what.checkId]
      : (await db.all<{ check_id: string }>('SELECT check_id FROM catalog_checks WHERE node = ? AND ns = ? AND service_id = ?', [node, ns, what.serviceId!]))
        .map((c) => c.check_id);
    await invalidateSessions(writes, await sessionsOfNode(db, node, checks), now);
    for (const id of checks) await db.run('DELETE FROM catalog_checks WHERE node = ? AND ns = ? AND check_id = ?', [node, ns, id]);
    if (what.serviceId !== undefined) await db.run('DELETE FROM catalog_services WHERE node = ? AND ns = ? AND id = ?', [node, ns, what.serviceId]);
    return;
  }
  await invalidateSessions(writes, await sessionsOfNode(db, node), now);
  await db.run('DELETE FROM catalog_checks WHERE node = ?', [node]);
  await db.run('DELETE FROM catalog_services WHERE node = ?', [node]);
  await db.run('DELETE FROM catalog_nodes WHERE name = ?', [node]);
}
