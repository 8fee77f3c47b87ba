/**
 * The catalog's DNS interface: SRV queries per second for a service with 10 healthy instances
 * (`hangar server --dev`, dnsperf in its own process with EDNS and --outstanding questions in
 * flight, so that every answer carries all 10 SRV records and their addresses), next to the public
 * service's DNS (`consul agent -dev`, HANGAR_BENCH_CONSUL) answering the same question in the same
 * run; and the time from a backend that stopped (a real HTTP server, closed; its HTTP check run by
 * the server) to its removal from DNS answers, against interval + timeout + 1 s.
 *
 *   npx ts-node --transpile-only bench/catalog-dns.ts [--seconds 5] [--outstanding 100] [--interval 1s] [--timeout 1s]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as dnsPacket from 'dns-packet';
import { cpuTimeUs, record } from './autocannon';
import { consulBinary, startConsulDev } from './public-services';
import { udpExchange } from '../src/engine/catalog/dns/server';
import { startServerProcess } from '../test/helpers/cli';
import { freePort } from '../test/setup/postgres';

const TOKEN = 'bench-dns-root';
const SERVICE = 'bench';
const INSTANCES = 10;

interface DnsLoad {
  readonly qps: number;
  readonly cpuUs: number;
  readonly lost: number;
}

/** dnsperf against host:port for `seconds` (after a warm-up of 2 s): queries per second, the server's CPU per query. */
function dnsperf(host: string, port: number, seconds: number, outstanding: number, pid: number): DnsLoad {
  const data = join(mkdtempSync(join(tmpdir(), 'hangar-dns-bench-')), 'queries');
  writeFileSync(data, `${SERVICE}.service.consul SRV\n`);
  const run = (limit: number) => {
    const res = spawnSync('dnsperf', ['-s', host, '-p', String(port), '-d', data, '-l', String(limit), '-q', String(outstanding), '-e', '-t', '2'], { encoding: 'utf8' });
    if (res.status !== 0) throw new Error(`dnsperf: ${res.status} ${res.stderr}`);
    const number = (label: RegExp) => Number(label.exec(res.stdout)?.[1] ?? NaN);
    return { qps: number(/Queries per second:\s+([\d.]+)/), completed: number(/Queries completed:\s+(\d+)/), lost: number(/Queries lost:\s+(\d+)/) };
  };
  run(2);
  const before = cpuTimeUs(pid);
  const measured = run(seconds);
  return { qps: measured.qps, cpuUs: (cpuTimeUs(pid) - before) / Math.max(1, measured.completed), lost: measured.lost };
}

const qpsText = (r: DnsLoad) => `${Math.round(r.qps).toLocaleString('en-US')} q/s, ${Math.round(r.cpuUs)} µs CPU/q${r.lost ? `, ${r.lost} lost` : ''}`;

/** Registers the service's instances (one per node, each with a passing check) through the catalog API. */
async function registerInstances(url: string, token: string): Promise<void> {
  for (let i = 1; i <= INSTANCES; i++) {
    const res = await fetch(`${url}/v1/catalog/register`, {
      method: 'PUT',
      headers: { 'x-consul-token': token },
      body: JSON.stringify({
        Node: `bench-node-${i}`,
        Address: `10.77.0.${i}`,
        Service: { ID: SERVICE, Service: SERVICE, Port: 9000 + i },
        Check: { CheckID: `${SERVICE}-up`, Name: 'up', ServiceID: SERVICE, Status: 'passing' },
      }),
    });
    if (res.status !== 200) throw new Error(`register: ${res.status} ${await res.text()}`);
  }
}

/** The SRV answers' count, to check that a server answers what is measured. */
async function srvCount(host: string, port: number, name: string): Promise<number> {
  const query = dnsPacket.encode({
    type: 'query',
    id: 7,
    questions: [{ type: 'SRV', name }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 4096, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }],
  });
  const reply = dnsPacket.decode(await udpExchange(host, port, query, 2000));
  return (reply.answers ?? []).filter((a) => a.type === 'SRV').length;
}

/**
 * A service whose backend stops: registered through the agent API with an HTTP check against a
 * real HTTP server started here, in DNS once the checker saw it pass; then the server is closed and
 * DNS polled every 20 ms until the instance is gone. Answers the milliseconds from the stop to its removal.
 */
async function removalAfterStop(url: string, host: string, port: number, interval: string, timeout: string): Promise<number> {
  const backend = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  const { port: backendPort } = backend.address() as AddressInfo;
  const name = 'stopping';
  const res = await fetch(`${url}/v1/agent/service/register`, {
    method: 'PUT',
    headers: { 'x-consul-token': TOKEN },
    body: JSON.stringify({
      ID: name,
      Name: name,
      Port: backendPort,
      Address: '127.0.0.1',
      Check: { CheckID: `${name}-http`, HTTP: `http://127.0.0.1:${backendPort}/health`, Interval: interval, Timeout: timeout },
    }),
  });
  if (res.status !== 200) throw new Error(`register: ${res.status} ${await res.text()}`);
  const since = Date.now();
  while ((await srvCount(host, port, `${name}.service.consul`)) !== 1) {
    if (Date.now() - since > 30_000) throw new Error('the HTTP-checked service is not in DNS 30 s after its registration');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  backend.close();
  backend.closeAllConnections();
  const stopped = Date.now();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    if ((await srvCount(host, port, `${name}.service.consul`)) === 0) return Date.now() - stopped;
    if (Date.now() - stopped > 120_000) throw new Error('still in DNS after 120 s');
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '5' },
      outstanding: { type: 'string', default: '100' },
      interval: { type: 'string', default: '1s' },
      timeout: { type: 'string', default: '1s' },
    },
  });
  const seconds = Number(values.seconds);
  const outstanding = Number(values.outstanding);
  if (spawnSync('dnsperf', ['-h']).error) throw new Error('dnsperf is not installed (Debian package dnsperf; scripts/setup installs it)');
  const consul = consulBinary();
  console.log(`node ${process.version}, dnsperf ${outstanding} outstanding, ${seconds} s per run, ${consul ? `against ${consul.version}` : 'no HANGAR_BENCH_CONSUL: Hangar only'}`);

  const server = await startServerProcess(['--dev', '--dev-root-token', TOKEN, '--log-level', 'warn']);
  let hangar: DnsLoad;
  let removalMs: number;
  try {
    const [host, port] = server.dns!.split(':');
    await registerInstances(server.urls.catalog, TOKEN);
    if ((await srvCount(host, Number(port), `${SERVICE}.service.consul`)) !== INSTANCES) throw new Error('Hangar does not answer the 10 instances');
    hangar = dnsperf(host, Number(port), seconds, outstanding, server.process.pid!);
    removalMs = await removalAfterStop(server.urls.catalog, host, Number(port), values.interval, values.timeout);
  } finally {
    await server.stop();
  }
  const group = 'Catalog DNS';
  record({ group, name: `SRV queries/s, ${INSTANCES} healthy instances (dnsperf, EDNS, ${outstanding} outstanding)`, figure: qpsText(hangar) });
  const msOf = (text: string) => Number(text.replace(/s$/, '')) * 1000;
  const boundMs = msOf(values.interval) + msOf(values.timeout) + 1000;
  record({
    group,
    name: `time from a stopped backend (HTTP check every ${values.interval}, timeout ${values.timeout}) to its removal from DNS`,
    figure: `${removalMs} ms`,
    baseline: `interval + timeout + 1 s = ${boundMs} ms`,
    ratio: removalMs / boundMs,
    goal: '<= interval + timeout + 1 s',
    met: removalMs <= boundMs,
  });

  if (!consul) return;
  const dnsPort = await freePort();
  const service = await startConsulDev(consul, { dnsPort });
  try {
    await registerInstances(service.url, '');
    if ((await srvCount('127.0.0.1', dnsPort, `${SERVICE}.service.consul`)) !== INSTANCES) throw new Error(`${service.label} does not answer the 10 instances`);
    const theirs = dnsperf('127.0.0.1', dnsPort, seconds, outstanding, service.pid);
    record({
      group: `${group} vs ${service.label}`,
      name: `SRV queries/s, ${INSTANCES} healthy instances`,
      figure: `Hangar ${qpsText(hangar)}`,
      baseline: qpsText(theirs),
      ratio: hangar.qps / theirs.qps,
      cpuRatio: theirs.cpuUs / hangar.cpuUs,
      goal: 'ahead (ratio > 1)',
      met: hangar.qps > theirs.qps,
    });
  } finally {
    await service.stop();
  }
}

main().then(() => process.exit(0), (err: unknown) => {
  console.error(err);
  process.exit(1);
});
