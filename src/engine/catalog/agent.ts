import { arch, availableParallelism, platform } from 'node:os';
import type { Engine } from '../engine';
import { notFound } from '../http/errors';
import type { Db } from '../storage';
import {
  AgentCheckBody,
  aggregatedStatus,
  checkStatus,
  checkTypeOf,
  clampInterval,
  definitionOf,
  NODE_MAINTENANCE,
  SERVICE_MAINTENANCE_PREFIX,
  validateAgentCheck,
} from './checks';
import type { Writes } from './index-state';
import { CheckRow, deregister, getCheck, renderCheck, setCheckStatus, upsertCheck } from './nodes';
import { badRequest, formatDuration, LOCAL_DATACENTER } from './route';
import { alivePeers, COMPATIBLE_VERSION, CONSUL_SERVICE, ensureServerNode, isAlive, listServers, SERVER_PORT, serverNodeId } from './servers';
import { getService, renderService, ServiceRow } from './services';
import { SERF_HEALTH } from './sessions';

/**
 * The agent API of a server: one logical agent per server, whose node is the server's own node.
 * What is registered through it lands in the catalog on that node; the catalog is its only state.
 */

/**
 * The agent's own services and checks on its node (`s` and `c` the tables' aliases): the server's
 * `consul` service and its serfHealth check are the catalog's, not the agent's (as on the public
 * service's servers). Parameters: the agent's node.
 */
export const AGENT_SERVICES_WHERE = `s.node = ? AND NOT (s.ns = 'default' AND s.id = '${CONSUL_SERVICE}')`;
export const AGENT_CHECKS_WHERE = `c.node = ? AND c.check_id <> '${SERF_HEALTH}'`;

/** The node of this server's agent. */
export function agentNode(engine: Engine): string {
  return engine.catalogNode.name;
}

/** Output kept of a check update, as the public service's agent (DefaultBufSize): longer output is cut. */
export const OUTPUT_MAX_SIZE = 4096;

/** The statuses an agent check may be registered or updated with. */
export const AGENT_STATUSES = ['passing', 'warning', 'critical'] as const;

/** Output cut to a check's limit with the public service's note of what was kept. */
export function truncateOutput(output: string, max = OUTPUT_MAX_SIZE): string {
  const bytes = Buffer.from(output);
  if (bytes.length <= max) return output;
  return `${bytes.subarray(0, max).toString()} ... (captured ${max} of ${bytes.length} bytes)`;
}

/** A service of the agent's node, or a 404 in the public service's words. */
export async function agentService(db: Db, node: string, ns: string, id: string): Promise<ServiceRow> {
  const row = await getService(db, node, ns, id);
  if (!row) throw notFound(`Unknown service ID ${JSON.stringify(id)}. Ensure that the service ID is passed, not the service name.`);
  return row;
}

/** A check of the agent's node, or a 404 in the public service's words. */
export async function agentCheck(db: Db, node: string, ns: string, id: string): Promise<CheckRow> {
  const row = await getCheck(db, node, ns, id);
  if (!row) throw notFound(`Unknown check ID ${JSON.stringify(id)}. Ensure that the check ID is passed, not the check name.`);
  return row;
}

/** An agent check ready to store: validated, its ID, name and type settled. */
export interface AgentCheck {
  readonly body: AgentCheckBody;
  readonly checkId: string;
  readonly name: string;
}

/**
 * Validates an agent check (the public service's rules, plus no command-running checks) and settles
 * its ID and name; `fallbackId`/`fallbackName` are a service check's defaults ("service:<id>", "Service '<name>' check").
 */
export function agentCheckOf(body: AgentCheckBody, fallbackId?: string, fallbackName?: string): AgentCheck {
  validateAgentCheck(definitionOf(body));
  if (body.Status !== undefined && body.Status !== '') checkStatus(body.Status, AGENT_STATUSES);
  const checkId = body.CheckID || body.ID || fallbackId || body.Name;
  const name = body.Name || fallbackName;
  if (!name) throw badRequest('Missing check name');
  if (!checkId) throw badRequest('Missing check ID');
  return { body, checkId, name };
}

/** Stores an agent check on the agent's node, for a service of it or for the node. */
export async function storeAgentCheck(
  writes: Writes, node: string, ns: string, check: AgentCheck, service: ServiceRow | undefined, now: number,
): Promise<void> {
  const definition = clampInterval(definitionOf(check.body));
  const ttl = definition.TTL ?? 0;
  // A check registered again keeps its status and output, as the public service's agent does (no
  // flap to critical each time an application re-registers at start).
  const existing = await getCheck(writes.db, node, ns, check.checkId);
  await upsertCheck(
    writes,
    node,
    {
      checkId: check.checkId,
      ns,
      name: check.name,
      status: existing?.status ?? checkStatus(check.body.Status, AGENT_STATUSES),
      notes: check.body.Notes ?? '',
      output: existing?.output ?? '',
      serviceId: service?.id ?? '',
      serviceName: service?.name ?? '',
      type: checkTypeOf(definition),
      interval: formatDuration(definition.Interval ?? 0),
      timeout: formatDuration(definition.Timeout ?? 0),
      definition,
      thresholds: {
        SuccessBeforePassing: check.body.SuccessBeforePassing,
        FailuresBeforeWarning: check.body.FailuresBeforeWarning,
        FailuresBeforeCritical: check.body.FailuresBeforeCritical,
      },
      ttlDeadline: ttl > 0 ? now + Math.ceil(ttl / 1e6) : null,
    },
    now,
  );
}

/** Sets a TTL check's status and output (`pass`, `warn`, `fail`, `update`), restarting its TTL. */
export async function updateTtlCheck(writes: Writes, row: CheckRow, status: string, output: string, now: number): Promise<void> {
  const definition = JSON.parse(row.definition) as { TTL?: number; OutputMaxSize?: number };
  if (!definition.TTL) throw badRequest(`Check ${JSON.stringify(row.check_id)} is not a TTL check`);
  const kept = truncateOutput(output, definition.OutputMaxSize || OUTPUT_MAX_SIZE);
  await setCheckStatus(writes, row, status, kept, now + Math.ceil(definition.TTL / 1e6), now);
}

/** The public service's output of a TTL check that expired, with the last output it had. */
function expiredOutput(last: string): string {
  return last ? `TTL expired (last output before timeout follows): ${last}` : 'TTL expired';
}

/** TTL checks whose TTL ran out without an update turn critical; answers how many (at most 500 a round). */
export async function expireTtlChecks(writes: Writes, now: number): Promise<number> {
  const due = await writes.db.all<CheckRow>(
    'SELECT * FROM catalog_checks WHERE ttl_deadline IS NOT NULL AND ttl_deadline <= ? ORDER BY ttl_deadline LIMIT 500',
    [now],
  );
  for (const row of due) {
    const output = row.output.startsWith('TTL expired') ? row.output : expiredOutput(row.output);
    await setCheckStatus(writes, row, 'critical', output, null, now);
  }
  return due.length;
}

const DEFAULT_SERVICE_REASON = 'Maintenance mode is enabled for this service, but no reason was provided. This is a default message.';
const DEFAULT_NODE_REASON = 'Maintenance mode is enabled for this node, but no reason was provided. This is a default message.';

/** Puts a service (or, without one, the node) into maintenance, or takes it out: a critical check the public service names so. */
export async function setMaintenance(
  engine: Engine, writes: Writes, node: string, ns: string, service: ServiceRow | undefined, enable: boolean, reason: string, now: number,
): Promise<void> {
  const checkId = service ? `${SERVICE_MAINTENANCE_PREFIX}${service.id}` : NODE_MAINTENANCE;
  const checkNs = service ? ns : 'default';
  const existing = await getCheck(writes.db, node, checkNs, checkId);
  if (!enable) {
    if (existing) await deregister(writes, node, { ns: checkNs, checkId }, now);
    return;
  }
  if (existing) return;
  await ensureServerNode(writes, engine);
  await upsertCheck(
    writes,
    node,
    {
      checkId,
      ns: checkNs,
      name: service ? 'Service Maintenance Mode' : 'Node Maintenance Mode',
      status: 'critical',
      notes: reason || (service ? DEFAULT_SERVICE_REASON : DEFAULT_NODE_REASON),
      output: '',
      serviceId: service?.id ?? '',
      serviceName: service?.name ?? '',
      type: 'maintenance',
      definition: {},
    },
    now,
  );
}

/** A service as the agent shows it (api.AgentService): no indexes, with its datacenter. */
export function renderAgentService(row: ServiceRow): Record<string, unknown> {
  const { CreateIndex: _c, ModifyIndex: _m, ...service } = renderService(row);
  return { ...service, Datacenter: LOCAL_DATACENTER };
}

/** A service with its own checks and their aggregated status (api.AgentServiceChecksInfo), as agentHealthService answers. */
export async function serviceHealth(db: Db, row: ServiceRow): Promise<{ status: string; body: Record<string, unknown> }> {
  const checks = await db.all<CheckRow>(
    'SELECT * FROM catalog_checks WHERE node = ? AND ns = ? AND service_id = ? ORDER BY check_id',
    [row.node, row.ns, row.id],
  );
  const tags = JSON.parse(row.tags) as string[];
  const status = aggregatedStatus(checks);
  return { status, body: { AggregatedStatus: status, Service: renderAgentService(row), Checks: checks.map((c) => renderCheck(c, tags)) } };
}

/** The HTTP status of an aggregated health status on the agent's health endpoints. */
export function healthCode(status: string): number {
  return status === 'passing' ? 200 : status === 'warning' ? 429 : 503;
}

/** A server as a gossip member (api.AgentMember), with the tags the CLI's `members` reads (role, dc, build, segment). */
export function renderMember(name: string, address: string, nodeId: string, alive = true): Record<string, unknown> {
  return {
    Name: name,
    Addr: address,
    Port: 8301,
    Tags: {
      acls: '1',
      build: `${COMPATIBLE_VERSION}:`,
      dc: LOCAL_DATACENTER,
      ft_fs: '1',
      ft_si: '1',
      id: nodeId,
      port: '8300',
      raft_vsn: '3',
      role: 'consul',
      segment: '',
      vsn: '2',
      vsn_max: '3',
      vsn_min: '2',
      wan_join_port: '8302',
    },
    // serf's MemberStatus: 1 alive, 4 failed.
    Status: alive ? 1 : 4,
    ProtocolMin: 1,
    ProtocolMax: 5,
    ProtocolCur: 2,
    DelegateMin: 2,
    DelegateMax: 5,
    DelegateCur: 4,
  };
}

/** The members of the cluster: its servers (this one alone until it registered itself). */
export async function agentMembers(engine: Engine, db: Db): Promise<Record<string, unknown>[]> {
  const servers = await listServers(db);
  if (servers.length === 0) return [renderMember(agentNode(engine), engine.catalogNode.address, '')];
  const now = engine.clock.now();
  // The server answering is alive, whatever its last heartbeat says.
  return servers.map((s) => renderMember(s.name, s.address, s.node_id, s.name === engine.catalogNode.name || isAlive(s, now)));
}

/** This server as a member. */
export async function selfMember(engine: Engine, db: Db): Promise<Record<string, unknown>> {
  return renderMember(agentNode(engine), engine.catalogNode.address, await serverNodeId(engine, db));
}

/**
 * /v1/agent/self's `Stats`, the sections `consul info` prints, as strings like the public service's:
 * the agent's services and checks (on this server's node), the build, the servers ("leader" the
 * longest running alive, as /v1/status/leader), the runtime. No raft or serf sections: servers share
 * a database, not a log or gossip.
 */
export async function agentStats(engine: Engine, db: Db): Promise<Record<string, Record<string, string>>> {
  const node = agentNode(engine);
  const count = async (sql: string) => String((await db.get<{ n: number | string }>(sql, [node]))?.n ?? 0);
  const peers = await alivePeers(engine, db);
  const self = `${engine.catalogNode.address}:${SERVER_PORT}`;
  return {
    agent: {
      check_monitors: '0',
      check_ttls: await count(`SELECT COUNT(*) AS n FROM catalog_checks c WHERE ${AGENT_CHECKS_WHERE} AND c.type = 'ttl'`),
      checks: await count(`SELECT COUNT(*) AS n FROM catalog_checks c WHERE ${AGENT_CHECKS_WHERE}`),
      services: await count(`SELECT COUNT(*) AS n FROM catalog_services s WHERE ${AGENT_SERVICES_WHERE}`),
    },
    build: { prerelease: '', revision: '', version: COMPATIBLE_VERSION },
    consul: {
      acl: 'enabled',
      bootstrap: 'false',
      known_datacenters: '1',
      leader: String(peers[0] === self),
      leader_addr: peers[0],
      server: 'true',
    },
    // Go's names of the architecture (GOARCH), as the public service reports them.
    runtime: { arch: ({ x64: 'amd64', ia32: '386' } as Record<string, string>)[arch()] ?? arch(), cpu_count: String(availableParallelism()), os: platform(), version: process.version },
  };
}
