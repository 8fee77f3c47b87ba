/**
 * Blocking-query fan-out of the catalog: N clients wait on one KV key (`?index=`), one write
 * wakes them all; prints the time until every client has its answer and the server's peak RSS,
 * next to a bare Fastify server releasing N held requests at once (same run, same client).
 * Loopback only; each client is one connection.
 *
 *   npx ts-node --transpile-only bench/catalog-blocking.ts [--clients 10000]
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { record } from './autocannon';
import { peakRssMiB, rssMiB, startBaseline } from './catalog-load';
import { startServerProcess } from '../test/helpers/cli';

const TOKEN = 'bench-catalog-root';

/** One GET on its own connection; resolves with the status once the whole answer is read. */
function get(agent: Agent, url: string, sent: () => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { 'x-consul-token': TOKEN } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.on('finish', sent);
    req.end();
  });
}

/** The kernel's count of connections dropped because a listen queue was full (all sockets). */
function listenOverflows(): number {
  const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n').filter((l) => l.startsWith('TcpExt:'));
  const names = lines[0].split(/\s+/);
  const values = lines[1].split(/\s+/);
  return Number(values[names.indexOf('ListenOverflows')]);
}

interface FanOut {
  /** From the first connect until every request is written. */
  readonly connectMs: number;
  /** Listen-queue overflows counted by the kernel while connecting. */
  readonly overflows: number;
  /** From the write until every client has its answer. */
  readonly ms: number;
  readonly heldRss: number;
  readonly peak: number;
}

/**
 * Starts `clients` waiting requests, waits until all are sent and the server's memory is steady,
 * fires, and measures until all are answered.
 */
async function fanOut(clients: number, url: string, pid: number, fire: () => Promise<void>): Promise<FanOut> {
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  let sent = 0;
  const overflowsBefore = listenOverflows();
  const connectStart = process.hrtime.bigint();
  const all = Array.from({ length: clients }, () => get(agent, url, () => sent++));
  while (sent < clients) await new Promise((r) => setTimeout(r, 5));
  const connectMs = Number(process.hrtime.bigint() - connectStart) / 1e6;
  const overflows = listenOverflows() - overflowsBefore;
  // The requests are written; give the server a moment to read them all.
  let last = 0;
  for (let i = 0; i < 40; i++) {
    await new Promise((r) => setTimeout(r, 250));
    const now = rssMiB(pid);
    if (Math.abs(now - last) < 1) break;
    last = now;
  }
  const heldRss = rssMiB(pid);
  const start = process.hrtime.bigint();
  await fire();
  const statuses = await Promise.all(all);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  agent.destroy();
  const bad = statuses.filter((s) => s !== 200).length;
  if (bad) throw new Error(`${bad} of ${clients} requests did not answer 200`);
  return { connectMs, overflows, ms, heldRss, peak: peakRssMiB(pid) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { clients: { type: 'string', default: '10000' } } });
  const clients = Number(values.clients);
  console.log(`node ${process.version}, ${clients} waiting clients`);
  const print = (name: string, r: FanOut) =>
    console.log(`${name.padEnd(40)} connected in ${r.connectMs.toFixed(0)} ms (${r.overflows} listen-queue overflows); all answered ${r.ms.toFixed(0).padStart(6)} ms after the write; RSS while waiting ${r.heldRss.toFixed(0)} MiB, peak ${r.peak.toFixed(0)} MiB`);

  const baseline = await startBaseline();
  let base: FanOut;
  try {
    base = await fanOut(clients, `${baseline.url}/wait`, baseline.child.pid!, async () => {
      await fetch(`${baseline.url}/fire`, { method: 'POST' });
    });
    print('bare Fastify long poll (baseline)', base);
  } finally {
    baseline.child.kill();
  }

  const server = await startServerProcess(['--dev', '--dev-root-token', TOKEN]);
  try {
    const put = (value: string) =>
      fetch(`${server.urls.catalog}/v1/kv/bench/watched`, { method: 'PUT', body: value, headers: { 'x-consul-token': TOKEN } });
    await put('before');
    const read = await fetch(`${server.urls.catalog}/v1/kv/bench/watched`, { headers: { 'x-consul-token': TOKEN } });
    const index = read.headers.get('x-consul-index');
    const url = `${server.urls.catalog}/v1/kv/bench/watched?index=${index}&wait=5m`;
    const r = await fanOut(clients, url, server.process.pid!, async () => {
      await put('after');
    });
    print('hangar blocking GET /v1/kv/:key', r);
    const group = `catalog blocking fan-out, ${clients.toLocaleString('en-US')} watchers`;
    record({
      group,
      name: 'all answered after one write',
      figure: `${r.ms.toFixed(0)} ms`,
      baseline: `bare Fastify long poll ${base.ms.toFixed(0)} ms`,
      ratio: r.ms / base.ms,
      goal: '<= 1.2x the baseline\'s time',
      met: r.ms <= base.ms * 1.2,
    });
    record({
      group,
      name: 'connect time of all watchers (listen-queue overflows)',
      figure: `${r.connectMs.toFixed(0)} ms (${r.overflows})`,
      baseline: `bare Fastify ${base.connectMs.toFixed(0)} ms (${base.overflows})`,
      ratio: r.connectMs / base.connectMs,
      goal: '<= 1 s, no overflow',
      met: r.connectMs <= 1000 && r.overflows === 0,
    });
    record({
      group,
      name: 'server RSS with all open',
      figure: `${r.heldRss.toFixed(0)} MiB`,
      baseline: `bare Fastify ${base.heldRss.toFixed(0)} MiB`,
      goal: '<= 300 MB',
      met: r.heldRss * 1.048576 <= 300,
    });
  } finally {
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
