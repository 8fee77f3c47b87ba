import { BoundedMap } from '../../bounded-map';
import type { Engine } from '../../engine';
import type { Db } from '../../storage';
import type { Authorizer } from '../acl/authorizer';
import { tokenActor } from '../api';
import { CONSUL_SERVICE } from '../servers';
import type { DnsQuery } from './names';
import { normalizeIp } from './names';

/** A node as DNS answers need it. */
export interface DnsNode {
  readonly name: string;
  readonly address: string;
  readonly taggedAddresses: Readonly<Record<string, string>>;
  readonly meta: Readonly<Record<string, string>>;
}

/** A service instance on its node, with its SRV weight (from its Weights and health). */
export interface DnsInstance {
  readonly node: DnsNode;
  readonly service: {
    readonly name: string;
    readonly ns: string;
    readonly address: string;
    readonly taggedAddresses: Readonly<Record<string, { Address: string }>>;
    readonly port: number;
  };
  readonly weight: number;
}

/** What a question found: nothing (NXDOMAIN), nodes, or service instances. */
export type Found =
  | { readonly kind: 'nodes'; readonly nodes: readonly DnsNode[] }
  | { readonly kind: 'instances'; readonly instances: readonly DnsInstance[] }
  | { readonly kind: 'ip'; readonly ip: string }
  | { readonly kind: 'ptr'; readonly names: readonly { readonly type: 'node' | 'service'; readonly name: string; readonly ns: string }[] };

/** What lookups need of the DNS configuration. */
export interface LookupOptions {
  /** The DNS token's secret ('': the anonymous token). */
  readonly token: string;
  /** Leave out instances with a warning check too (dns_config.only_passing). */
  readonly onlyPassing: boolean;
}

/** The token of the DNS interface is not known: answers are SERVFAIL, as the public service's "ACL not found". */
export class DnsTokenNotFound extends Error {}

/** Answers computed once per catalog state and token version, by question (bounded: names come from the network). */
const CACHE_MAX = 4096;
const caches = new WeakMap<Engine, BoundedMap<string, Promise<Found | undefined>>>();

/**
 * Looks a question up in the catalog, as the DNS token may see it (what it may not read does not
 * exist). Each call reads the catalog's node index and the token in one read transaction; what it
 * found is kept for the next questions while neither the catalog nor the token's permissions changed.
 */
export async function lookup(engine: Engine, query: DnsQuery, options: LookupOptions): Promise<Found | undefined> {
  if (query.kind === 'none' || query.kind === 'query') return undefined; // prepared queries: none exist in Hangar
  if (query.kind === 'addr') return { kind: 'ip', ip: query.ip };
  let cache = caches.get(engine);
  if (!cache) caches.set(engine, (cache = new BoundedMap(CACHE_MAX)));
  return engine.storage.tx(async (db) => {
    const row = await db.get<{ idx: number }>("SELECT idx FROM catalog_tables WHERE name = 'nodes'");
    const who = await tokenActor(db, engine, options.token);
    if (!who) throw new DnsTokenNotFound('the DNS token is not known');
    const key = `${who.version}:${row?.idx ?? 0}:${options.onlyPassing}:${JSON.stringify(query)}`;
    let entry = cache.get(key);
    if (!entry) {
      // Read in this transaction: the answer and the index it is kept under agree.
      entry = find(db, who.actor.authz, query, options.onlyPassing);
      cache.set(key, entry);
      entry.catch(() => cache.delete(key));
    }
    return entry;
  }, { readOnly: true });
}

async function find(db: Db, authz: Authorizer, query: DnsQuery, onlyPassing: boolean): Promise<Found | undefined> {
  switch (query.kind) {
    case 'service': {
      const instances = await serviceInstances(db, authz, query.service, query.ns, query.tag, onlyPassing);
      return instances.length > 0 ? { kind: 'instances', instances } : undefined;
    }
    case 'servers':
      // The servers are the instances of the `consul` service; the public service names three at most.
      return { kind: 'instances', instances: (await serviceInstances(db, authz, CONSUL_SERVICE, 'default', '', onlyPassing)).slice(0, 3) };
    case 'node': {
      const row = await db.get<NodeRow>('SELECT * FROM catalog_nodes WHERE lower(name) = ?', [query.node]);
      return row && authz.allowed('node', 'read', row.name) ? { kind: 'nodes', nodes: [dnsNode(row)] } : undefined;
    }
    case 'ptr':
      return reverse(db, authz, query.ip);
    default:
      return undefined;
  }
}

interface NodeRow {
  name: string;
  address: string;
  tagged_addresses: string;
  meta: string;
}

const dnsNode = (row: NodeRow): DnsNode => ({
  name: row.name,
  address: row.address,
  taggedAddresses: JSON.parse(row.tagged_addresses) as Record<string, string>,
  meta: JSON.parse(row.meta) as Record<string, string>,
});

interface InstanceRow {
  node: string;
  ns: string;
  id: string;
  name: string;
  tags: string;
  address: string;
  tagged_addresses: string;
  port: number;
  weights: string;
  node_address: string;
  node_tagged_addresses: string;
  node_meta: string;
}

/**
 * The instances of a service that DNS answers with: names and tags match without regard to case
 * (DNS names are lower case; the public service's indexes are too), the token reads the service and
 * its node, and no check of the instance or its node is critical (nor warning with `onlyPassing`;
 * maintenance is critical), as CheckServiceNodes.Filter.
 */
async function serviceInstances(db: Db, authz: Authorizer, service: string, ns: string, tag: string, onlyPassing: boolean): Promise<DnsInstance[]> {
  const rows = await db.all<InstanceRow>(
    `SELECT s.node, s.ns, s.id, s.name, s.tags, s.address, s.tagged_addresses, s.port, s.weights,
       n.address AS node_address, n.tagged_addresses AS node_tagged_addresses, n.meta AS node_meta
     FROM catalog_services s JOIN catalog_nodes n ON n.name = s.node WHERE lower(s.name) = ? AND s.ns = ? ORDER BY s.node, s.id`,
    [service, ns],
  );
  const visible = rows.filter((r) =>
    authz.allowed('service', 'read', r.name, r.ns) && authz.allowed('node', 'read', r.node) &&
    (tag === '' || (JSON.parse(r.tags) as string[]).some((t) => t.toLowerCase() === tag)));
  if (visible.length === 0) return [];
  const checks = await db.all<{ node: string; ns: string; service_id: string; status: string }>(
    `SELECT c.node, c.ns, c.service_id, c.status FROM catalog_checks c
     WHERE c.node IN (SELECT s.node FROM catalog_services s WHERE lower(s.name) = ? AND s.ns = ?)`,
    [service, ns],
  );
  const out: DnsInstance[] = [];
  for (const r of visible) {
    const own = checks.filter((c) => c.node === r.node && (c.service_id === '' || (c.ns === r.ns && c.service_id === r.id)));
    if (own.some((c) => c.status !== 'passing' && (onlyPassing || c.status !== 'warning'))) continue;
    const weights = JSON.parse(r.weights) as { Passing?: number; Warning?: number };
    // findWeight: the Warning weight while a check warns, the Passing weight otherwise.
    const weight = own.some((c) => c.status === 'warning') ? (weights.Warning ?? 1) : (weights.Passing ?? 1);
    out.push({
      node: { name: r.node, address: r.node_address, taggedAddresses: JSON.parse(r.node_tagged_addresses), meta: JSON.parse(r.node_meta) },
      service: {
        name: r.name,
        ns: r.ns,
        address: r.address,
        port: Number(r.port),
        taggedAddresses: JSON.parse(r.tagged_addresses) as Record<string, { Address: string }>,
      },
      weight,
    });
  }
  return out;
}

/** The nodes at an address, else the services at it (the public service's QueryByIP). */
async function reverse(db: Db, authz: Authorizer, ip: string): Promise<Found | undefined> {
  const same = (address: string) => normalizeIp(address) === ip;
  const nodes = (await db.all<NodeRow>('SELECT * FROM catalog_nodes ORDER BY name')).filter((n) => same(n.address) && authz.allowed('node', 'read', n.name));
  if (nodes.length > 0) return { kind: 'ptr', names: nodes.map((n) => ({ type: 'node', name: n.name, ns: 'default' })) };
  const services = (await db.all<{ name: string; ns: string; address: string }>('SELECT DISTINCT name, ns, address FROM catalog_services WHERE address <> \'\' ORDER BY name'))
    .filter((s) => same(s.address) && authz.allowed('service', 'read', s.name, s.ns));
  return services.length > 0 ? { kind: 'ptr', names: services.map((s) => ({ type: 'service', name: s.name, ns: s.ns })) } : undefined;
}
