/**
 * Dynamic PostgreSQL credentials issued and revoked per second through Hangar's database engine
 * (`GET database/creds/:role` then `PUT sys/leases/revoke`), next to the physical limit of the
 * database: the same CREATE ROLE / GRANT and DROP ROLE statements, in the same transactions, run
 * directly with `pg` at the same concurrency, in the same run. Hangar runs as `hangar server` in its
 * own process (the bundled CLI, rebuilt first) and the load generator (autocannon, each connection
 * chaining creds -> revoke with the lease id) in another, as the public service's published figure
 * is measured. A private PostgreSQL (the machine's binaries, password logins) on loopback; each
 * phase stops by itself. Each phase also prints the CPU time per pair of every process involved
 * (Linux), which says what bounds the rate on a machine with few cores.
 *
 *   npx ts-node --transpile-only bench/secrets-database.ts [--seconds 5] [--concurrency 8]
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool as PgPool } from 'pg';
import { cpuMs } from './cpu';
import { line, load, LoadResult, runBenchmark, secretsCaller } from './http-load';
import { RunningServer, startServerProcess } from '../test/helpers/cli';
import { startTargetPostgres } from '../test/helpers/postgres-target';

const ROOT = 'bench-root-token';
// A grant by role membership: concurrent GRANTs on one table fail in PostgreSQL ("tuple concurrently updated").
const CREATE = [`CREATE ROLE "{{name}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}';`, `GRANT pg_read_all_data TO "{{name}}";`];
const REVOKE = [`DROP ROLE IF EXISTS "{{name}}";`];

// The load generator, in its own process: each autocannon connection asks for credentials, then
// revokes their lease (the id from the first answer goes into the second request's body). Prints
// its result and its own CPU time as JSON.
const CHILD = `
  const autocannon = require('autocannon');
  const o = JSON.parse(process.argv[1]);
  const headers = { 'content-type': 'application/json', 'x-vault-token': o.token };
  const requests = [
    { method: 'GET', path: '/v1/database/creds/bench', headers,
      onResponse: (status, body, context) => { if (status === 200) context.lease = JSON.parse(body).lease_id; } },
    { method: 'PUT', path: '/v1/sys/leases/revoke', headers,
      setupRequest: (req, context) => (context.lease ? { ...req, body: JSON.stringify({ lease_id: context.lease }) } : undefined) },
  ];
  const start = process.cpuUsage();
  autocannon({ url: o.url, connections: o.connections, duration: o.seconds, requests }, (err, r) => {
    if (err) { console.error(err); process.exit(1); }
    const cpu = process.cpuUsage(start);
    process.stdout.write(JSON.stringify({
      requests: r.requests.total, seconds: r.duration, p50: r.latency.p50, p99: r.latency.p99,
      failed: r.non2xx + r.errors + r.timeouts + r.resets, cpuMs: (cpu.user + cpu.system) / 1000,
    }));
  });
`;

interface ChildResult {
  readonly requests: number;
  readonly seconds: number;
  readonly p50: number;
  readonly p99: number;
  readonly failed: number;
  readonly cpuMs: number;
}

/** autocannon in a child process; returns pairs per second, per-request latencies and its CPU time. */
async function pairsLoad(url: string, seconds: number, connections: number): Promise<{ result: LoadResult; clientCpuMs: number }> {
  const child = spawn(process.execPath, ['-e', CHILD, JSON.stringify({ url, token: ROOT, seconds, connections })], {
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`the load generator exited with ${code}`);
  const r = JSON.parse(out) as ChildResult;
  if (r.failed) throw new Error(`${r.failed} of ${r.requests} requests failed`);
  const pairs = Math.floor(r.requests / 2);
  return { result: { rps: pairs / (r.seconds || seconds), p50: r.p50, p99: r.p99, count: pairs }, clientCpuMs: r.cpuMs };
}

/** CPU ms per pair of each process, as one line, and their total (undefined off Linux). */
function cpuPerPair(pairs: number, parts: ReadonlyArray<readonly [string, number | undefined]>): { text: string; total?: number } {
  if (parts.some(([, ms]) => ms === undefined)) return { text: '' };
  const each = parts.map(([name, ms]) => `${name} ${(ms! / pairs).toFixed(2)}`);
  const total = parts.reduce((sum, [, ms]) => sum + ms!, 0) / pairs;
  return { text: `    CPU ms per pair: ${each.join(', ')}; total ${total.toFixed(2)}`, total };
}

const delta = (before: number | undefined, after: number | undefined) => (before === undefined || after === undefined ? undefined : after - before);

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '8' } } });
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  console.log(`node ${process.version}, ${concurrency} concurrent clients, ${seconds} s per phase, Hangar: hangar server --dev (SQLite) in its own process, load from autocannon in another`);
  const pg = await startTargetPostgres();
  let server: RunningServer | undefined;
  try {
    // Baseline: the role's statements straight through pg, one transaction for create, one for drop.
    const direct = new PgPool({ host: pg.host, port: pg.port, user: pg.adminUser, password: pg.adminPassword, database: 'app', max: concurrency });
    const fill = (stmts: string[], name: string, password: string, until: string) =>
      stmts.map((s) => s.replace(/\{\{name\}\}/g, name).replace(/\{\{password\}\}/g, password).replace(/\{\{expiration\}\}/g, until));
    // As the engine runs them: the statements of one transaction in one message (one round trip).
    const tx = async (queries: string[]) => void (await direct.query(queries.join(';\n')));
    const pair = async () => {
      const name = `b-${randomBytes(8).toString('hex')}`;
      const until = new Date(Date.now() + 3_600_000).toISOString();
      await tx(fill(CREATE, name, randomBytes(12).toString('base64url'), until));
      await tx(fill(REVOKE, name, '', until));
    };
    await load(1, concurrency, pair);
    const [pgBefore, meBefore] = [cpuMs(pg.pid), process.cpuUsage()];
    const baseline = await load(seconds, concurrency, pair);
    const baselineCpu = cpuPerPair(baseline.count, [
      ['postgres', delta(pgBefore, cpuMs(pg.pid))],
      ['pg client', process.cpuUsage(meBefore).user / 1000 + process.cpuUsage(meBefore).system / 1000],
    ]);
    await direct.end();

    // Hangar as it runs in production: `hangar server` in its own process (the bundled CLI).
    execFileSync(process.execPath, [join(__dirname, '..', 'scripts', 'bundle.mjs')], { stdio: 'pipe' });
    server = await startServerProcess(['--dev', '--dev-root-token', ROOT]);
    const http = secretsCaller(server.urls.secrets, ROOT, 1);
    await http.call('POST', 'database/config/pg', {
      plugin_name: 'postgresql-database-plugin',
      connection_url: pg.urlTemplate,
      username: pg.adminUser,
      password: pg.adminPassword,
      allowed_roles: '*',
      max_open_connections: concurrency,
    });
    await http.call('POST', 'database/roles/bench', { db_name: 'pg', creation_statements: CREATE, revocation_statements: REVOKE, default_ttl: '1h' });
    await http.close();
    // Warm-up: the connection pool fills, the JIT settles.
    await pairsLoad(server.urls.secrets, 1, concurrency);
    const before = { pg: cpuMs(pg.pid), server: cpuMs(server.process.pid!) };
    const { result: hangar, clientCpuMs } = await pairsLoad(server.urls.secrets, seconds, concurrency);
    const hangarCpu = cpuPerPair(hangar.count, [
      ['postgres', delta(before.pg, cpuMs(pg.pid))],
      ['hangar server', delta(before.server, cpuMs(server.process.pid!))],
      ['autocannon', clientCpuMs],
    ]);

    // autocannon stops in the middle of pairs: the leases it did not revoke go by prefix.
    const admin = secretsCaller(server.urls.secrets, ROOT, 1);
    await admin.call('PUT', 'sys/leases/revoke-prefix/database/creds/bench');
    await admin.close();
    const left = Number((await pg.admin("SELECT count(*) AS n FROM pg_roles WHERE rolname LIKE 'v-%'")).rows[0].n);
    line('direct pg: CREATE ROLE + DROP ROLE (baseline)', baseline);
    if (baselineCpu.text) console.log(baselineCpu.text);
    line('Hangar: creds + lease revoke (pairs)', hangar, baseline);
    if (hangarCpu.text) console.log(hangarCpu.text);
    if (baselineCpu.total && hangarCpu.total) {
      // Where every process is CPU-bound (a quiet machine with few cores), rates go as 1 / CPU per pair.
      console.log(`CPU-bound share (baseline CPU per pair / Hangar's): ${((baselineCpu.total / hangarCpu.total) * 100).toFixed(1)}%`);
    }
    console.log(`goal: >= 70% of the direct rate; the public service publishes 226/s. Users left after revocation: ${left}`);
  } finally {
    await server?.stop();
    await pg.stop();
  }
}

runBenchmark(main);
