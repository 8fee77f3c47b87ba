import { isIP } from 'node:net';
import { LOCAL_DATACENTER } from '../route';

/**
 * The names the catalog's DNS interface answers, as the public service (1.22) parses them
 * (agent/dns/router.go, router_query.go, parser.go): what a question asks for, before any lookup.
 */
export type DnsQuery =
  /** `[tag.]<service>.service[.<suffixes>]`, `_<service>._<tag|tcp>[.service][.<suffixes>]`. */
  | { readonly kind: 'service'; readonly service: string; readonly tag: string; readonly ns: string }
  /** `<node>.node[.<suffixes>]`. */
  | { readonly kind: 'node'; readonly node: string }
  /** `<hex IP>.addr[.<dc>]`: the address itself. */
  | { readonly kind: 'addr'; readonly ip: string }
  /** `<name>.query[.<suffixes>]`: a prepared query. */
  | { readonly kind: 'query'; readonly query: string }
  /** `<reversed IP>.in-addr.arpa` / `ip6.arpa`: the nodes and services at an address. */
  | { readonly kind: 'ptr'; readonly ip: string }
  /** SOA and NS questions about any name of the domain: the servers. */
  | { readonly kind: 'servers' }
  /** A name of the domain that names nothing Hangar answers (another datacenter, a peer, connect, ...). */
  | { readonly kind: 'none' };

/** Where a question goes: answered from the catalog, or outside the domain (recursion). */
export type Routed = { readonly inDomain: true; readonly query: DnsQuery } | { readonly inDomain: false };

/** Lower case, no trailing dot: how names are compared (dns.CanonicalName, without the root). */
export function canonical(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/**
 * Routes a question: `domain` is canonical ("consul"). SOA and NS questions in the domain ask for
 * the servers whatever the name; `arpa` names are the domain's too (PTR), as the public service serves them.
 */
export function routeQuestion(name: string, qtype: string, domain: string): Routed {
  const qname = canonical(name);
  let labels: string[];
  if (qname === domain) labels = [];
  else if (qname.endsWith(`.${domain}`)) labels = qname.slice(0, -domain.length - 1).split('.');
  else if (qname === 'arpa' || qname.endsWith('.arpa')) return { inDomain: true, query: qtype === 'SOA' || qtype === 'NS' ? { kind: 'servers' } : ptrQuery(qname) };
  else return { inDomain: false };
  if (qtype === 'SOA' || qtype === 'NS') return { inDomain: true, query: { kind: 'servers' } };
  return { inDomain: true, query: parseLabels(labels, qtype) };
}

const NONE: DnsQuery = { kind: 'none' };

/** The labels before the domain, read from the right: the first known type label splits parts from suffixes. */
function parseLabels(labels: readonly string[], qtype: string): DnsQuery {
  if (labels.length >= 2 && labels[1] === 'addr') return addrQuery(labels);
  for (let i = labels.length - 1; i >= 0; i--) {
    const label = labels[i];
    const parts = labels.slice(0, i);
    const suffixes = labels.slice(i + 1);
    switch (label) {
      case 'service':
        return serviceQuery(parts, suffixes);
      case 'node': {
        const tenancy = parseTenancy(suffixes);
        if (!tenancy || parts.length === 0) return NONE;
        return { kind: 'node', node: parts.join('.') };
      }
      case 'query': {
        const tenancy = parseTenancy(suffixes);
        if (!tenancy || parts.length === 0) return NONE;
        return { kind: 'query', query: parts.join('.') };
      }
      case 'connect': case 'virtual': case 'ingress': case 'workload':
        // Service mesh names: Hangar runs no mesh.
        return NONE;
      default:
        // In an SRV question the "service" label is optional (`_web._tcp.consul`).
        if (qtype === 'SRV' && label.startsWith('_')) return serviceQuery(labels.slice(0, i + 1), suffixes);
    }
  }
  return NONE;
}

function serviceQuery(parts: readonly string[], suffixes: readonly string[]): DnsQuery {
  const tenancy = parseTenancy(suffixes);
  const n = parts.length;
  if (!tenancy || n === 0) return NONE;
  const ns = tenancy.ns ?? 'default';
  // RFC 2782: _<service>._<tag>; `_tcp` is no tag.
  if (n === 2 && parts[0].startsWith('_') && parts[1].startsWith('_')) {
    const tag = parts[1].slice(1);
    return { kind: 'service', service: parts[0].slice(1), tag: tag === 'tcp' ? '' : tag, ns };
  }
  // <tag>[.<tag>...].<service>: a tag may have dots.
  return { kind: 'service', service: parts[n - 1], tag: parts.slice(0, n - 1).join('.'), ns };
}

/**
 * The labels after the type label (parser.go's parseLabels): none; `<dc>`; `<ns>.<dc>`; or pairs
 * `<value>.ns|ap|dc|cluster|peer|sg`. Undefined when they name another datacenter, a partition
 * other than default, a peer or a sameness group, or do not parse: nothing Hangar has.
 */
function parseTenancy(labels: readonly string[]): { ns?: string } | undefined {
  const localDc = (dc: string) => dc === LOCAL_DATACENTER;
  if (labels.length === 0) return {};
  if (labels.length === 1) return localDc(labels[0]) ? {} : undefined;
  if (labels.length % 2 !== 0 || labels.length > 6) return undefined;
  const pairs = new Map<string, string>();
  for (let i = 0; i < labels.length; i += 2) {
    const key = labels[i + 1] === 'cluster' ? 'dc' : labels[i + 1];
    if (!['ns', 'ap', 'dc', 'peer', 'sg'].includes(key)) {
      // The older `<namespace>.<datacenter>` form.
      if (labels.length === 2) return localDc(labels[1]) ? { ns: labels[0] } : undefined;
      return undefined;
    }
    pairs.set(key, labels[i]);
  }
  if (pairs.has('peer') || pairs.has('sg')) return undefined;
  if (pairs.has('ap') && pairs.get('ap') !== 'default') return undefined;
  if (pairs.has('dc') && !localDc(pairs.get('dc')!)) return undefined;
  return pairs.has('ns') ? { ns: pairs.get('ns') } : {};
}

/** `<hex>.addr[.<dc>]`: 8 hex digits are an IPv4 address, 32 an IPv6 one (router.go's buildAddressResults). */
function addrQuery(labels: readonly string[]): DnsQuery {
  const hex = labels[0];
  if (!/^[0-9a-f]+$/.test(hex) || (hex.length !== 8 && hex.length !== 32)) return NONE;
  const bytes = Buffer.from(hex, 'hex');
  const ip = bytes.length === 4 ? [...bytes].join('.') : (hex.match(/.{4}/g) ?? []).join(':');
  return { kind: 'addr', ip: normalizeIp(ip) };
}

/** An address as `<hex>.addr.<dc>.<domain>` names it (encodeIPAsFqdn). */
export function addrName(ip: string, domain: string): string {
  const hex = isIP(ip) === 4
    ? Buffer.from(ip.split('.').map(Number)).toString('hex')
    : expandIpv6(ip).replace(/:/g, '');
  return `${hex}.addr.${LOCAL_DATACENTER}.${domain}`;
}

/** The PTR name of an address's reverse lookup. */
function ptrQuery(qname: string): DnsQuery {
  if (qname.endsWith('.in-addr.arpa')) {
    const octets = qname.slice(0, -'.in-addr.arpa'.length).split('.').reverse();
    const ip = octets.join('.');
    return octets.length === 4 && isIP(ip) === 4 ? { kind: 'ptr', ip } : NONE;
  }
  if (qname.endsWith('.ip6.arpa')) {
    const nibbles = qname.slice(0, -'.ip6.arpa'.length).split('.').reverse();
    if (nibbles.length !== 32 || !nibbles.every((n) => /^[0-9a-f]$/.test(n))) return NONE;
    return { kind: 'ptr', ip: normalizeIp(nibbles.join('').match(/.{4}/g)!.join(':')) };
  }
  return NONE;
}

/** The eight groups of an IPv6 address, each of four hex digits. */
function expandIpv6(ip: string): string {
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((g) => g.padStart(4, '0')).join(':');
}

/** One spelling per address (IPv6 in its shortest form), so that addresses compare as text. */
export function normalizeIp(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
}
