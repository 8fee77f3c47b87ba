/**
 * Health checks that run (issue 42): the CPU `hangar server` spends running N HTTP checks at a 10 s
 * interval against one local HTTP server, next to a plain Node.js loop making the same requests
 * (node:http, no keep-alive, as the checker) in its own process, measured one after the other
 * in the same run; and the time from a stopped backend to its instance leaving
 * `/v1/health/service/<name>?passing` (watched with a blocking query), with the N checks running.
 *
 *   npx ts-node --transpile-only bench/catalog-checks.ts [--checks 5000] [--seconds 20] [--runs 2]
 */
import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { record } from './autocannon';
import { ownCpuMs } from './cpu';
import { startDevServer, summary } from './util';

const TOKEN = 'bench-checks-root';
const INTERVAL_S = 10;
/** The removal row's check: its timeout, and so its goal (interval + timeout + 1 s). */
const TIMEOUT_S = 2;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A child process running `source`; resolves once it printed its first line (an address, or "ready"). */
async function child(source: string, args: readonly string[] = []): Promise<{ child: ChildProcess; line: string }> {
  const proc = spawn(process.execPath, ['-e', source, ...args], { env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(proc.stdout!, 'data')) as [Buffer];
  return { child: proc, line: chunk.toString().trim() };
}

/** The HTTP server every check probes: "ok" to every request; /count answers how many it had. */
const BACKEND = `
  let count = 0;
  const server = require('node:http').createServer((req, res) => res.end(req.url === '/count' ? String(count) : (count++, 'ok')));
  server.listen(0, '127.0.0.1', () => console.log('http://127.0.0.1:' + server.address().port + '/health'));
`;

/**
 * The baseline: N requests every interval, each at its own random offset as the checker staggers
 * them, over node:http without keep-alive, reading at most 4 KiB of each body.
 */
const LOOP = `
  const http = require('node:http');
  const [url, count, intervalMs] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
  const probe = () => new Promise((resolve) => {
    const req = http.request(url, { agent: false, headers: { 'user-agent': 'Consul Health Check', accept: 'text/plain, text/*, */*' } }, (res) => {
      let kept = 0;
      const chunks = [];
      res.on('data', (c) => { if (kept < 4096) { chunks.push(c); kept += c.length; } });
      res.on('end', () => resolve(res.statusCode + ' ' + Buffer.concat(chunks).toString()));
    });
    req.setTimeout(10000, () => req.destroy());
    req.on('error', resolve);
    req.end();
  });
  for (let i = 0; i < count; i++) {
    const run = () => probe().then(() => setTimeout(run, intervalMs));
    setTimeout(run, Math.random() * intervalMs);
  }
  console.log('ready');
`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { checks: { type: 'string', default: '5000' }, seconds: { type: 'string', default: '20' }, runs: { type: 'string', default: '2' } },
  });
  const checks = Number(values.checks);
  const seconds = Number(values.seconds);
  const runs = Number(values.runs);
  console.log(`node ${process.version}, ${checks} HTTP checks every ${INTERVAL_S} s, CPU measured over ${seconds} s each`);

  const backend = await child(BACKEND);
  const url = backend.line;
  const probes = async () => Number(await (await fetch(new URL('/count', url))).text());
  try {
    // The baseline first, alone on the machine; then the server.
    const loop = await child(LOOP, [url, String(checks), String(INTERVAL_S * 1000)]);
    await sleep(INTERVAL_S * 1000); // every request started once
    const loopStart = ownCpuMs(loop.child.pid!);
    const loopProbes = await probes();
    await sleep(seconds * 1000);
    const loopCpu = (ownCpuMs(loop.child.pid!) - loopStart) / seconds;
    const loopRate = (await probes() - loopProbes) / seconds;
    loop.child.kill();

    const server = await startDevServer(TOKEN, ['--log-level', 'warn']);
    const pool = new Pool(server.urls.catalog, { connections: 16 });
    const call = async (method: 'GET' | 'PUT', path: string, body?: unknown) => {
      const res = await pool.request({ method, path, headers: { 'x-consul-token': TOKEN }, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
      return { index: Number(res.headers['x-consul-index']), body: text ? JSON.parse(text) : undefined };
    };
    try {
      let next = 0;
      await Promise.all(Array.from({ length: 16 }, async () => {
        while (next < checks) {
          const i = next++;
          await call('PUT', '/v1/agent/service/register', { Name: 'bench', ID: `bench-${i}`, Port: 80, Check: { HTTP: url, Interval: `${INTERVAL_S}s` } });
        }
      }));
      // Every check has run once (and turned passing) within one interval of its registration.
      for (let waited = 0; ; waited++) {
        const critical = (await call('GET', '/v1/health/state/critical')).body.filter((c: { ServiceName: string }) => c.ServiceName === 'bench');
        if (critical.length === 0) break;
        if (waited > 4 * INTERVAL_S) throw new Error(`${critical.length} checks still critical`);
        await sleep(1000);
      }
      const before = await call('GET', '/v1/health/service/bench');
      const pid = server.process.pid!;
      const start = ownCpuMs(pid);
      const serverProbes = await probes();
      await sleep(seconds * 1000);
      const serverCpu = (ownCpuMs(pid) - start) / seconds;
      const serverRate = (await probes() - serverProbes) / seconds;
      const after = await call('GET', '/v1/health/service/bench');
      const writes = after.index - before.index;
      console.log(`catalog writes while measuring: ${writes} (the checks stayed passing)`);
      // Per request: on a shared machine a busy server probes late (its period stretches), so CPU
      // per second alone would flatter it; both rates are printed.
      const serverPer = serverCpu / serverRate;
      const loopPer = loopCpu / loopRate;
      record({
        group: 'catalog checks',
        name: `${checks.toLocaleString('en-US')} HTTP checks every ${INTERVAL_S} s: server CPU per probe`,
        figure: `${(serverPer * 1000).toFixed(0)} µs CPU/probe (${serverCpu.toFixed(0)} ms CPU/s, ${serverRate.toFixed(0)} probes/s)`,
        baseline: `plain Node loop of the same requests ${(loopPer * 1000).toFixed(0)} µs CPU/request (${loopCpu.toFixed(0)} ms CPU/s, ${loopRate.toFixed(0)}/s)`,
        ratio: serverPer / loopPer,
        goal: '≤ 1.5× the loop',
        met: serverPer / loopPer <= 1.5,
      });

      // A stopped backend: how long until its instance leaves health/service?passing.
      const target = createServer((_req, res) => res.end('ok'));
      await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
      const port = (target.address() as AddressInfo).port;
      target.close();
      await call('PUT', '/v1/agent/service/register', {
        Name: 'stoppable', ID: 'stoppable', Port: port, Check: { HTTP: `http://127.0.0.1:${port}/`, Interval: `${INTERVAL_S}s`, Timeout: `${TIMEOUT_S}s` },
      });
      const times: number[] = [];
      for (let run = 0; run < runs; run++) {
        const again = createServer((_req, res) => res.end('ok'));
        await new Promise<void>((resolve) => again.listen(port, '127.0.0.1', resolve));
        let seen = await call('GET', '/v1/health/service/stoppable?passing');
        while (seen.body.length === 0) seen = await call('GET', `/v1/health/service/stoppable?passing&index=${seen.index}&wait=30s`);
        const stopped = performance.now();
        again.closeAllConnections();
        await new Promise((resolve) => again.close(resolve));
        while (seen.body.length > 0) seen = await call('GET', `/v1/health/service/stoppable?passing&index=${seen.index}&wait=30s`);
        times.push((performance.now() - stopped) / 1000);
      }
      const goal = INTERVAL_S + TIMEOUT_S + 1;
      const worst = Math.max(...times);
      record({
        group: 'catalog checks',
        name: `stopped backend → out of health/service?passing (interval ${INTERVAL_S} s, timeout ${TIMEOUT_S} s, ${checks} other checks running)`,
        figure: summary(times.map((t) => t * 1000), 'ms'),
        baseline: `interval + timeout + 1 s = ${goal} s`,
        ratio: worst / goal,
        goal: `≤ ${goal} s every run`,
        met: worst <= goal,
      });
    } finally {
      await pool.close();
      await server.stop();
    }
  } finally {
    backend.child.kill();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
