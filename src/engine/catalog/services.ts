import { z } from 'zod';
import type { Db } from '../storage';
import type { Writes } from './index-state';
import { badRequest, ignored } from './route';
import { ANY_ADDRESSES, isAddress, metadataProblem } from './validation';

export interface ServiceRow {
  node: string;
  ns: string;
  id: string;
  name: string;
  kind: string;
  tags: string;
  address: string;
  tagged_addresses: string;
  port: number;
  socket_path: string;
  meta: string;
  weights: string;
  enable_tag_override: number;
  /** Proxy, Connect and Locality as the client sent them (JSON; only those given). */
  extra: string;
  create_index: number;
  modify_index: number;
}

const Port = z.number().int().min(0).max(65535);
const ServiceAddress = z.object({ Address: z.string(), Port: Port.optional() }).strict();
const Weights = z.object({ Passing: z.number().int(), Warning: z.number().int() }).partial().strict();

/**
 * The fields of a service shared by the catalog's NodeService (`Service` names it) and the agent's
 * ServiceDefinition (`Name` names it): every one stored and read back.
 */
export const SERVICE_FIELDS = {
  ID: z.string().optional(),
  Kind: z.string().optional(),
  Tags: z.array(z.string()).optional(),
  Address: z.string().optional(),
  TaggedAddresses: z.record(z.string(), ServiceAddress).optional(),
  Port: Port.optional(),
  SocketPath: z.string().max(4096).optional(),
  Meta: z.record(z.string(), z.string()).optional(),
  Weights: Weights.optional(),
  EnableTagOverride: z.boolean().optional(),
  Proxy: z.record(z.string(), z.unknown()).optional(),
  Connect: z.record(z.string(), z.unknown()).optional(),
  Locality: z.record(z.string(), z.unknown()).optional(),
  Namespace: z.string().optional(),
  // Known to the public service, computed or not used by Hangar: accepted and ignored.
  Ports: ignored,
  PeerName: ignored,
  ContentHash: ignored,
  Datacenter: ignored,
  AI: ignored,
};

export interface ServiceInput {
  readonly ID?: string;
  readonly Kind?: string;
  readonly Tags?: string[];
  readonly Address?: string;
  readonly TaggedAddresses?: Record<string, { Address: string; Port?: number }>;
  readonly Port?: number;
  readonly SocketPath?: string;
  readonly Meta?: Record<string, string>;
  readonly Weights?: { Passing?: number; Warning?: number };
  readonly EnableTagOverride?: boolean;
  readonly Proxy?: Record<string, unknown>;
  readonly Connect?: Record<string, unknown>;
  readonly Locality?: Record<string, unknown>;
}

/** structs.ValidateMetadata: a 400 with the public service's reason, prefixed by `what`. */
export function validateMetadata(what: string, meta: Record<string, string> | undefined, allowConsulPrefix: boolean): void {
  const problem = meta && metadataProblem(meta, allowConsulPrefix);
  if (problem) throw badRequest(`${what}: ${problem}`);
}

/** An address a service may be reached at: the public service refuses the "any" addresses; Hangar also what is no address. */
export function validateServiceAddress(field: string, address: string | undefined): void {
  if (!address) return;
  if (ANY_ADDRESSES.has(address)) throw badRequest('Invalid service address');
  if (!isAddress(address)) throw badRequest(`Invalid service address: ${field} ${JSON.stringify(address.slice(0, 256))} is neither an IP address nor a host name`);
}

/** structs.ValidateWeights: the reason weights are invalid, undefined when they are valid. */
function weightsProblem(weights: { Passing?: number; Warning?: number }): string | undefined {
  if ((weights.Passing ?? 0) < 1) return 'Passing must be greater than 0';
  if ((weights.Warning ?? 0) < 0) return 'Warning must be greater or equal than 0';
  return undefined;
}

/**
 * A service's checks before it is stored: the public service's rules (meta, address), each a 400.
 * Invalid weights are a 400 on the agent; the catalog stores the default instead, as the public
 * service does (the Go client sends zero weights with every catalog registration).
 */
export function validateService(s: ServiceInput, agent: boolean): void {
  validateServiceAddress('Address', s.Address);
  for (const [name, tagged] of Object.entries(s.TaggedAddresses ?? {})) validateServiceAddress(`TaggedAddresses.${name}.Address`, tagged.Address);
  const problem = agent && s.Weights ? weightsProblem(s.Weights) : undefined;
  if (problem) throw badRequest(`Invalid Weights: ${problem}`);
  validateMetadata('Invalid Service Meta', s.Meta, false);
}

export async function getService(db: Db, node: string, ns: string, id: string): Promise<ServiceRow | undefined> {
  return db.get<ServiceRow>('SELECT * FROM catalog_services WHERE node = ? AND ns = ? AND id = ?', [node, ns, id]);
}

/** Registers or replaces a service instance on a node (already validated); answers its ID. */
export async function upsertService(writes: Writes, node: string, ns: string, name: string, s: ServiceInput): Promise<string> {
  const id = s.ID || name;
  const index = await writes.next('nodes');
  const extra = JSON.stringify({ Proxy: s.Proxy, Connect: s.Connect, Locality: s.Locality });
  const valid = s.Weights && !weightsProblem(s.Weights);
  const weights = JSON.stringify(valid ? { Passing: s.Weights!.Passing, Warning: s.Weights!.Warning ?? 0 } : { Passing: 1, Warning: 1 });
  const values = [
    name, s.Kind ?? '', JSON.stringify(s.Tags ?? []), s.Address ?? '', JSON.stringify(s.TaggedAddresses ?? {}), s.Port ?? 0,
    s.SocketPath ?? '', JSON.stringify(s.Meta ?? {}), weights, s.EnableTagOverride ? 1 : 0, extra,
  ];
  await writes.db.run(
    `INSERT INTO catalog_services (node, ns, id, name, kind, tags, address, tagged_addresses, port, socket_path, meta, weights,
       enable_tag_override, extra, create_index, modify_index) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (node, ns, id) DO UPDATE SET name = excluded.name, kind = excluded.kind, tags = excluded.tags,
       address = excluded.address, tagged_addresses = excluded.tagged_addresses, port = excluded.port,
       socket_path = excluded.socket_path, meta = excluded.meta, weights = excluded.weights,
       enable_tag_override = excluded.enable_tag_override, extra = excluded.extra, modify_index = excluded.modify_index`,
    [node, ns, id, ...values, index, index],
  );
  // A renamed service's checks follow its name.
  await writes.db.run('UPDATE catalog_checks SET service_name = ? WHERE node = ? AND ns = ? AND service_id = ? AND service_name <> ?', [name, node, ns, id, name]);
  return id;
}

/** The fields a read shows only when set (`json:",omitempty"` in the public service's structs). */
function optional(row: ServiceRow, prefix = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const tagged = JSON.parse(row.tagged_addresses) as Record<string, unknown>;
  if (Object.keys(tagged).length > 0) out[`${prefix}TaggedAddresses`] = tagged;
  if (row.socket_path) out[`${prefix}SocketPath`] = row.socket_path;
  const extra = JSON.parse(row.extra) as Record<string, unknown>;
  for (const key of ['Proxy', 'Connect', 'Locality']) if (extra[key] !== undefined) out[`${prefix}${key}`] = extra[key];
  return out;
}

/** A service as a node's service list and the agent show it (structs.NodeService; the Go client's AgentService). */
export function renderService(row: ServiceRow): Record<string, unknown> {
  return {
    ...(row.kind ? { Kind: row.kind } : {}),
    ID: row.id,
    Service: row.name,
    Tags: JSON.parse(row.tags),
    Address: row.address,
    Meta: JSON.parse(row.meta),
    Port: Number(row.port),
    Weights: JSON.parse(row.weights),
    EnableTagOverride: Boolean(Number(row.enable_tag_override)),
    ...optional(row),
    Namespace: row.ns,
    CreateIndex: Number(row.create_index),
    ModifyIndex: Number(row.modify_index),
  };
}

/** The instance part of /v1/catalog/service's answer (structs.ServiceNode's Service* fields). */
export function renderServiceFields(row: ServiceRow): Record<string, unknown> {
  return {
    ServiceKind: row.kind,
    ServiceID: row.id,
    ServiceName: row.name,
    ServiceTags: JSON.parse(row.tags),
    ServiceAddress: row.address,
    ServiceWeights: JSON.parse(row.weights),
    ServiceMeta: JSON.parse(row.meta),
    ServicePort: Number(row.port),
    ServiceEnableTagOverride: Boolean(Number(row.enable_tag_override)),
    ...optional(row, 'Service'),
    Namespace: row.ns,
  };
}
