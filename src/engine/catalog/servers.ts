import { randomUUID } from 'node:crypto';
import type { Engine } from '../engine';
import type { Db } from '../storage';
import type { Writes } from './index-state';
import { getCheck, nodeNamed, setCheckStatus, upsertNode } from './nodes';
import { runtimeOf, writeAndNotify } from './runtime';
import { getService, upsertService } from './services';
import { SERF_HEALTH } from './sessions';

/**
 * The version of the public service whose API Hangar speaks (binding rule BindType `policy` is
 * 1.16+, templated policies 1.17+): what clients read to decide which features to use.
 */
export const COMPATIBLE_VERSION = '1.20.0';

/**
 * Each server is a node of the catalog, as each server of the public service is: its node (name and
 * address from the engine's options, a node ID kept per name in catalog_servers), the `consul`
 * service and a `serfHealth` check, passing while the server beats and critical once it stops.
 */

export interface ServerRow {
  name: string;
  node_id: string;
  address: string;
  started_at: number;
  seen_at: number;
}

/** How often a server records that it is alive; after DEAD_AFTER_MS without, it is failed. */
export const HEARTBEAT_MS = 10_000;
export const DEAD_AFTER_MS = 3 * HEARTBEAT_MS;
/** The public service's server RPC port, which peers and the leader are named by. */
export const SERVER_PORT = 8300;
/** The service every server registers (structs.ConsulServiceName). */
export const CONSUL_SERVICE = 'consul';
const ALIVE_OUTPUT = 'Agent alive and reachable';
const DEAD_OUTPUT = 'Agent not live or unreachable';

export async function listServers(db: Db): Promise<ServerRow[]> {
  return db.all<ServerRow>('SELECT * FROM catalog_servers ORDER BY started_at, name');
}

export const isAlive = (row: ServerRow, now: number): boolean => Number(row.seen_at) > now - DEAD_AFTER_MS;

/**
 * The servers alive (this one always), as `address:8300`, the longest running first (this server alone
 * until it registered itself). Servers on one database share all state: the "leader" is the first.
 */
export async function alivePeers(engine: Engine, db: Db): Promise<string[]> {
  const now = engine.clock.now();
  const alive = (await listServers(db)).filter((s) => s.name === engine.catalogNode.name || isAlive(s, now)).map((s) => `${s.address}:${SERVER_PORT}`);
  return alive.length > 0 ? [...new Set(alive)] : [`${engine.catalogNode.address}:${SERVER_PORT}`];
}

/** The node ID of this server, empty until it registered itself. */
export async function serverNodeId(engine: Engine, db: Db): Promise<string> {
  const row = await db.get<{ node_id: string }>('SELECT node_id FROM catalog_servers WHERE name = ?', [engine.catalogNode.name]);
  return row?.node_id ?? '';
}

/**
 * Registers this server as a node (once per transaction that needs it; `beat` also records that it
 * is alive): its node with its stable ID, the `consul` service, a passing `serfHealth` check.
 */
export async function ensureServerNode(writes: Writes, engine: Engine, beat = false): Promise<void> {
  const db = writes.db;
  const { name, address } = engine.catalogNode;
  const now = engine.clock.now();
  let row = await db.get<ServerRow>('SELECT * FROM catalog_servers WHERE name = ?', [name]);
  if (!row) {
    row = { name, node_id: randomUUID(), address, started_at: now, seen_at: now };
    await db.run('INSERT INTO catalog_servers (name, node_id, address, started_at, seen_at) VALUES (?, ?, ?, ?, ?)', [
      name, row.node_id, address, now, now,
    ]);
  } else if (beat || row.address !== address) {
    await db.run('UPDATE catalog_servers SET address = ?, seen_at = ? WHERE name = ?', [address, now, name]);
  }
  const node = await nodeNamed(db, name);
  if (!node || node.id !== row.node_id || node.address !== address) {
    await upsertNode(writes, { name, id: row.node_id, address, meta: node ? JSON.parse(node.meta) : { 'consul-network-segment': '', 'consul-version': COMPATIBLE_VERSION } });
  }
  if (!(await getService(db, name, 'default', CONSUL_SERVICE))) {
    await upsertService(writes, name, 'default', CONSUL_SERVICE, {
      ID: CONSUL_SERVICE,
      Port: SERVER_PORT,
      Meta: { non_voter: 'false', raft_version: '3', read_replica: 'false', serf_protocol_current: '2', serf_protocol_max: '5', serf_protocol_min: '1', version: COMPATIBLE_VERSION },
    });
  }
  const serf = await getCheck(db, name, 'default', SERF_HEALTH);
  if (serf && serf.status !== 'passing') await setCheckStatus(writes, serf, 'passing', ALIVE_OUTPUT, null, now);
}

/** Servers not heard from within DEAD_AFTER_MS: their serfHealth turns critical (what sessions on them watch). */
export async function markDeadServers(writes: Writes, now: number): Promise<void> {
  for (const row of await listServers(writes.db)) {
    if (isAlive(row, now)) continue;
    const serf = await getCheck(writes.db, row.name, 'default', SERF_HEALTH);
    if (serf && serf.status !== 'critical') await setCheckStatus(writes, serf, 'critical', DEAD_OUTPUT, null, now);
  }
}

/**
 * Registers this server and keeps it alive (`hangar server` calls it once it listens): a heartbeat
 * every HEARTBEAT_MS until the catalog API closes.
 */
export async function startServerNode(engine: Engine): Promise<void> {
  const beat = () => writeAndNotify(engine, (writes) => ensureServerNode(writes, engine, true));
  await beat();
  const runtime = runtimeOf(engine);
  clearInterval(runtime.heartbeat);
  runtime.heartbeat = setInterval(() => {
    beat().catch((err: unknown) => engine.logger.warn({ err }, 'catalog: the server heartbeat failed'));
  }, HEARTBEAT_MS);
  runtime.heartbeat.unref();
}
