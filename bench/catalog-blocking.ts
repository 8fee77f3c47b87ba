/**
 * Blocking-query fan-out of the catalog: N clients wait on one KV key (`?index=`), one write
 * wakes them all; prints the time until every client has its answer and the server's peak RSS,
 * next to a bare Fastify server releasing N held requests at once (same run, same client).
 * Loopback only; each client is one connection.
 *
 *   npx ts-node --transpile-only bench/catalog-blocking.ts [--clients 10000]
 */
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
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

/**
 * Starts `clients` waiting requests, waits until all are sent and the server's memory is steady,
 * fires, and measures until all are answered.
 */
async function fanOut(clients: number, url: string, pid: number, fire: () => Promise<void>) {
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  let sent = 0;
  const all = Array.from({ length: clients }, () => get(agent, url, () => sent++));
  while (sent < clients) await new Promise((r) => setTimeout(r, 50));
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
  return { ms, heldRss, peak: peakRssMiB(pid) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { clients: { type: 'string', default: '10000' } } });
  const clients = Number(values.clients);
  console.log(`node ${process.version}, ${clients} waiting clients`);
  const print = (name: string, r: { ms: number; heldRss: number; peak: number }) =>
    console.log(`${name.padEnd(40)} all answered ${r.ms.toFixed(0).padStart(6)} ms after the write; RSS while waiting ${r.heldRss.toFixed(0)} MiB, peak ${r.peak.toFixed(0)} MiB`);

  const baseline = await startBaseline();
  try {
    print('bare Fastify long poll (baseline)', await fanOut(clients, `${baseline.url}/wait`, baseline.child.pid!, async () => {
      await fetch(`${baseline.url}/fire`, { method: 'POST' });
    }));
  } finally {
    baseline.child.kill();
  }

  const server = await startServerProcess(['--dev', '--dev-root-token', TOKEN, '--log-level', 'error']);
  try {
    const put = (value: string) =>
      fetch(`${server.urls.catalog}/v1/kv/bench/watched`, { method: 'PUT', body: value, headers: { 'x-consul-token': TOKEN } });
    await put('before');
    const read = await fetch(`${server.urls.catalog}/v1/kv/bench/watched`, { headers: { 'x-consul-token': TOKEN } });
    const index = read.headers.get('x-consul-index');
    const url = `${server.urls.catalog}/v1/kv/bench/watched?index=${index}&wait=5m`;
    print('hangar blocking GET /v1/kv/:key', await fanOut(clients, url, server.process.pid!, async () => {
      await put('after');
    }));
  } finally {
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
