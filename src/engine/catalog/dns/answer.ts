/* eslint-disable no-bitwise -- DNS header flags and the rcode are bits of one 16-bit field (RFC 1035 4.1.1). */
import { randomInt } from 'node:crypto';
import { isIP } from 'node:net';
import * as dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, OptAnswer, Packet, Question } from 'dns-packet';
import { LOCAL_DATACENTER } from '../route';
import { DnsConfig, serviceTtlOf } from './config';
import type { DnsInstance, DnsNode, Found } from './lookup';
import { addrName, DnsQuery } from './names';

/**
 * DNS replies as the public service (1.22) builds them (agent/dns/router.go, message_serializer.go):
 * which records answer which question, in which section, under which names, and how a UDP reply
 * is trimmed. Records are built as dns-packet objects; the library encodes them.
 */

export const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;

/** The largest reply over UDP without EDNS (RFC 1035), and over TCP (its 2-byte length). */
const UDP_MIN_SIZE = 512;
const TCP_MAX_SIZE = 65535;

/** The records one result adds: trimming keeps or drops them together. */
interface Entry {
  readonly answers: Answer[];
  readonly extras: Answer[];
  /** An answer that is only a CNAME: used when no result has an address (appendResultsToDNSResponse). */
  readonly cname?: boolean;
}

/** The first question as asked, its name in lower case (dns.CanonicalName). */
export function questionOf(request: DecodedPacket): Question | undefined {
  const q = request.questions?.[0];
  return q && { ...q, name: q.name.toLowerCase() };
}

/** The request's EDNS record, if any. */
function ednsOf(request: DecodedPacket): OptAnswer | undefined {
  return request.additionals?.find((a): a is OptAnswer => a.type === 'OPT');
}

/** The flags and sections every reply shares: the request's id, opcode, RD and CD; AA and RA as told. */
function reply(request: DecodedPacket, rcode: number, options: { authoritative: boolean; recursion: boolean }): Packet & { flags: number } {
  const copied = (request.flags ?? 0) & (0x7800 | dnsPacket.RECURSION_DESIRED | dnsPacket.CHECKING_DISABLED);
  const q = questionOf(request);
  return {
    type: 'response',
    id: request.id,
    flags: copied | rcode | (options.authoritative ? dnsPacket.AUTHORITATIVE_ANSWER : 0) | (options.recursion ? dnsPacket.RECURSION_AVAILABLE : 0),
    questions: q ? [q] : [],
    answers: [],
    authorities: [],
    additionals: [],
  };
}

/** REFUSED, with nothing else (a name outside the domain and no recursors; no question). */
export function refused(request: DecodedPacket): Packet {
  return reply(request, RCODE.REFUSED, { authoritative: false, recursion: false });
}

/** SERVFAIL (a lookup failed, recursion failed). */
export function serverFailure(request: DecodedPacket, config: DnsConfig): Packet {
  return withEdns(request, reply(request, RCODE.SERVFAIL, { authoritative: false, recursion: config.recursors.length > 0 }));
}

/** The domain's SOA record (makeSOARecord): its TTL is the SOA minimum, its serial the time. */
function soaRecord(config: DnsConfig): Answer {
  return {
    type: 'SOA',
    name: config.domain,
    ttl: 0,
    data: {
      mname: `ns.${config.domain}`,
      rname: `hostmaster.${config.domain}`,
      serial: Math.floor(Date.now() / 1000) >>> 0,
      refresh: 3600,
      retry: 600,
      expire: 86400,
      minimum: 0,
    },
  };
}

/** An authoritative reply without data (NXDOMAIN, or NOERROR when the name exists without records of the type), with the SOA. */
export function noData(request: DecodedPacket, config: DnsConfig, rcode: number): Packet {
  const out = reply(request, rcode, { authoritative: true, recursion: config.recursors.length > 0 });
  out.authorities!.push(soaRecord(config));
  return withEdns(request, out);
}

/** The reply carries EDNS when the request did, with the size the request offered (setEDNS). */
function withEdns(request: DecodedPacket, out: Packet): Packet {
  const edns = ednsOf(request);
  if (edns) {
    out.additionals!.push({ type: 'OPT', name: '.', udpPayloadSize: edns.udpPayloadSize, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] });
  }
  return out;
}

/** A uniformly random order (Fisher-Yates), as the public service shuffles the instances of each answer. */
function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * The address of a node or service for a question type (dnsutil.TranslateAddress): its `lan_ipv4`
 * tagged address for A questions, `lan_ipv6` for AAAA, either for the others, else its own address.
 */
function translate(address: string, tagged: Readonly<Record<string, string>>, qtype: string): string {
  const v4 = qtype === 'AAAA' ? undefined : tagged.lan_ipv4;
  const v6 = qtype === 'A' ? undefined : tagged.lan_ipv6;
  return v4 || v6 || address;
}

const nodeName = (node: string, config: DnsConfig) => `${node}.node.${LOCAL_DATACENTER}.${config.domain}`;
const serviceName = (service: string, ns: string, config: DnsConfig) =>
  ns === 'default' ? `${service}.service.${LOCAL_DATACENTER}.${config.domain}` : `${service}.service.${ns}.${LOCAL_DATACENTER}.${config.domain}`;

/** dns-packet's types leave out ANY (255), which it decodes as 'ANY'. */
const isAny = (q: Question): boolean => (q.type as string) === 'ANY';

const A_TYPES = ['SRV', 'A', 'ANY', 'NS', 'TXT'];
const AAAA_TYPES = ['SRV', 'AAAA', 'ANY', 'NS', 'TXT'];

/**
 * The records of one address (getAnswerExtrasForIP): for SRV, the SRV record whose target is
 * `target` (or the address's `.addr.` name when a service's own address differs from its node's)
 * and the A/AAAA record of that target among the additionals; for A/AAAA/ANY, the address under
 * the question's name. An address of the other family than asked gives nothing.
 */
function ipEntry(
  q: Question, ip: string, target: string, ttl: number, config: DnsConfig, srv?: { port: number; weight: number; nodeAddress?: string },
): Entry {
  const v4 = isIP(ip) === 4;
  if (!(v4 ? A_TYPES : AAAA_TYPES).includes(q.type)) return { answers: [], extras: [] };
  const answers: Answer[] = [];
  const extras: Answer[] = [];
  let name = q.name;
  if (q.type === 'SRV' && srv) {
    name = srv.nodeAddress !== undefined && srv.nodeAddress !== ip ? addrName(ip, config.domain) : target;
    answers.push({ type: 'SRV', name: q.name, ttl, data: { priority: 1, weight: srv.weight, port: srv.port, target: name } });
  }
  const record: Answer = { type: v4 ? 'A' : 'AAAA', name, ttl, data: ip };
  const explicitly = q.type === record.type || isAny(q);
  (explicitly ? answers : extras).push(record);
  return { answers, extras };
}

/** A host name (not an IP address): an SRV record naming it, or a CNAME to it (makeRecordFromFQDN; Hangar resolves neither further). */
function hostEntry(q: Question, host: string, ttl: number, srv: { port: number; weight: number }): Entry {
  if (q.type === 'SRV') return { answers: [{ type: 'SRV', name: q.name, ttl, data: { priority: 1, weight: srv.weight, port: srv.port, target: host } }], extras: [] };
  return { answers: [{ type: 'CNAME', name: q.name, ttl, data: host }], extras: [], cname: true };
}

/** A node's metadata as TXT records (RFC 1464 `key=value`; `rfc1035-` keys as their bare value). */
function metaTxt(name: string, node: DnsNode, ttl: number): Answer[] {
  return Object.entries(node.meta).map(([key, value]) => {
    const text = key.toLowerCase().startsWith('rfc1035-') ? value : `${rfc1464Key(key)}=${value.replace(/`/g, '``')}`;
    return { type: 'TXT', name, ttl, data: [text] } as Answer;
  });
}

function rfc1464Key(key: string): string {
  const escaped = key.replace(/`/g, '``').replace(/=/g, '`=');
  return escaped.replace(/^ +/, (s) => '` '.repeat(s.length)).replace(/ +$/, (s) => '` '.repeat(s.length));
}

/** The records of a node question: its address (or a CNAME to its host name), its meta as TXT for ANY and TXT questions. */
function nodeEntry(q: Question, node: DnsNode, config: DnsConfig): Entry {
  const ttl = config.nodeTtl;
  const address = translate(node.address, node.taggedAddresses, q.type);
  const none = { port: 0, weight: 1 };
  const entry = isIP(address) ? ipEntry(q, address, nodeName(node.name, config), ttl, config, none)
    : address ? hostEntry(q, address, ttl, none) : { answers: [], extras: [] };
  if (isAny(q) || q.type === 'TXT') entry.answers.push(...metaTxt(q.name, node, ttl));
  return entry;
}

/**
 * The records of a service instance (getAnswerExtrasForAddressAndTarget): the service's address,
 * else its node's; an IP address answers with A/AAAA (SRV targets the node's name, or the
 * address's `.addr.` name), a host name with a CNAME (SRV targets it).
 */
function instanceEntry(q: Question, instance: DnsInstance, ttl: number, config: DnsConfig): Entry {
  const { node, service } = instance;
  const tagged = Object.fromEntries(Object.entries(service.taggedAddresses).map(([k, v]) => [k, v.Address]));
  const serviceAddress = translate(service.address, tagged, q.type);
  const nodeAddress = translate(node.address, node.taggedAddresses, q.type);
  const srv = { port: service.port, weight: instance.weight };
  if (!serviceAddress) {
    if (!nodeAddress) return { answers: [], extras: [] };
    return isIP(nodeAddress) ? ipEntry(q, nodeAddress, nodeName(node.name, config), ttl, config, srv) : hostEntry(q, nodeAddress, ttl, srv);
  }
  if (isIP(serviceAddress)) {
    return ipEntry(q, serviceAddress, serviceName(service.name, service.ns, config), ttl, config, { ...srv, nodeAddress: node.address });
  }
  if (serviceAddress === q.name && isIP(nodeAddress)) return ipEntry(q, nodeAddress, nodeName(node.name, config), ttl, config, srv);
  return hostEntry(q, serviceAddress, ttl, srv);
}

/** The servers as the domain's name servers: NS records (answers, or authority under an SOA) with their addresses. */
function serverEntries(q: Question, instances: readonly DnsInstance[], config: DnsConfig, inAuthority: boolean): { ns: Answer[]; extras: Answer[] } {
  const ttl = serviceTtlOf(config, 'consul');
  const ns: Answer[] = [];
  const extras: Answer[] = [];
  for (const { node } of instances) {
    const fqdn = nodeName(node.name, config);
    ns.push({ type: 'NS', name: config.domain, ttl, data: fqdn });
    const ip = translate(node.address, node.taggedAddresses, inAuthority ? 'SOA' : q.type);
    if (isIP(ip)) extras.push({ type: isIP(ip) === 4 ? 'A' : 'AAAA', name: fqdn, ttl, data: ip });
  }
  return { ns, extras };
}

/** The reply to a question of the domain whose lookup found something (undefined: NXDOMAIN). */
export function answer(request: DecodedPacket, query: DnsQuery, found: Found, config: DnsConfig, transport: 'udp' | 'tcp'): Packet {
  const q = questionOf(request)!;
  const out = reply(request, RCODE.NOERROR, { authoritative: true, recursion: config.recursors.length > 0 });
  let entries: Entry[] = [];
  if (query.kind === 'servers' && found.kind === 'instances') {
    const servers = serverEntries(q, shuffled(found.instances), config, q.type === 'SOA');
    if (q.type === 'SOA') {
      out.answers!.push(soaRecord(config));
      out.authorities!.push(...servers.ns);
    } else {
      out.answers!.push(...servers.ns);
    }
    out.additionals!.push(...servers.extras);
    return withEdns(request, out);
  }
  switch (found.kind) {
    case 'ip':
      entries = [ipEntry(q, found.ip, q.name, config.nodeTtl, config)];
      if (entries[0].answers.length === 0 && entries[0].extras.length === 0) {
        // `.addr.` names answer their address whatever the type asked (the public service skips the type check).
        entries = [{ answers: [{ type: isIP(found.ip) === 4 ? 'A' : 'AAAA', name: q.name, ttl: config.nodeTtl, data: found.ip }], extras: [] }];
      }
      break;
    case 'ptr':
      entries = found.names.map((n) => ({
        answers: [{ type: 'PTR', name: q.name, ttl: 0, data: n.type === 'node' ? nodeName(n.name, config) : serviceName(n.name, n.ns, config) } as Answer],
        extras: [],
      }));
      break;
    case 'nodes':
      entries = found.nodes.map((node) => nodeEntry(q, node, config));
      break;
    case 'instances': {
      const ttl = query.kind === 'service' ? serviceTtlOf(config, query.service) : config.nodeTtl;
      entries = dedupe(q, shuffled(found.instances).map((i) => ({ instance: i, entry: instanceEntry(q, i, ttl, config) })));
      break;
    }
  }
  if (entries.every((e) => e.answers.length === 0 && e.extras.length === 0)) return noData(request, config, RCODE.NOERROR);
  // CNAME answers only when no result has an address, and then only the first (appendResultsToDNSResponse).
  if (q.type !== 'SRV' && entries.some((e) => e.cname)) {
    const addressed = entries.filter((e) => !e.cname && e.answers.length > 0);
    entries = addressed.length > 0 ? [...addressed, ...entries.filter((e) => e.answers.length === 0)] : [entries.find((e) => e.cname)!];
  }
  return trimmed(request, out, entries, config, transport);
}

/** One entry per distinct answer: SRV by node, address and port; the others by their first record. */
function dedupe(q: Question, items: readonly { instance: DnsInstance; entry: Entry }[]): Entry[] {
  const seen = new Set<string>();
  const out: Entry[] = [];
  for (const { instance, entry } of items) {
    const first = entry.answers[0];
    const key = q.type === 'SRV'
      ? `${instance.node.name}:${instance.service.address || instance.node.address}:${instance.service.port}`
      : first ? `${first.type}:${first.name}:${JSON.stringify((first as { data?: unknown }).data)}` : undefined;
    if (key !== undefined) {
      if (seen.has(key)) continue;
      seen.add(key);
    }
    out.push(entry);
  }
  return out;
}

/**
 * The entries that fit (trimDNSResponse): over UDP without EDNS at most `udpAnswerLimit` answers,
 * and over UDP the size the client offered (512 bytes without EDNS), over TCP 64 KiB; a reply
 * trimmed over UDP has the TC bit, so that resolvers ask again over TCP and get them all.
 */
function trimmed(request: DecodedPacket, out: Packet & { flags: number }, all: readonly Entry[], config: DnsConfig, transport: 'udp' | 'tcp'): Packet {
  const edns = ednsOf(request);
  const maxSize = transport === 'tcp' ? TCP_MAX_SIZE : Math.max(UDP_MIN_SIZE, edns?.udpPayloadSize ?? 0);
  let entries = [...all];
  if (transport === 'udp' && maxSize === UDP_MIN_SIZE) {
    let count = 0;
    const kept: Entry[] = [];
    for (const entry of entries) {
      count += entry.answers.length;
      if (count > config.udpAnswerLimit && kept.length > 0) break;
      kept.push(entry);
    }
    entries = kept;
  }
  const build = (list: readonly Entry[]) => withEdns(request, {
    ...out,
    answers: [...(out.answers ?? []), ...list.flatMap((e) => e.answers)],
    additionals: [...(out.additionals ?? []), ...list.flatMap((e) => e.extras)],
  });
  let packet = build(entries);
  while (entries.length > 1 && dnsPacket.encodingLength(packet) > maxSize) {
    entries = entries.slice(0, -1);
    packet = build(entries);
  }
  if (entries.length < all.length && transport === 'udp') packet.flags = (packet.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE;
  return packet;
}
