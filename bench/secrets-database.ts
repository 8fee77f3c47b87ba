/**
 * Dynamic PostgreSQL credentials issued and revoked per second through Hangar's database engine
 * (`GET database/creds/:role` then `PUT sys/leases/revoke`), next to the physical limit of the
 * database: the same CREATE ROLE / GRANT and DROP ROLE statements, in the same transactions, run
 * directly with `pg` at the same concurrency, in the same run. Hangar runs as `hangar server` in its
 * own process (the bundled CLI, rebuilt first) and the load generator (autocannon, each connection
 * chaining creds -> revoke with the lease id) in another, as the public service's published figure
 * is measured. A private PostgreSQL (the machine's binaries, password logins) on loopback; each
 * phase stops by itself. Each phase also prints the CPU time per pair of every process involved
 * (Linux), which says what bounds the rate on a machine with few cores. The two phases take turns
 * `--runs` times and the ranges are printed: on a shared machine one pair of phases proves little.
 *
 * `--database-core N` gives PostgreSQL core N to itself (Linux, taskset) and everything else (the pg
 * client, Hangar, autocannon) the other cores, in both phases: the database's own limit, as with a
 * database on its own machine, where by default the three share the machine's cores and the rate
 * says as much about Hangar's CPU as about the database.
 *
 *   npx ts-node --transpile-only bench/secrets-database.ts [--seconds 5] [--concurrency 8] [--runs 2] [--database-core 0]
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool as PgPool } from 'pg';
import { record } from './autocannon';
import { cpuMs, tree } from './cpu';
import { line, load, LoadResult, runBenchmark, secretsCaller } from './http-load';
import { median, startDevServer, summary } from './util';
import { RunningServer } from '../test/helpers/cli';
import { startTargetPostgres } from '../test/helpers/postgres-target';

const ROOT = 'bench-root-token';
// A grant by role membership: concurrent GRANTs on one table fail in PostgreSQL ("tuple concurrently updated").
const CREATE = ['CREATE ROLE "{{name}}" WITH LOGIN PASSWORD \'{{password}}\' VALID UNTIL \'{{expiration}}\';', 'GRANT pg_read_all_data TO "{{name}}";'];
const REVOKE = ['DROP ROLE IF EXISTS "{{name}}";'];

/**
 * PostgreSQL's own race between concurrent role DDL on its shared catalogs ("tuple concurrently
 * deleted" or "updated"), which both phases can meet about once in a few thousand pairs: counted and
 * printed, not a failure of the run. Hangar answers it with a 400 and keeps the lease marked, so its
 * background job drops the user later (docs/secrets-database.md).
 */
const CATALOG_RACE = 'tuple concurrently';

// The load generator, in its own process: each autocannon connection asks for credentials, then
// revokes their lease (the id from the first answer goes into the second request's body). Prints
// its result and its own CPU time as JSON.
const CHILD = `
  const autocannon = require('autocannon');
  const o = JSON.parse(process.argv[1]);
  const headers = { 'content-type': 'application/json', 'x-vault-token': o.token };
  // The first refused answer, to say what failed.
  let refused;
  let races = 0;
  const note = (path, status, body) => {
    if (status >= 300 && String(body).includes(${JSON.stringify(CATALOG_RACE)})) races++;
    else if (status >= 300 && !refused) refused = { path, status, body: String(body).slice(0, 500) };
  };
  const requests = [
    { method: 'GET', path: '/v1/database/creds/bench', headers,
      onResponse: (status, body, context) => { note('creds', status, body); if (status === 200) context.lease = JSON.parse(body).lease_id; } },
    { method: 'PUT', path: '/v1/sys/leases/revoke', headers,
      setupRequest: (req, context) => (context.lease ? { ...req, body: JSON.stringify({ lease_id: context.lease }) } : undefined),
      onResponse: (status, body) => note('revoke', status, body) },
  ];
  const start = process.cpuUsage();
  autocannon({ url: o.url, connections: o.connections, duration: o.seconds, requests }, (err, r) => {
    if (err) { console.error(err); process.exit(1); }
    const cpu = process.cpuUsage(start);
    process.stdout.write(JSON.stringify({
      requests: r.requests.total, seconds: r.duration, p50: r.latency.p50, p99: r.latency.p99,
      failed: r.non2xx - races + r.errors + r.timeouts + r.resets, races, cpuMs: (cpu.user + cpu.system) / 1000,
      failures: { statusCodes: r.statusCodeStats, errors: r.errors, timeouts: r.timeouts, resets: r.resets, first: refused },
    }));
  });
`;

interface ChildResult {
  readonly requests: number;
  readonly seconds: number;
  readonly p50: number;
  readonly p99: number;
  readonly failed: number;
  /** Answers refused for PostgreSQL's catalog race (CATALOG_RACE). */
  readonly races: number;
  readonly cpuMs: number;
  /** What failed, when something did: answers by status code, connection errors, timeouts, resets. */
  readonly failures: unknown;
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
  if (r.failed) throw new Error(`${r.failed} of ${r.requests} requests failed: ${JSON.stringify(r.failures)}`);
  if (r.races) console.log(`    PostgreSQL's catalog race (${CATALOG_RACE} ...): ${r.races} of ${r.requests} requests`);
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

/**
 * PostgreSQL's processes on `core` (the backends it forks later inherit it), this process's threads on
 * the other cores (the server and load generator it starts inherit them).
 */
function pinDatabase(postmaster: number, core: number): void {
  const others = Array.from({ length: cpus().length }, (_, i) => i).filter((i) => i !== core);
  if (!others.length || !cpus()[core]) throw new Error(`--database-core ${core}: this machine has cores 0-${cpus().length - 1}, and the rest needs one`);
  for (const pid of tree(postmaster)) execFileSync('taskset', ['-a', '-pc', String(core), String(pid)], { stdio: 'ignore' });
  execFileSync('taskset', ['-a', '-pc', others.join(','), String(process.pid)], { stdio: 'ignore' });
}

const delta = (before: number | undefined, after: number | undefined) => (before === undefined || after === undefined ? undefined : after - before);

interface Phase {
  readonly result: LoadResult;
  /** CPU ms per pair of each process, their total, and the line that shows them. */
  readonly cpu: { text: string; total?: number };
  /** The PostgreSQL server's CPU ms per pair (its backends and helpers). */
  readonly postgres?: number;
}

const range = (xs: readonly number[], digits: number) => {
  const lo = Math.min(...xs).toFixed(digits);
  const hi = Math.max(...xs).toFixed(digits);
  return lo === hi ? lo : `${lo}-${hi}`;
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'seconds': { type: 'string', default: '5' },
      'concurrency': { type: 'string', default: '8' },
      'runs': { type: 'string', default: '2' },
      'database-core': { type: 'string' },
    },
  });
  const databaseCore = values['database-core'] === undefined ? undefined : Number(values['database-core']);
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const runs = Math.max(1, Number(values.runs));
  console.log(
    `node ${process.version}, ${concurrency} concurrent clients, ${seconds} s per phase, ${runs} run(s) of both phases in turn, ` +
      'Hangar: hangar server --dev (SQLite) in its own process, load from autocannon in another' +
      (databaseCore === undefined ? '' : `; PostgreSQL alone on core ${databaseCore}, the rest on the others`),
  );
  const pg = await startTargetPostgres();
  if (databaseCore !== undefined) pinDatabase(pg.pid, databaseCore);
  let server: RunningServer | undefined;
  // Each phase has only its own connections open: an idle backend still has to catch up with the
  // catalog changes (every CREATE/DROP ROLE) of the others.
  let direct: PgPool | undefined;
  try {
    // Baseline: the role's statements straight through pg, one transaction for create, one for drop.
    const fill = (stmts: string[], name: string, password: string, until: string) =>
      stmts.map((s) => s.replace(/\{\{name\}\}/g, name).replace(/\{\{password\}\}/g, password).replace(/\{\{expiration\}\}/g, until));
    // As the engine runs them: the statements of one transaction in one message (one round trip).
    let races = 0;
    const tx = async (queries: string[]) => {
      try {
        await direct!.query(queries.join(';\n'));
      } catch (err) {
        if (!String((err as Error).message).includes(CATALOG_RACE)) throw err;
        races++;
      }
    };
    const pair = async () => {
      const name = `b-${randomBytes(8).toString('hex')}`;
      const until = new Date(Date.now() + 3_600_000).toISOString();
      await tx(fill(CREATE, name, randomBytes(12).toString('base64url'), until));
      await tx(fill(REVOKE, name, '', until));
    };
    const baselinePhase = async (): Promise<Phase> => {
      direct = new PgPool({ host: pg.host, port: pg.port, user: pg.adminUser, password: pg.adminPassword, database: 'app', max: concurrency });
      // Warm-up, not measured: the pool's connections log in (SCRAM).
      await load(1, concurrency, pair);
      const [pgBefore, meBefore] = [cpuMs(pg.pid), process.cpuUsage()];
      races = 0;
      const result = await load(seconds, concurrency, pair);
      if (races) console.log(`    PostgreSQL's catalog race (${CATALOG_RACE} ...): ${races} of ${result.count * 2} transactions`);
      const postgres = delta(pgBefore, cpuMs(pg.pid));
      const me = process.cpuUsage(meBefore);
      await direct.end();
      direct = undefined;
      const cpu = cpuPerPair(result.count, [
        ['postgres', postgres],
        ['pg client', (me.user + me.system) / 1000],
      ]);
      return { result, cpu, postgres: postgres === undefined ? undefined : postgres / result.count };
    };

    // Hangar as it runs in production: `hangar server` in its own process (the bundled CLI).
    execFileSync(process.execPath, [join(__dirname, '..', 'scripts', 'bundle.mjs')], { stdio: 'pipe' });
    server = await startDevServer(ROOT);
    const running = server;
    const http = secretsCaller(running.urls.secrets, ROOT, 1);
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
    const hangarPhase = async (): Promise<Phase> => {
      // Warm-up, not measured: the connection pool fills again (see baselinePhase), the JIT settles.
      await pairsLoad(running.urls.secrets, 1, concurrency);
      const before = { pg: cpuMs(pg.pid), server: cpuMs(running.process.pid!) };
      const { result, clientCpuMs } = await pairsLoad(running.urls.secrets, seconds, concurrency);
      const postgres = delta(before.pg, cpuMs(pg.pid));
      const cpu = cpuPerPair(result.count, [
        ['postgres', postgres],
        ['hangar server', delta(before.server, cpuMs(running.process.pid!))],
        ['autocannon', clientCpuMs],
      ]);
      return { result, cpu, postgres: postgres === undefined ? undefined : postgres / result.count };
    };

    // The phases take turns, so that the other work of a shared machine weighs on both alike.
    const baselines: Phase[] = [];
    const hangars: Phase[] = [];
    for (let run = 1; run <= runs; run++) {
      // Hangar's pool closes (`reset` leaves one connection) while the baseline runs.
      const reset = secretsCaller(running.urls.secrets, ROOT, 1);
      await reset.call('POST', 'database/reset/pg');
      await reset.close();
      const baseline = await baselinePhase();
      const hangar = await hangarPhase();
      baselines.push(baseline);
      hangars.push(hangar);
      if (runs > 1) console.log(`run ${run}:`);
      line('direct pg: CREATE ROLE + DROP ROLE (baseline)', baseline.result);
      if (baseline.cpu.text) console.log(baseline.cpu.text);
      line('Hangar: creds + lease revoke (pairs)', hangar.result, baseline.result);
      if (hangar.cpu.text) console.log(hangar.cpu.text);
      if (baseline.cpu.total && hangar.cpu.total) {
        // Where every process is CPU-bound (a quiet machine with few cores), rates go as 1 / CPU per pair.
        console.log(`    CPU-bound share (baseline CPU per pair / Hangar's): ${((baseline.cpu.total / hangar.cpu.total) * 100).toFixed(1)}%`);
      }
    }
    // Each run's rate ratio and CPU-bound share, printed as ranges and recorded as medians.
    const ratios = hangars.map((h, i) => h.result.rps / baselines[i].result.rps);
    const withCpu = hangars.every((h, i) => h.cpu.total && baselines[i].cpu.total);
    const cpuShares = withCpu ? hangars.map((h, i) => baselines[i].cpu.total! / h.cpu.total!) : undefined;
    const percent = (xs: readonly number[]) => xs.map((x) => x * 100);
    if (runs > 1) {
      console.log(`over ${runs} runs: Hangar at ${range(percent(ratios), 1)}% of the direct rate`);
      if (cpuShares) {
        console.log(`  CPU-bound share ${range(percent(cpuShares), 1)}%; CPU ms per pair: baseline ${range(baselines.map((b) => b.cpu.total!), 2)}, Hangar ${range(hangars.map((h) => h.cpu.total!), 2)}`);
        console.log(`  PostgreSQL's part: baseline ${range(baselines.map((b) => b.postgres!), 2)}, Hangar ${range(hangars.map((h) => h.postgres!), 2)}`);
      }
    }
    record({
      group: 'secrets (sqlite): database credentials, issue + revoke',
      name: databaseCore === undefined ? 'pairs/s, PostgreSQL sharing the 2 cores' : `pairs/s, PostgreSQL alone on core ${databaseCore}`,
      figure: summary(hangars.map((h) => h.result.rps), 'pairs/s'),
      baseline: `direct pg ${summary(baselines.map((b) => b.result.rps), 'pairs/s')}`,
      ratio: median(ratios),
      cpuRatio: cpuShares && median(cpuShares),
      goal: 'median of the runs\' ratios >= 70% of the direct rate',
      met: median(ratios) >= 0.7,
    });

    // autocannon stops in the middle of pairs: the leases it did not revoke go by prefix.
    const admin = secretsCaller(running.urls.secrets, ROOT, 1);
    await admin.call('PUT', 'sys/leases/revoke-prefix/database/creds/bench');
    await admin.close();
    const left = Number((await pg.admin("SELECT count(*) AS n FROM pg_roles WHERE rolname LIKE 'v-%'")).rows[0].n);
    console.log(`goal: >= 70% of the direct rate; the public service publishes 226/s. Users left after revocation: ${left}`);
  } finally {
    await direct?.end();
    await server?.stop();
    await pg.stop();
  }
}

runBenchmark(main);
