/* eslint-disable no-bitwise -- DNS header flags are bits. */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import * as dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, Packet, RecordType } from 'dns-packet';

/** A decoded reply: dns-packet decodes the rcode, which its types leave out. */
type Reply = DecodedPacket & { rcode: string };
const ttlOf = (a: Answer | undefined) => (a as { ttl?: number } | undefined)?.ttl;
import { CatalogServer, startCatalogServer } from './helpers';
import { DEFAULT_DNS_CONFIG, DnsConfig } from '../../../src/engine/catalog/dns/config';
import { DnsServer, tcpExchange, udpExchange } from '../../../src/engine/catalog/dns/server';
import { startServerNode } from '../../../src/engine/catalog/servers';
import { hangar, startServerProcess } from '../../helpers/cli';
import { STORAGE_KINDS } from '../../helpers/storage';

/** dig (Debian's dnsutils); under CI a missing one is a failure. */
const DIG = spawnSync('dig', ['-v'], { encoding: 'utf8' }).status === 0;
if (!DIG && process.env.CI) throw new Error('dig is not installed: run scripts/setup (dnsutils)');
const withDig = DIG ? test : test.skip;

let nextId = 1;

/** One question over UDP or TCP to a DNS server, decoded. */
async function ask(server: DnsServer, name: string, type: string, options: { tcp?: boolean; edns?: number } = {}): Promise<Reply> {
  const query = dnsPacket.encode({
    type: 'query',
    id: nextId++ & 0xffff,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: type as RecordType, name }],
    additionals: options.edns
      ? [{ type: 'OPT', name: '.', udpPayloadSize: options.edns, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }]
      : [],
  });
  const reply = await (options.tcp ? tcpExchange : udpExchange)(server.host, server.port, query, 5000);
  return dnsPacket.decode(reply) as Reply;
}

const dataOf = (p: Packet, type: string, section: 'answers' | 'additionals' | 'authorities' = 'answers') =>
  (p[section] ?? []).filter((a) => a.type === type).map((a) => (a as { data: unknown }).data);

/** dig's output (run asynchronously: the server answers from this process). */
async function dig(server: DnsServer, ...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)('dig', [`@${server.host}`, '-p', String(server.port), '+time=5', '+tries=1', ...args], { encoding: 'utf8' });
  return stdout;
}

describe.each(STORAGE_KINDS)('catalog DNS interface (%s)', (kind) => {
  let s: CatalogServer;
  let dns: DnsServer;
  const servers: DnsServer[] = [];
  const start = async (config: Partial<DnsConfig> = {}, engine = s.engine) => {
    const server = await DnsServer.start(engine, { ...DEFAULT_DNS_CONFIG, ...config }, { host: '127.0.0.1', port: 0 }, engine.logger);
    servers.push(server);
    return server;
  };
  const register = async (body: unknown) => {
    const res = await s.root('PUT', '/v1/catalog/register', body);
    expect(res.status).toBe(200);
  };
  const check = (serviceId: string, status: string) => ({ CheckID: `${serviceId}-check`, Name: 'c', ServiceID: serviceId, Status: status });

  beforeAll(async () => {
    s = await startCatalogServer(kind, { defaultPolicy: 'allow', catalogNode: { name: 'hangar-1', address: '127.0.0.1' } });
    await startServerNode(s.engine);
    expect((await s.root('PUT', '/v1/namespace', { Name: 'team' })).status).toBe(200);
    await register({
      Node: 'web-node-1',
      Address: '10.0.0.1',
      NodeMeta: { rack: 'r1' },
      Service: { ID: 'web-1', Service: 'web', Tags: ['primary', 'v1'], Port: 8080, Weights: { Passing: 5, Warning: 1 } },
      Check: check('web-1', 'passing'),
    });
    await register({
      Node: 'web-node-2',
      Address: '10.0.0.2',
      Service: { ID: 'web-2', Service: 'web', Tags: ['secondary'], Address: '10.1.0.2', Port: 8081 },
      Check: check('web-2', 'passing'),
    });
    await register({ Node: 'web-node-3', Address: '10.0.0.3', Service: { ID: 'web-3', Service: 'web', Port: 8082 }, Check: check('web-3', 'critical') });
    await register({
      Node: 'web-node-4',
      Address: '10.0.0.4',
      Service: { ID: 'web-4', Service: 'web', Port: 8083, Weights: { Passing: 5, Warning: 2 } },
      Check: check('web-4', 'warning'),
    });
    await register({ Node: 'api-node', Address: '10.0.1.1', Service: { ID: 'api', Service: 'api', Port: 9000, Namespace: 'team' } });
    await register({ Node: 'v6-node', Address: 'fd00::1', Service: { ID: 'v6', Service: 'v6', Port: 1 } });
    await register({ Node: 'ext-node', Address: '10.0.2.1', Service: { ID: 'ext', Service: 'ext', Address: 'db.example.com', Port: 5432 } });
    for (let i = 1; i <= 20; i++) {
      await register({ Node: `big-${i}`, Address: `10.2.0.${i}`, Service: { ID: 'big', Service: 'big', Port: 7000 + i } });
    }
    dns = await start();
  });
  afterAll(async () => {
    await Promise.all(servers.map((x) => x.close()));
    await s.close();
  });

  test('A: the passing and warning instances, the service address before the node address, authoritative', async () => {
    const p = await ask(dns, 'web.service.consul', 'A', { edns: 4096 });
    expect(p.rcode).toBe('NOERROR');
    expect(p.flag_aa).toBe(true);
    expect(p.flag_ra).toBe(false);
    expect(dataOf(p, 'A').sort()).toEqual(['10.0.0.1', '10.0.0.4', '10.1.0.2']);
    expect(p.answers!.every((a) => a.name === 'web.service.consul' && ttlOf(a) === 0)).toBe(true);
    // The datacenter may be named; case does not matter.
    expect(dataOf(await ask(dns, 'WEB.service.dc1.consul', 'A', { edns: 4096 }), 'A').sort()).toEqual(['10.0.0.1', '10.0.0.4', '10.1.0.2']);
  });

  test('SRV: ports, weights, node targets or .addr. targets, with their addresses among the additionals', async () => {
    const p = await ask(dns, 'web.service.consul', 'SRV', { edns: 4096 });
    const srv = dataOf(p, 'SRV') as { port: number; weight: number; target: string; priority: number }[];
    expect(srv.map((r) => [r.port, r.weight, r.target]).sort()).toEqual([
      [8080, 5, 'web-node-1.node.dc1.consul'],
      [8081, 1, '0a010002.addr.dc1.consul'],
      [8083, 2, 'web-node-4.node.dc1.consul'],
    ]);
    expect(srv.every((r) => r.priority === 1)).toBe(true);
    const extra = Object.fromEntries((p.additionals ?? []).filter((a) => a.type === 'A').map((a) => [a.name, (a as { data: string }).data]));
    expect(extra).toEqual({ 'web-node-1.node.dc1.consul': '10.0.0.1', '0a010002.addr.dc1.consul': '10.1.0.2', 'web-node-4.node.dc1.consul': '10.0.0.4' });
  });

  test('tags: <tag>.<service>.service and RFC 2782 _<service>._<tag>, _tcp meaning any', async () => {
    expect(dataOf(await ask(dns, 'primary.web.service.consul', 'A'), 'A')).toEqual(['10.0.0.1']);
    expect((dataOf(await ask(dns, '_web._secondary.service.consul', 'SRV'), 'SRV') as { port: number }[]).map((r) => r.port)).toEqual([8081]);
    expect(dataOf(await ask(dns, '_web._tcp.service.consul', 'SRV', { edns: 4096 }), 'SRV')).toHaveLength(3);
    expect((await ask(dns, 'nosuchtag.web.service.consul', 'A')).rcode).toBe('NXDOMAIN');
  });

  test('nodes: A by name (with or without the datacenter), TXT of its meta', async () => {
    expect(dataOf(await ask(dns, 'web-node-1.node.consul', 'A'), 'A')).toEqual(['10.0.0.1']);
    expect(dataOf(await ask(dns, 'web-node-1.node.dc1.consul', 'A'), 'A')).toEqual(['10.0.0.1']);
    expect(dataOf(await ask(dns, 'web-node-1.node.consul', 'TXT'), 'TXT')).toEqual([[Buffer.from('rack=r1')]]);
    expect(dataOf(await ask(dns, 'v6-node.node.consul', 'AAAA'), 'AAAA')).toEqual(['fd00::1']);
    // An IPv6 node has no A record: the name exists, without data (NOERROR with the SOA).
    const none = await ask(dns, 'v6-node.node.consul', 'A');
    expect([none.rcode, none.answers, dataOf(none, 'SOA', 'authorities').length]).toEqual(['NOERROR', [], 1]);
  });

  test('namespaces: <service>.service.<ns>.ns, the older <ns>.<dc> form; other namespaces do not see it', async () => {
    expect(dataOf(await ask(dns, 'api.service.team.ns.consul', 'A'), 'A')).toEqual(['10.0.1.1']);
    expect(dataOf(await ask(dns, 'api.service.team.ns.dc1.dc.consul', 'A'), 'A')).toEqual(['10.0.1.1']);
    expect(dataOf(await ask(dns, 'api.service.team.dc1.consul', 'A'), 'A')).toEqual(['10.0.1.1']);
    expect((await ask(dns, 'api.service.consul', 'A')).rcode).toBe('NXDOMAIN');
    expect(dataOf(await ask(dns, 'api.service.team.ns.consul', 'SRV'), 'SRV')).toEqual([expect.objectContaining({ target: 'api-node.node.dc1.consul' })]);
  });

  test('.addr. names, host-name services as CNAME, PTR', async () => {
    expect(dataOf(await ask(dns, '0a000001.addr.dc1.consul', 'A'), 'A')).toEqual(['10.0.0.1']);
    expect(dataOf(await ask(dns, 'fd000000000000000000000000000001.addr.consul', 'AAAA'), 'AAAA')).toEqual(['fd00::1']);
    expect(dataOf(await ask(dns, 'ext.service.consul', 'A'), 'CNAME')).toEqual(['db.example.com']);
    expect(dataOf(await ask(dns, 'ext.service.consul', 'SRV'), 'SRV')).toEqual([expect.objectContaining({ target: 'db.example.com', port: 5432 })]);
    expect(dataOf(await ask(dns, '1.0.0.10.in-addr.arpa', 'PTR'), 'PTR')).toEqual(['web-node-1.node.dc1.consul']);
  });

  test('unknown names, other datacenters, prepared queries: NXDOMAIN with the SOA', async () => {
    for (const name of ['nope.service.consul', 'web.service.dc2.consul', 'x.query.consul', 'nope.node.consul', 'foo.consul', 'web.connect.consul']) {
      const p = await ask(dns, name, 'A');
      expect([name, p.rcode, p.flag_aa]).toEqual([name, 'NXDOMAIN', true]);
      const soa = dataOf(p, 'SOA', 'authorities') as { mname: string; rname: string; minimum: number }[];
      expect(soa).toEqual([expect.objectContaining({ mname: 'ns.consul', rname: 'hostmaster.consul', refresh: 3600, retry: 600, expire: 86400, minimum: 0 })]);
    }
  });

  test('SOA and NS of the domain: the servers as name servers', async () => {
    const ns = await ask(dns, 'consul', 'NS');
    expect(dataOf(ns, 'NS')).toEqual(['hangar-1.node.dc1.consul']);
    expect(dataOf(ns, 'A', 'additionals')).toEqual(['127.0.0.1']);
    const soa = await ask(dns, 'consul', 'SOA');
    expect(dataOf(soa, 'SOA')).toHaveLength(1);
    expect(dataOf(soa, 'NS', 'authorities')).toEqual(['hangar-1.node.dc1.consul']);
  });

  test('UDP without EDNS: 3 answers and the TC bit; with EDNS what fits; TCP: every answer', async () => {
    const udp = await ask(dns, 'big.service.consul', 'SRV');
    expect(udp.flag_tc).toBe(true);
    expect(udp.answers).toHaveLength(3);
    expect(udp.additionals).toHaveLength(3);
    const edns = await ask(dns, 'big.service.consul', 'A', { edns: 1232 });
    expect(edns.flag_tc).toBe(false);
    expect(edns.answers).toHaveLength(20);
    const smallEdns = await ask(dns, 'big.service.consul', 'SRV', { edns: 600 });
    expect(smallEdns.flag_tc).toBe(true);
    expect(dnsPacket.encodingLength(smallEdns)).toBeLessThanOrEqual(600);
    const tcp = await ask(dns, 'big.service.consul', 'SRV', { tcp: true });
    expect(tcp.flag_tc).toBe(false);
    expect(tcp.answers).toHaveLength(20);
    expect(tcp.additionals).toHaveLength(20);
  });

  test('answers come in a random order', async () => {
    const orders = new Set<string>();
    for (let i = 0; i < 20; i++) orders.add(JSON.stringify(dataOf(await ask(dns, 'web.service.consul', 'A', { edns: 4096 }), 'A')));
    expect(orders.size).toBeGreaterThan(1);
  });

  test('a check turning critical removes the instance; passing again brings it back', async () => {
    await register({ Node: 'web-node-1', Address: '10.0.0.1', Check: check('web-1', 'critical'), SkipNodeUpdate: true });
    expect(dataOf(await ask(dns, 'web.service.consul', 'A', { edns: 4096 }), 'A').sort()).toEqual(['10.0.0.4', '10.1.0.2']);
    await register({ Node: 'web-node-1', Address: '10.0.0.1', Check: check('web-1', 'passing'), SkipNodeUpdate: true });
    expect(dataOf(await ask(dns, 'web.service.consul', 'A', { edns: 4096 }), 'A').sort()).toEqual(['10.0.0.1', '10.0.0.4', '10.1.0.2']);
  });

  test('TTLs, only-passing and another domain as configured', async () => {
    const other = await start({ domain: 'example', nodeTtl: 30, serviceTtl: new Map([['web*', 10]]), onlyPassing: true });
    const web = await ask(other, 'web.service.example', 'A', { edns: 4096 });
    expect(dataOf(web, 'A').sort()).toEqual(['10.0.0.1', '10.1.0.2']);
    expect(web.answers!.every((a) => ttlOf(a) === 10)).toBe(true);
    expect(ttlOf((await ask(other, 'api-node.node.example', 'A')).answers![0])).toBe(30);
    expect((await ask(other, 'web.service.consul', 'A')).rcode).toBe('REFUSED');
  });

  test('names outside the domain: REFUSED without recursors, forwarded with them', async () => {
    const refused = await ask(dns, 'example.com', 'A');
    expect([refused.rcode, refused.flag_aa, refused.answers]).toEqual(['REFUSED', false, []]);
    // The upstream: another listener answering the domain "upstream".
    const upstream = await start({ domain: 'upstream' });
    const forwarding = await start({ recursors: [`127.0.0.1:${upstream.port}`] });
    const forwarded = await ask(forwarding, 'web-node-2.node.upstream', 'A');
    expect([forwarded.rcode, dataOf(forwarded, 'A')]).toEqual(['NOERROR', ['10.0.0.2']]);
    expect((await ask(forwarding, 'web-node-2.node.upstream', 'A', { tcp: true })).answers).toHaveLength(1);
    expect((await ask(forwarding, 'web.service.consul', 'A')).flag_ra).toBe(true);
    const dead = await start({ recursors: ['127.0.0.1:9'], recursorTimeoutMs: 200 });
    expect((await ask(dead, 'example.com', 'A')).rcode).toBe('SERVFAIL');
  });

  test('ACL: the DNS token reads what its service:read and node:read allow; the rest does not exist', async () => {
    (s.engine as { catalogDefaultPolicy: string }).catalogDefaultPolicy = 'deny';
    try {
      expect((await ask(dns, 'web.service.consul', 'A')).rcode).toBe('NXDOMAIN');
      expect((await ask(dns, 'web-node-1.node.consul', 'A')).rcode).toBe('NXDOMAIN');
      const token = await s.tokenWithRules('service "web" { policy = "read" }\nnode_prefix "web-node-1" { policy = "read" }');
      const withToken = await start({ token });
      expect(dataOf(await ask(withToken, 'web.service.consul', 'A'), 'A')).toEqual(['10.0.0.1']);
      expect((await ask(withToken, 'web-node-2.node.consul', 'A')).rcode).toBe('NXDOMAIN');
      expect((await ask(withToken, 'big.service.consul', 'A')).rcode).toBe('NXDOMAIN');
      const unknown = await start({ token: 'not-a-token' });
      expect((await ask(unknown, 'web.service.consul', 'A')).rcode).toBe('SERVFAIL');
    } finally {
      (s.engine as { catalogDefaultPolicy: string }).catalogDefaultPolicy = 'allow';
    }
  });

  test('malformed messages get FORMERR or nothing; the server goes on', async () => {
    const reply = await udpExchange(dns.host, dns.port, Buffer.from([0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0xff]), 2000);
    expect([reply.readUInt16BE(0), reply[3] & 0xf]).toEqual([0x1234, 1]);
    expect((await ask(dns, 'web.service.consul', 'A')).rcode).toBe('NOERROR');
  });

  describe('with dig', () => {
    withDig('A, SRV, tags, nodes, namespaces', async () => {
      expect((await dig(dns, '+short', 'web.service.consul', 'A')).trim().split('\n').sort()).toEqual(['10.0.0.1', '10.0.0.4', '10.1.0.2']);
      expect((await dig(dns, '+short', 'web.service.consul', 'SRV')).trim().split('\n').sort()).toEqual([
        '1 1 8081 0a010002.addr.dc1.consul.', '1 2 8083 web-node-4.node.dc1.consul.', '1 5 8080 web-node-1.node.dc1.consul.',
      ]);
      expect((await dig(dns, '+short', '_web._primary.service.consul', 'SRV')).trim()).toBe('1 5 8080 web-node-1.node.dc1.consul.');
      expect((await dig(dns, '+short', 'web-node-2.node.consul')).trim()).toBe('10.0.0.2');
      expect((await dig(dns, '+short', 'api.service.team.ns.consul')).trim()).toBe('10.0.1.1');
    });

    withDig('NXDOMAIN with the SOA; REFUSED outside the domain', async () => {
      const out = await dig(dns, 'nope.service.consul');
      expect(out).toMatch(/status: NXDOMAIN/);
      expect(out).toMatch(/flags: qr aa rd;/);
      expect(out).toMatch(/AUTHORITY SECTION:\nconsul\.\s+0\s+IN\s+SOA\s+ns\.consul\. hostmaster\.consul\. \d+ 3600 600 86400 0/);
      expect(await dig(dns, 'example.com')).toMatch(/status: REFUSED/);
    });

    withDig('truncation over UDP, then dig asks again over TCP', async () => {
      const truncated = await dig(dns, '+noedns', '+ignore', 'big.service.consul', 'SRV');
      expect(truncated).toMatch(/flags: qr aa tc rd;/);
      expect(truncated).toMatch(/ANSWER: 3,/);
      const retried = await dig(dns, '+noedns', 'big.service.consul', 'SRV');
      expect(retried).toMatch(/Truncated, retrying in TCP mode/);
      expect(retried).toMatch(/ANSWER: 20,/);
      expect((await dig(dns, '+tcp', '+short', 'big.service.consul')).trim().split('\n')).toHaveLength(20);
    });
  });
});

describe('hangar server and its DNS flags', () => {
  test('the server answers DNS on --dns-addr with its own node; off means none; bad flags are usage errors', async () => {
    const server = await startServerProcess(['--dev', '--node-name', 'dns-test-node', '--dns-domain', 'hangar.test']);
    try {
      expect(server.dns).toMatch(/^127\.0\.0\.1:\d+$/);
      const [host, port] = server.dns!.split(':');
      const listener = { host, port: Number(port) } as DnsServer;
      expect(dataOf(await ask(listener, 'consul.service.hangar.test', 'A'), 'A')).toEqual(['127.0.0.1']);
      expect(dataOf(await ask(listener, 'dns-test-node.node.hangar.test', 'A', { tcp: true }), 'A')).toEqual(['127.0.0.1']);
    } finally {
      await server.stop();
    }
    const off = await startServerProcess(['--dev', '--dns-addr', 'off']);
    expect(off.dns).toBeUndefined();
    await off.stop();
    for (const [flag, value, message] of [
      ['--dns-addr', 'nowhere', '--dns-addr'],
      ['--dns-recursors', 'dns.example.com', '--dns-recursors'],
      ['--dns-node-ttl', 'soon', '--dns-node-ttl'],
      ['--dns-udp-answer-limit', '0', '--dns-udp-answer-limit'],
      ['--dns-domain', 'bad domain', '--dns-domain'],
    ]) {
      const res = hangar(['server', '--dev', flag, value]);
      expect([flag, res.code]).toEqual([flag, 2]);
      expect(res.stderr).toContain(message);
    }
  });
});
