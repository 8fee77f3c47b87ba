import { isIP } from 'node:net';
import { parseDuration } from '../route';
import { canonical } from './names';

/** How the DNS interface answers: the public service's `domain` and `dns_config` settings that Hangar has. */
export interface DnsConfig {
  /** The domain answered, canonical ("consul"). */
  readonly domain: string;
  /** The DNS token's secret ('': the anonymous token). */
  readonly token: string;
  /** TTL of node answers, seconds (dns_config.node_ttl; 0 by default). */
  readonly nodeTtl: number;
  /** TTL of a service's answers, seconds, by exact name and then longest `prefix*` (dns_config.service_ttl); node TTL otherwise. */
  readonly serviceTtl: ReadonlyMap<string, number>;
  /** Leave out instances with a warning check too (dns_config.only_passing). */
  readonly onlyPassing: boolean;
  /** At most this many answers in a UDP reply without EDNS (dns_config.udp_answer_limit; 3, capped at 8). */
  readonly udpAnswerLimit: number;
  /** Upstream servers (IP:port) for names outside the domain; none: REFUSED. */
  readonly recursors: readonly string[];
  /** How long each recursor is waited for, ms (dns_config.recursor_timeout). */
  readonly recursorTimeoutMs: number;
}

export const DEFAULT_DNS_CONFIG: DnsConfig = {
  domain: 'consul',
  token: '',
  nodeTtl: 0,
  serviceTtl: new Map(),
  onlyPassing: false,
  udpAnswerLimit: 3,
  recursors: [],
  recursorTimeoutMs: 2000,
};

/** The public service's limit on answers in a UDP reply without EDNS, whatever udp_answer_limit says. */
const MAX_UDP_ANSWER_LIMIT = 8;

/** A Go duration ("30s", "1m") as whole seconds; throws a message naming `what` otherwise. */
function ttlSeconds(what: string, text: string): number {
  const ns = parseDuration(text.trim());
  if (ns === undefined || ns < 0) throw new Error(`${what}: "${text}" is not a duration (such as 30s or 5m)`);
  return Math.floor(ns / 1e9);
}

/** `--dns-service-ttl`: one duration for every service, or `name=duration` pairs (`prefix*=` matches by prefix). */
export function parseServiceTtl(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const item of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const at = item.indexOf('=');
    if (at < 0) out.set('*', ttlSeconds('--dns-service-ttl', item));
    else out.set(item.slice(0, at).trim(), ttlSeconds(`--dns-service-ttl ${item.slice(0, at)}`, item.slice(at + 1)));
  }
  return out;
}

/** The TTL of a service's answers: its exact name, else the longest matching `prefix*`, else the node TTL. */
export function serviceTtlOf(config: DnsConfig, service: string): number {
  const exact = config.serviceTtl.get(service);
  if (exact !== undefined) return exact;
  let best: { length: number; ttl: number } | undefined;
  for (const [key, ttl] of config.serviceTtl) {
    if (!key.endsWith('*')) continue;
    const prefix = key.slice(0, -1);
    if (service.startsWith(prefix) && (!best || prefix.length > best.length)) best = { length: prefix.length, ttl };
  }
  return best?.ttl ?? config.nodeTtl;
}

/** `--dns-recursors`: IP addresses with an optional port (53 by default), comma-separated, as `host:port`. */
export function parseRecursors(text: string): string[] {
  return text.split(',').map((s) => s.trim()).filter(Boolean).map((item) => {
    const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(item) ?? (isIP(item) === 6 ? [item, item, undefined] : /^([^:]+)(?::(\d+))?$/.exec(item));
    const host = m?.[1];
    const port = m?.[2] === undefined ? 53 : Number(m[2]);
    if (!host || isIP(host) === 0 || !(port >= 1 && port <= 65535)) {
      throw new Error(`--dns-recursors: "${item}" is not an IP address with an optional port (such as 10.0.0.2 or 10.0.0.2:5353)`);
    }
    return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
  });
}

const DOMAIN = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$/;

/** The options of `hangar server` that shape DNS answers, checked; messages name the flag. */
export function dnsConfigOf(options: {
  domain?: string; token?: string; nodeTtl?: string; serviceTtl?: string; onlyPassing?: boolean; udpAnswerLimit?: string; recursors?: string;
}): DnsConfig {
  const domain = canonical(options.domain ?? DEFAULT_DNS_CONFIG.domain);
  if (!DOMAIN.test(domain)) throw new Error(`--dns-domain: "${options.domain}" is not a domain name`);
  let udpAnswerLimit = DEFAULT_DNS_CONFIG.udpAnswerLimit;
  if (options.udpAnswerLimit !== undefined) {
    udpAnswerLimit = Number(options.udpAnswerLimit);
    if (!Number.isInteger(udpAnswerLimit) || udpAnswerLimit < 1) throw new Error(`--dns-udp-answer-limit must be a whole number of at least 1, not "${options.udpAnswerLimit}"`);
  }
  return {
    ...DEFAULT_DNS_CONFIG,
    domain,
    token: options.token ?? '',
    nodeTtl: options.nodeTtl === undefined ? 0 : ttlSeconds('--dns-node-ttl', options.nodeTtl),
    serviceTtl: options.serviceTtl === undefined ? new Map() : parseServiceTtl(options.serviceTtl),
    onlyPassing: options.onlyPassing === true,
    udpAnswerLimit: Math.min(udpAnswerLimit, MAX_UDP_ANSWER_LIMIT),
    recursors: options.recursors === undefined ? [] : parseRecursors(options.recursors),
  };
}
