import { openSync } from 'node:fs';
import { autocannon, LoadResult } from './autocannon';
import { createLogger } from '../src/engine/logger';
import { startServerProcess } from '../test/helpers/cli';

/**
 * The cost of the per-request log line: `hangar server --dev` with its default level (debug: one
 * JSON line per request, to /dev/null) against the same server at `--log-level warn` (no request
 * line), on the cheapest endpoints of each API, where logging weighs most.
 *   npx ts-node --transpile-only bench/logging.ts [--seconds 5]
 */
const seconds = Number(process.argv[process.argv.indexOf('--seconds') + 1]) || 5;
const TARGETS = [
  ['secrets', '/v1/sys/health'],
  ['catalog', '/v1/status/leader'],
  ['registry', '/api/v1/search?q=none'],
] as const;

async function measure(level: string): Promise<LoadResult[]> {
  const server = await startServerProcess(['--dev', '--log-level', level, '--log-format', 'json']);
  try {
    const results: LoadResult[] = [];
    for (const [api, path] of TARGETS) results.push(await autocannon({ url: `${server.urls[api]}${path}` }, { seconds, connections: 20 }));
    return results;
  } finally {
    await server.stop();
  }
}

/**
 * CPU time of one request line in this process (JSON to /dev/null, the api and request id bindings
 * of a request's child logger), next to a disabled debug call: robust on a busy machine, where the
 * load figures above swing with the neighbours.
 */
function lineCost(): void {
  const logger = createLogger({ level: 'debug', format: 'json', destination: require('node:fs').createWriteStream('', { fd: openSync('/dev/null', 'w') }) });
  const child = logger.child({ api: 'secrets' }).child({ reqId: '0b5e1c2a-8d4f-4c1e-9a7b-3f2e1d0c9b8a' });
  const quiet = createLogger({ level: 'info', format: 'json' }).child({ api: 'secrets' });
  const n = 100_000;
  const time = (fn: () => void) => {
    const start = process.cpuUsage();
    for (let i = 0; i < n; i++) fn();
    const used = process.cpuUsage(start);
    return ((used.user + used.system) / n).toFixed(2);
  };
  const line = () => child.debug({ method: 'GET', url: '/v1/sys/health', status: 200, ms: 0.41 }, 'request');
  const off = () => quiet.debug({ method: 'GET', url: '/v1/sys/health', status: 200, ms: 0.41 }, 'request');
  time(line);
  console.log(`one request line: ${time(line)} µs CPU; at info (line off): ${time(off)} µs`);
}

async function main(): Promise<void> {
  lineCost();
  const quiet = await measure('warn');
  const logged = await measure('debug');
  TARGETS.forEach(([api, path], i) => {
    const cost = 1 - logged[i].rps / quiet[i].rps;
    console.log(
      `${`${api} ${path}`.padEnd(36)} debug (1 line/request) ${logged[i].rps.toFixed(0).padStart(6)} req/s` +
        `  warn (baseline) ${quiet[i].rps.toFixed(0).padStart(6)} req/s  cost ${(cost * 100).toFixed(1)}%`,
    );
  });
}

void main();
