/**
 * Dynamic PostgreSQL credentials issued and revoked per second through Hangar's database engine
 * (`GET database/creds/:role` then `PUT sys/leases/revoke`), next to the physical limit of the
 * database: the same CREATE ROLE / GRANT and DROP ROLE statements, in the same transactions, run
 * directly with `pg` at the same concurrency, in the same run. Hangar runs as `hangar server` in its
 * own process (the bundled CLI, rebuilt first), as the public service's published figure is
 * measured. A private PostgreSQL (the machine's binaries, password logins) on loopback; each phase
 * stops by itself.
 *
 *   npx ts-node --transpile-only bench/secrets-database.ts [--seconds 5] [--concurrency 8]
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool as PgPool } from 'pg';
import { line, load, runBenchmark, secretsCaller } from './http-load';
import { RunningServer, startServerProcess } from '../test/helpers/cli';
import { startTargetPostgres } from '../test/helpers/postgres-target';

const ROOT = 'bench-root-token';
// A grant by role membership: concurrent GRANTs on one table fail in PostgreSQL ("tuple concurrently updated").
const CREATE = [`CREATE ROLE "{{name}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}';`, `GRANT pg_read_all_data TO "{{name}}";`];
const REVOKE = [`DROP ROLE IF EXISTS "{{name}}";`];

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '8' } } });
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  console.log(`node ${process.version}, ${concurrency} concurrent clients, ${seconds} s per phase, Hangar: hangar server --dev (SQLite) in its own process`);
  const pg = await startTargetPostgres();
  let server: RunningServer | undefined;
  try {
    // Baseline: the role's statements straight through pg, one transaction for create, one for drop.
    const direct = new PgPool({ host: pg.host, port: pg.port, user: pg.adminUser, password: pg.adminPassword, database: 'app', max: concurrency });
    const fill = (stmts: string[], name: string, password: string, until: string) =>
      stmts.map((s) => s.replace(/\{\{name\}\}/g, name).replace(/\{\{password\}\}/g, password).replace(/\{\{expiration\}\}/g, until));
    // As the engine runs them: the statements of one transaction in one message (one round trip).
    const tx = async (queries: string[]) => void (await direct.query(queries.join(';\n')));
    const baseline = await load(seconds, concurrency, async () => {
      const name = `b-${randomBytes(8).toString('hex')}`;
      const until = new Date(Date.now() + 3_600_000).toISOString();
      await tx(fill(CREATE, name, randomBytes(12).toString('base64url'), until));
      await tx(fill(REVOKE, name, '', until));
    });
    await direct.end();

    // Hangar as it runs in production: `hangar server` in its own process (the bundled CLI).
    execFileSync(process.execPath, [join(__dirname, '..', 'scripts', 'bundle.mjs')], { stdio: 'pipe' });
    server = await startServerProcess(['--dev', '--dev-root-token', ROOT]);
    const http = secretsCaller(server.urls.secrets, ROOT, concurrency);
    const call = http.call;
    await call('POST', 'database/config/pg', {
      plugin_name: 'postgresql-database-plugin',
      connection_url: pg.urlTemplate,
      username: pg.adminUser,
      password: pg.adminPassword,
      allowed_roles: '*',
      max_open_connections: concurrency,
    });
    await call('POST', 'database/roles/bench', { db_name: 'pg', creation_statements: CREATE, revocation_statements: REVOKE, default_ttl: '1h' });
    const hangar = await load(seconds, concurrency, async () => {
      const creds = await call('GET', 'database/creds/bench');
      await call('PUT', 'sys/leases/revoke', { lease_id: creds.lease_id });
    });
    await http.close();

    const left = Number((await pg.admin("SELECT count(*) AS n FROM pg_roles WHERE rolname LIKE 'v-%'")).rows[0].n);
    line('direct pg: CREATE ROLE + DROP ROLE (baseline)', baseline);
    line('Hangar: creds + lease revoke', hangar, baseline);
    console.log(`goal: >= 70% of the direct rate; the public service publishes 226/s. Users left after revocation: ${left}`);
  } finally {
    await server?.stop();
    await pg.stop();
  }
}

runBenchmark(main);
