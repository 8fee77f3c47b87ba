/**
 * Blocking-query fan-out of the catalog: N clients wait on one KV key (`?index=`), one write
 * wakes them all; prints the time until every client has its answer and the server's peak RSS,
 * next to a bare Fastify server releasing N held requests at once (same run, same client).
 * Loopback only; each client is one connection. The two servers take turns `--runs` times (fresh
 * processes each time) and the medians are recorded, with every run's figure. With HANGAR_BENCH_CONSUL
 * naming a Consul binary (bench/public-services.ts), `consul agent -dev` takes its turn too.
 *
 *   npx ts-node --transpile-only bench/catalog-blocking.ts [--clients 10000] [--runs 3]
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { cpuTimeUs, record } from './autocannon';
import { peakRssMiB, rssMiB, startBaseline } from './catalog-load';
import { consulBinary, ServiceBinary, startConsulDev } from './public-services';
import { median, startDevServer, summary } from './util';

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
  /** The server's CPU time over the same span (steadier than `ms`, which the one client process bounds). */
  readonly cpuMs: number;
  /** RSS once the requests are read (the connect burst's garbage still in the heap). */
  readonly heldRss: number;
  /** RSS SETTLE_MS after the last request was written, before the write (the last run only): what holding them costs. */
  readonly settledRss?: number;
  readonly peak: number;
}

/**
 * How long the watchers are held before the write. A connect burst leaves its garbage and a full
 * young generation in a V8 heap until V8's memory reducer runs, about 8 s after the burst's last
 * full collection when nothing allocates (Go's scavenger gives memory back in the background too):
 * RSS right after the burst is its peak, the settled RSS is what 10,000 held watchers cost. It is
 * steadier than the answer time (257–261 MiB in three runs): the last run of each server waits.
 */
const SETTLE_MS = 12_000;

/**
 * Starts `clients` waiting requests, waits until all are sent and the server's memory is steady,
 * fires, and measures until all are answered.
 */
async function fanOut(clients: number, url: string, pid: number, fire: () => Promise<void>, settle: boolean): Promise<FanOut> {
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  let sent = 0;
  const overflowsBefore = listenOverflows();
  const connectStart = process.hrtime.bigint();
  const all = Array.from({ length: clients }, () => get(agent, url, () => sent++));
  while (sent < clients) await new Promise((r) => setTimeout(r, 5));
  const connectMs = Number(process.hrtime.bigint() - connectStart) / 1e6;
  const connected = Date.now();
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
  let settledRss: number | undefined;
  if (settle) {
    await new Promise((r) => setTimeout(r, Math.max(0, connected + SETTLE_MS - Date.now())));
    settledRss = rssMiB(pid);
  }
  const cpuBefore = cpuTimeUs(pid);
  const start = process.hrtime.bigint();
  await fire();
  const statuses = await Promise.all(all);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const cpuMs = (cpuTimeUs(pid) - cpuBefore) / 1000;
  agent.destroy();
  const bad = statuses.filter((s) => s !== 200).length;
  if (bad) throw new Error(`${bad} of ${clients} requests did not answer 200`);
  return { connectMs, overflows, ms, cpuMs, heldRss, settledRss, peak: peakRssMiB(pid) };
}

/** One fan-out against a fresh bare Fastify long-poll server. */
async function baselineRun(clients: number, settle: boolean): Promise<FanOut> {
  const baseline = await startBaseline();
  try {
    return await fanOut(clients, `${baseline.url}/wait`, baseline.child.pid!, async () => {
      await fetch(`${baseline.url}/fire`, { method: 'POST' });
    }, settle);
  } finally {
    baseline.child.kill();
  }
}

/** Watchers of one KV key of a catalog API (Hangar's or Consul's) at `url`, released by one write. */
async function kvFanOut(clients: number, url: string, pid: number, settle: boolean): Promise<FanOut> {
  const headers = { 'x-consul-token': TOKEN };
  const put = (value: string) => fetch(`${url}/v1/kv/bench/watched`, { method: 'PUT', body: value, headers });
  await put('before');
  const read = await fetch(`${url}/v1/kv/bench/watched`, { headers });
  const index = read.headers.get('x-consul-index');
  return fanOut(clients, `${url}/v1/kv/bench/watched?index=${index}&wait=5m`, pid, async () => {
    await put('after');
  }, settle);
}

/** One fan-out against a fresh `hangar server --dev`. */
async function hangarRun(clients: number, settle: boolean): Promise<FanOut> {
  const server = await startDevServer(TOKEN);
  try {
    return await kvFanOut(clients, server.urls.catalog, server.process.pid!, settle);
  } finally {
    await server.stop();
  }
}

/** One fan-out against a fresh `consul agent -dev`. */
async function consulRun(clients: number, bin: ServiceBinary, settle: boolean): Promise<FanOut> {
  const consul = await startConsulDev(bin);
  try {
    return await kvFanOut(clients, consul.url, consul.pid, settle);
  } finally {
    await consul.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { clients: { type: 'string', default: '10000' }, runs: { type: 'string', default: '3' } } });
  const clients = Number(values.clients);
  const runs = Math.max(1, Number(values.runs));
  const consulBin = consulBinary();
  console.log(`node ${process.version}, ${clients} waiting clients, ${runs} run(s), bare Fastify and Hangar in turn` +
    (consulBin ? ', and Consul (HANGAR_BENCH_CONSUL)' : ''));
  const print = (name: string, r: FanOut) =>
    console.log(`${name.padEnd(40)} connected in ${r.connectMs.toFixed(0)} ms (${r.overflows} listen-queue overflows); all answered ${r.ms.toFixed(0).padStart(6)} ms after the write (server CPU ${r.cpuMs.toFixed(0)} ms); RSS after connecting ${r.heldRss.toFixed(0)} MiB` +
      `${r.settledRss === undefined ? '' : `, ${SETTLE_MS / 1000} s later ${r.settledRss.toFixed(0)} MiB`}, peak ${r.peak.toFixed(0)} MiB`);

  // Fresh servers each run, in turn, so that the machine's other work weighs on both alike; a
  // single run's answer time moves by a third from one run to the next.
  const bases: FanOut[] = [];
  const hangars: FanOut[] = [];
  const consuls: FanOut[] = [];
  for (let run = 0; run < runs; run++) {
    const settle = run === runs - 1;
    bases.push(await baselineRun(clients, settle));
    print('bare Fastify long poll (baseline)', bases[run]);
    hangars.push(await hangarRun(clients, settle));
    print('hangar blocking GET /v1/kv/:key', hangars[run]);
    if (consulBin) {
      consuls.push(await consulRun(clients, consulBin, settle));
      print(`Consul ${consulBin.version} dev, same GET`, consuls[run]);
    }
  }
  const pick = (rs: readonly FanOut[], key: 'ms' | 'cpuMs' | 'connectMs' | 'heldRss') => rs.map((r) => r[key]);
  const settled = (rs: readonly FanOut[]) => rs[rs.length - 1].settledRss!;
  const group = `catalog blocking fan-out, ${clients.toLocaleString('en-US')} watchers`;
  // The answer time's ratio of each run's pair, then their median.
  const ratio = median(hangars.map((r, i) => r.ms / bases[i].ms));
  record({
    group,
    name: 'all answered after one write (server CPU meanwhile)',
    figure: `${summary(pick(hangars, 'ms'), 'ms')} (CPU ${summary(pick(hangars, 'cpuMs'), 'ms')})`,
    baseline: `bare Fastify long poll ${summary(pick(bases, 'ms'), 'ms')} (CPU ${summary(pick(bases, 'cpuMs'), 'ms')})`,
    ratio,
    goal: 'median of the runs\' ratios <= 1.2',
    met: ratio <= 1.2,
  });
  const overflows = Math.max(...hangars.map((r) => r.overflows));
  const connectMs = median(pick(hangars, 'connectMs'));
  record({
    group,
    name: 'connect time of all watchers (listen-queue overflows, most in a run)',
    figure: `${summary(pick(hangars, 'connectMs'), 'ms')} (${overflows})`,
    baseline: `bare Fastify ${summary(pick(bases, 'connectMs'), 'ms')} (${Math.max(...bases.map((r) => r.overflows))})`,
    ratio: connectMs / median(pick(bases, 'connectMs')),
    goal: '<= 1 s, no overflow',
    met: connectMs <= 1000 && overflows === 0,
  });
  const rss = settled(hangars);
  record({
    group,
    name: `server RSS with all open (${SETTLE_MS / 1000} s after connecting, last run; right after connecting)`,
    figure: `${rss.toFixed(0)} MiB; ${summary(pick(hangars, 'heldRss'), 'MiB')}`,
    baseline: `bare Fastify ${settled(bases).toFixed(0)} MiB; ${summary(pick(bases, 'heldRss'), 'MiB')}`,
    goal: '<= 300 MB',
    met: rss * 1.048576 <= 300,
  });
  if (!consulBin) return;
  // Hangar's figure ÷ Consul's for each: times and memory, so below 1 is ahead.
  const versus = `${group} vs Consul ${consulBin.version} dev`;
  const measures: [string, (rs: readonly FanOut[]) => { value: number; text: string }][] = [
    ['all answered after one write', (rs) => ({ value: median(pick(rs, 'ms')), text: summary(pick(rs, 'ms'), 'ms') })],
    ['connect time of all watchers', (rs) => ({
      value: median(pick(rs, 'connectMs')),
      text: `${summary(pick(rs, 'connectMs'), 'ms')} (${Math.max(...rs.map((r) => r.overflows))} overflows)`,
    })],
    [`server RSS with all open (${SETTLE_MS / 1000} s after connecting, last run)`, (rs) => ({ value: settled(rs), text: `${settled(rs).toFixed(0)} MiB` })],
  ];
  for (const [name, measure] of measures) {
    const ours = measure(hangars);
    const theirs = measure(consuls);
    record({ group: versus, name, figure: `Hangar ${ours.text}`, baseline: theirs.text, ratio: ours.value / theirs.value, goal: 'ahead (ratio < 1)', met: ours.value < theirs.value });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
