import { createServer, Server, Socket } from 'node:net';
import { ROOT_TOKEN, startSecrets, SecretsTestServer } from './helpers';
import { openTransport } from '../../../src/client/open';
import { SecretsClient } from '../../../src/client/secrets';
import { ManualClock } from '../../../src/engine/clock';
import { Engine } from '../../../src/engine/engine';
import { retryDelayMs } from '../../../src/engine/secrets/engines/database/static-roles';
import { closeDatabaseSessions } from '../../../src/engine/secrets/engines/database/store';
import { apply, destroy } from '../../../src/reconcile';
import { PAYLOAD_VERSION } from '../../../src/reconcile/payload-format';
import { captureLog, CapturedLog } from '../../helpers/log-capture';
import { haveMariaDb, startMariaDb, TestMariaDb } from '../../helpers/mariadb';
import { havePostgres, startTargetPostgres, TargetPostgres } from '../../helpers/postgres-target';
import { storedText } from '../../helpers/raw-db';
import { STORAGE_KINDS, tempDir } from '../../helpers/storage';

const run = havePostgres() && haveMariaDb() ? describe : describe.skip;

/** A TCP proxy to a database on a fixed port, which the test cuts (the database goes down) and restores. */
async function cuttableProxy(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = new Socket().connect(target.port, target.host);
    for (const [a, b] of [[client, upstream], [upstream, client]]) {
      sockets.add(a);
      a.on('error', () => b.destroy()).on('close', () => b.destroy());
      a.pipe(b);
    }
  });
  const listen = (port: number) => new Promise<number>((r) => server.listen(port, '127.0.0.1', () => r((server.address() as { port: number }).port)));
  const port = await listen(0);
  return {
    port,
    /** Refuses new connections and breaks the open ones. */
    cut: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        sockets.forEach((c) => c.destroy());
        sockets.clear();
      }),
    restore: () => listen(port),
  };
}

const PG_CREATE = [
  'CREATE ROLE "{{name}}" WITH LOGIN PASSWORD \'{{password}}\' VALID UNTIL \'{{expiration}}\';',
  'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{{name}}";',
];
const MY_CREATE = ['CREATE USER \'{{name}}\'@\'%\' IDENTIFIED BY \'{{password}}\'; GRANT SELECT ON app.* TO \'{{name}}\'@\'%\';'];

run('database secrets engine', () => {
  let pg: TargetPostgres;
  let my: TestMariaDb;
  beforeAll(async () => {
    [pg, my] = await Promise.all([startTargetPostgres(), startMariaDb()]);
    await pg.admin('CREATE TABLE items (id int); INSERT INTO items VALUES (1), (2)');
    await my.admin('CREATE TABLE app.items (id int)');
  }, 120_000);
  afterAll(async () => {
    await closeDatabaseSessions();
    await Promise.all([pg?.stop(), my?.stop()]);
  });

  const pgConfig = () => ({
    plugin_name: 'postgresql-database-plugin',
    connection_url: pg.urlTemplate,
    username: pg.adminUser,
    password: pg.adminPassword,
    allowed_roles: ['ro', 'ro-*', 'static-*', 'fail'],
  });
  const myConfig = () => ({
    plugin_name: 'mysql-database-plugin',
    connection_url: my.dsnTemplate,
    username: my.adminUser,
    password: my.adminPassword,
    allowed_roles: '*',
  });

  describe.each(STORAGE_KINDS)('on %s storage', (kind) => {
    let s: SecretsTestServer;
    let log: CapturedLog;
    beforeAll(async () => {
      log = captureLog();
      s = await startSecrets(kind, { clock: new ManualClock(Date.now()), logger: log.logger });
      expect((await s.v('POST', 'database/config/pg', pgConfig())).status).toBe(204);
      expect((await s.v('POST', 'database/config/my', myConfig())).status).toBe(204);
    }, 60_000);
    afterAll(async () => {
      await closeDatabaseSessions();
      await s.close();
    });

    test('connections: read hides the password, list, bad input names the field, nothing stored on failure', async () => {
      const read = await s.v('GET', 'database/config/pg');
      expect(read.status).toBe(200);
      expect(read.body.data).toMatchObject({
        plugin_name: 'postgresql-database-plugin',
        allowed_roles: ['ro', 'ro-*', 'static-*', 'fail'],
        verify_connection: true,
      });
      // connection_details: the plugin's fields as sent (Vault's), nothing the client never sent, never the password.
      expect(read.body.data.connection_details).toEqual({ connection_url: pg.urlTemplate, username: 'hangar' });
      expect(read.body.data).toMatchObject({ plugin_version: '', password_policy: '', skip_static_role_import_rotation: false, rotation_period: 0, rotation_schedule: '' });
      expect(read.text).not.toContain(pg.adminPassword);
      expect((await s.v('LIST', 'database/config')).body.data.keys).toEqual(['my', 'pg']);

      const closed = await new Promise<Server>((r) => {
        const srv = createServer((c) => c.destroy());
        srv.listen(0, '127.0.0.1', () => r(srv));
      });
      const port = (closed.address() as { port: number }).port;
      const cases: Array<[unknown, RegExp]> = [
        [{ ...pgConfig(), plugin_name: 'oracle-database-plugin' }, /plugin_name "oracle-database-plugin" is not supported/],
        [{ connection_url: pg.urlTemplate }, /plugin_name is required/],
        [{ ...pgConfig(), connection_url: undefined }, /connection_url is required/],
        [{ ...pgConfig(), connection_url: 'mysql://x' }, /connection_url: use postgresql/],
        [{ ...pgConfig(), max_open_connections: 'many' }, /max_open_connections/],
        [{ ...pgConfig(), verify_connection: 'maybe' }, /verify_connection/],
        [{ ...pgConfig(), password: 'wrong' }, /error creating database object: could not verify the connection: .*password/],
        [{ ...pgConfig(), connection_url: `postgresql://{{username}}:{{password}}@127.0.0.1:${port}/app` }, /could not verify the connection/],
        [{ ...pgConfig(), username_template: '{{ .Nope }}' }, /username_template: unknown field \.Nope/],
        [{ ...myConfig(), connection_url: 'nonsense' }, /connection_url: use a DSN/],
      ];
      for (const [body, message] of cases) {
        const res = await s.v('POST', 'database/config/bad', body);
        expect([res.status, res.body.errors.join(' ')]).toEqual([400, expect.stringMatching(message)]);
      }
      closed.close();
      if (kind === 'sqlite') {
        // A database that accepts connections but never answers: a clear error once the connect timeout passes.
        const silent = await new Promise<Server>((r) => {
          const srv = createServer(() => undefined);
          srv.listen(0, '127.0.0.1', () => r(srv));
        });
        const url = `postgresql://{{username}}:{{password}}@127.0.0.1:${(silent.address() as { port: number }).port}/app`;
        const hung = await s.v('POST', 'database/config/bad', { ...pgConfig(), connection_url: url });
        expect([hung.status, hung.body.errors[0]]).toEqual([400, expect.stringMatching(/could not verify the connection: .*timeout/i)]);
        silent.close();
      }
      expect((await s.v('GET', 'database/config/bad')).status).toBe(404);
      expect((await s.v('POST', 'database/config/bad', { ...pgConfig(), verify_connection: false, password: 'wrong' })).status).toBe(204);
      expect((await s.v('DELETE', 'database/config/bad')).status).toBe(204);
      expect((await s.v('GET', 'database/config/bad%27x')).status).toBe(400);
    });

    test('create and update capabilities are distinct; every path enforces its permission', async () => {
      const updater = await s.tokenWith('path "database/config/*" { capabilities = ["update", "read"] }');
      expect((await s.v('POST', 'database/config/newone', pgConfig(), updater)).status).toBe(403);
      expect((await s.v('POST', 'database/config/pg', { allowed_roles: pgConfig().allowed_roles }, updater)).status).toBe(204);
      const reader = await s.tokenWith('path "database/roles/*" { capabilities = ["read"] }');
      for (const [method, path] of [['GET', 'database/creds/ro'], ['POST', 'database/rotate-root/pg'], ['GET', 'database/static-creds/x'], ['POST', 'database/rotate-role/x'], ['POST', 'database/reset/pg'], ['GET', 'sys/policies/password/x'], ['POST', 'database/roles/x']]) {
        expect([path, (await s.v(method, path, method === 'POST' ? {} : undefined, reader)).status]).toEqual([path, 403]);
      }
    });

    test('PostgreSQL dynamic credentials: psql logs in with the grants, revocation drops the user', async () => {
      expect((await s.v('POST', 'database/roles/ro', { db_name: 'pg', creation_statements: PG_CREATE, default_ttl: '1h', max_ttl: '24h' })).status).toBe(204);
      expect((await s.v('GET', 'database/roles/ro')).body.data).toEqual({
        db_name: 'pg',
        default_ttl: 3600,
        max_ttl: 86400,
        creation_statements: PG_CREATE,
        revocation_statements: [],
        rollback_statements: [],
        renew_statements: [],
        credential_type: 'password',
        credential_config: {},
      });
      const creds = await s.v('GET', 'database/creds/ro');
      expect(creds.status).toBe(200);
      expect(creds.body).toMatchObject({ lease_duration: 3600, renewable: true, lease_id: expect.stringMatching(/^database\/creds\/ro\//) });
      const { username, password } = creds.body.data;
      expect(username).toMatch(/^v-root-ro-[A-Za-z0-9]{20}-\d+$/);
      expect(password).toMatch(/^(?=.*[a-z])(?=.*[A-Z])(?=.*\d)(?=.*-)[A-Za-z0-9-]{20}$/);
      const login = await pg.psql(username, password, 'SELECT count(*) FROM items');
      expect([login.status, login.output.trim()]).toEqual([0, '2']);
      const write = await pg.psql(username, password, 'INSERT INTO items VALUES (3)');
      expect(write.status).not.toBe(0);
      expect(write.output).toMatch(/permission denied/);
      expect((await pg.psql(username, 'wrong-password', 'SELECT 1')).status).not.toBe(0);

      expect((await s.v('POST', 'sys/leases/revoke', { lease_id: creds.body.lease_id })).status).toBe(204);
      expect((await pg.admin('SELECT 1 FROM pg_roles WHERE rolname = $1', [username])).rows).toHaveLength(0);
      expect((await pg.psql(username, password, 'SELECT 1')).output).toMatch(/password authentication failed|does not exist/);
    });

    test('sys/leases/revoke runs the role\'s revocation statements as they are now, read in the transaction that marks the lease', async () => {
      expect((await s.v('POST', 'database/roles/ro-rev', { db_name: 'pg', creation_statements: PG_CREATE })).status).toBe(204);
      const creds = (await s.v('GET', 'database/creds/ro-rev')).body;
      await pg.admin('CREATE TABLE IF NOT EXISTS revoked (name text)');
      const revocation = ['INSERT INTO revoked VALUES (\'{{name}}\');', 'REVOKE ALL ON ALL TABLES IN SCHEMA public FROM "{{name}}"; DROP ROLE "{{name}}";'];
      expect((await s.v('POST', 'database/roles/ro-rev', { revocation_statements: revocation })).status).toBe(204);
      const storage = s.engine.storage;
      const original = storage.tx;
      let transactions = 0;
      storage.tx = ((fn, options) => {
        transactions++;
        return original.call(storage, fn, options);
      }) as typeof storage.tx;
      try {
        expect((await s.v('PUT', 'sys/leases/revoke', { lease_id: creds.lease_id })).status).toBe(204);
      } finally {
        storage.tx = original;
      }
      // One plans the request, marks the lease and reads its connection and role; one deletes the lease.
      expect(transactions).toBe(2);
      expect((await pg.admin('SELECT name FROM revoked')).rows).toEqual([{ name: creds.data.username }]);
      expect((await pg.admin('SELECT 1 FROM pg_roles WHERE rolname = $1', [creds.data.username])).rows).toHaveLength(0);
      // Left behind, a table the connections' root users hold no privilege on would fail their default revocations.
      await pg.admin('DROP TABLE revoked');
    });

    test('lease expiry and token revocation drop users; renewal moves VALID UNTIL', async () => {
      expect((await s.v('POST', 'database/roles/ro-short', { db_name: 'pg', creation_statements: PG_CREATE, default_ttl: 60, max_ttl: 600 })).status).toBe(204);
      const expiring = (await s.v('GET', 'database/creds/ro-short')).body;
      expect(expiring.lease_duration).toBe(60);
      const before = (await pg.admin('SELECT rolvaliduntil FROM pg_roles WHERE rolname = $1', [expiring.data.username])).rows[0].rolvaliduntil as Date;
      const renewed = await s.v('PUT', 'sys/leases/renew', { lease_id: expiring.lease_id, increment: 120 });
      expect(renewed.status).toBe(200);
      const after = (await pg.admin('SELECT rolvaliduntil FROM pg_roles WHERE rolname = $1', [expiring.data.username])).rows[0].rolvaliduntil as Date;
      expect(after.getTime()).toBeGreaterThan(before.getTime());

      const token = await s.tokenWith('path "database/creds/*" { capabilities = ["read"] }');
      const owned = (await s.v('GET', 'database/creds/ro-short', undefined, token)).body.data.username as string;
      expect(owned).toMatch(/^v-token-ro-short-/);
      expect((await s.v('POST', 'auth/token/revoke', { token })).status).toBe(204);
      expect((await pg.admin('SELECT 1 FROM pg_roles WHERE rolname = $1', [owned])).rows).toHaveLength(0);

      s.clock.advance(121_000);
      await s.engine.scheduler.runOnce();
      expect((await pg.admin('SELECT 1 FROM pg_roles WHERE rolname = $1', [expiring.data.username])).rows).toHaveLength(0);
      expect((await pg.psql(expiring.data.username, expiring.data.password, 'SELECT 1')).status).not.toBe(0);
    });

    test('allowed_roles, failed creation rolls back, names and templates that could inject SQL are refused', async () => {
      expect((await s.v('POST', 'database/roles/other', { db_name: 'pg', creation_statements: PG_CREATE })).status).toBe(204);
      const refused = await s.v('GET', 'database/creds/other');
      expect([refused.status, refused.body.errors[0]]).toEqual([400, expect.stringMatching(/"other" is not an allowed role/)]);
      const fail = ['CREATE ROLE "{{name}}" WITH LOGIN PASSWORD \'{{password}}\';', 'GRANT SELECT ON no_such_table TO "{{name}}";'];
      expect((await s.v('POST', 'database/roles/fail', { db_name: 'pg', creation_statements: fail })).status).toBe(204);
      const roles = async () => Number((await pg.admin("SELECT count(*) AS n FROM pg_roles WHERE rolname LIKE 'v-root-fail%'")).rows[0].n);
      const failed = await s.v('GET', 'database/creds/fail');
      expect([failed.status, failed.body.errors[0]]).toEqual([400, expect.stringMatching(/failed to create the database user: .*no_such_table/)]);
      expect(await roles()).toBe(0);
      const leases = await s.v('LIST', 'sys/leases/lookup/database/creds/fail');
      expect(leases.status).toBe(404);

      const badRoles: Array<[string, unknown, RegExp]> = [
        ['database/roles/a%22b', { db_name: 'pg', creation_statements: PG_CREATE }, /role "a"b" is invalid/],
        ['database/roles/x', { creation_statements: PG_CREATE }, /db_name is required/],
        ['database/roles/x', { db_name: 'pg' }, /creation_statements is required/],
        ['database/roles/x', { db_name: 'pg', creation_statements: PG_CREATE, default_ttl: 100, max_ttl: 10 }, /default_ttl cannot be greater than max_ttl/],
        ['database/roles/x', { db_name: 'pg', creation_statements: PG_CREATE, max_ttl: '9999h' }, /max_ttl: .* greater than the mount's maximum/],
        ['database/roles/x', { db_name: 'pg', creation_statements: PG_CREATE, default_ttl: 'soon' }, /default_ttl/],
        ['database/roles/x', { db_name: 'pg', creation_statements: 42 }, /creation_statements/],
      ];
      for (const [path, body, message] of badRoles) {
        const res = await s.v('POST', path, body);
        expect([path, res.status, res.body.errors.join(' ')]).toEqual([path, 400, expect.stringMatching(message)]);
      }
      // A template that renders a quote would break out of "{{name}}".
      expect((await s.v('POST', 'database/config/quoted', { ...pgConfig(), username_template: 'v-{{ .RoleName }}-"x' })).status).toBe(204);
      expect((await s.v('POST', 'database/roles/ro-q', { db_name: 'quoted', creation_statements: PG_CREATE })).status).toBe(204);
      const injected = await s.v('GET', 'database/creds/ro-q');
      expect([injected.status, injected.body.errors[0]]).toEqual([400, expect.stringMatching(/value of \{\{name\}\} contains a quote/)]);
      expect((await s.v('DELETE', 'database/config/quoted')).status).toBe(204);
    });

    test('PostgreSQL static role: rotated on creation, on rotate-role and on schedule by the job', async () => {
      const user = `static_${kind}`;
      await pg.admin(`DROP ROLE IF EXISTS ${user}; CREATE ROLE ${user} LOGIN PASSWORD 'initial'; GRANT SELECT ON items TO ${user}`);
      const bad = await s.v('POST', 'database/static-roles/static-a', { db_name: 'pg', username: user, rotation_period: 4 });
      expect([bad.status, bad.body.errors[0]]).toEqual([400, 'rotation_period must be 5 seconds or more']);
      expect((await s.v('POST', 'database/static-roles/static-a', { db_name: 'pg', username: 'x\'y', rotation_period: 60 })).status).toBe(400);
      expect((await s.v('POST', 'database/static-roles/static-a', { db_name: 'pg', username: user, rotation_period: '1m' })).status).toBe(204);
      expect((await pg.psql(user, 'initial', 'SELECT 1')).status).not.toBe(0);
      const read = await s.v('GET', 'database/static-roles/static-a');
      expect(read.body.data).toMatchObject({ db_name: 'pg', username: user, rotation_period: 60, rotation_statements: [] });
      const first = (await s.v('GET', 'database/static-creds/static-a')).body.data;
      expect(first).toEqual({ username: user, password: expect.any(String), last_vault_rotation: expect.any(String), rotation_period: 60, ttl: 60 });
      expect((await pg.psql(user, first.password, 'SELECT count(*) FROM items')).output.trim()).toBe('2');

      s.clock.advance(20_000);
      expect((await s.v('GET', 'database/static-creds/static-a')).body.data.ttl).toBe(40);
      expect((await s.v('POST', 'database/rotate-role/static-a')).status).toBe(204);
      const second = (await s.v('GET', 'database/static-creds/static-a')).body.data;
      expect(second.password).not.toBe(first.password);
      expect(second.ttl).toBe(60);
      expect((await pg.psql(user, first.password, 'SELECT 1')).status).not.toBe(0);
      expect((await pg.psql(user, second.password, 'SELECT 1')).status).toBe(0);

      s.clock.advance(30_000);
      await s.engine.scheduler.runOnce();
      expect((await s.v('GET', 'database/static-creds/static-a')).body.data.password).toBe(second.password);
      s.clock.advance(31_000);
      await s.engine.scheduler.runOnce();
      const third = (await s.v('GET', 'database/static-creds/static-a')).body.data;
      expect(third.password).not.toBe(second.password);
      expect(third.ttl).toBe(60);
      expect((await pg.psql(user, third.password, 'SELECT 1')).status).toBe(0);

      expect((await s.v('POST', 'database/roles/static-a', { db_name: 'pg', creation_statements: PG_CREATE })).body.errors[0]).toMatch(/must be unique/);
      expect((await s.v('POST', 'database/static-roles/static-a', { username: 'someone_else' })).body.errors[0]).toMatch(/cannot update the username/);
      expect((await s.v('LIST', 'database/static-roles')).body.data.keys).toEqual(['static-a']);
      expect((await s.v('DELETE', 'database/static-roles/static-a')).status).toBe(204);
      // The user is defined outside Hangar: it stays, with its last password.
      expect((await pg.psql(user, third.password, 'SELECT 1')).status).toBe(0);
      expect((await s.v('GET', 'database/static-creds/static-a')).status).toBe(400);
      expect((await s.v('POST', 'database/rotate-role/static-a')).status).toBe(400);
    });

    test('PostgreSQL static role on a rotation_schedule: rotated at the scheduled times within the window', async () => {
      const user = `sched_${kind}`;
      await pg.admin(`DROP ROLE IF EXISTS ${user}; CREATE ROLE ${user} LOGIN PASSWORD 'initial'`);
      const write = (body: Record<string, unknown>) => s.v('POST', 'database/static-roles/static-sched', { db_name: 'pg', username: user, ...body });
      const refused = async (body: Record<string, unknown>) => {
        const res = await write(body);
        return [res.status, res.body.errors?.[0]];
      };
      expect(await refused({})).toEqual([400, 'one of rotation_schedule or rotation_period must be provided to create a static account']);
      expect(await refused({ rotation_period: 3600, rotation_schedule: '0 3 * * *' })).toEqual([400, expect.stringMatching(/^mutually exclusive fields rotation_period and rotation_schedule/)]);
      expect(await refused({ rotation_period: 3600, rotation_window: 7200 })).toEqual([400, 'rotation_window is invalid with use of rotation_period']);
      expect(await refused({ rotation_schedule: '0 3 * * *', rotation_window: 60 })).toEqual([400, 'rotation_window is invalid: rotation_window must be 3600 seconds or more']);
      for (const spec of ['0 3 * *', '0 0 3 * * *', '@daily', '0 3 * * 7', '0 24 * * *', '0 3 L * *', '0 3 * * XYZ', '0 5-3 * * *']) {
        expect(await refused({ rotation_schedule: spec })).toEqual([400, expect.stringMatching(/^could not parse rotation_schedule: /)]);
      }
      expect((await s.v('GET', 'database/static-roles/static-sched')).status).toBe(404);

      // Daily at 03:00 UTC, rotatable until 04:00.
      const day = 86_400_000;
      const next3 = (t: number) => Math.floor((t - 3 * 3_600_000) / day) * day + day + 3 * 3_600_000;
      expect((await write({ rotation_schedule: '0 3 * * *', rotation_window: '1h' })).status).toBe(204);
      const read = (await s.v('GET', 'database/static-roles/static-sched')).body.data;
      expect(read).toMatchObject({ rotation_schedule: '0 3 * * *', rotation_window: 3600, skip_import_rotation: false });
      expect(read).not.toHaveProperty('rotation_period');
      const first = (await s.v('GET', 'database/static-creds/static-sched')).body.data;
      expect(first).toEqual({
        username: user,
        password: expect.any(String),
        last_vault_rotation: expect.any(String),
        rotation_schedule: '0 3 * * *',
        rotation_window: 3600,
        ttl: Math.ceil((next3(s.clock.now()) - s.clock.now()) / 1000),
      });
      expect((await pg.psql(user, first.password, 'SELECT 1')).status).toBe(0);

      // Ten seconds into the window: rotated; the next rotation is a day later.
      s.clock.advance(next3(s.clock.now()) + 10_000 - s.clock.now());
      await s.engine.scheduler.runOnce();
      const second = (await s.v('GET', 'database/static-creds/static-sched')).body.data;
      expect(second.password).not.toBe(first.password);
      expect(second.ttl).toBe(86_390);
      expect((await pg.psql(user, second.password, 'SELECT 1')).status).toBe(0);

      // The next window passes while the job does not run (a server down): that time is skipped.
      s.clock.advance(day + 3_600_000);
      await s.engine.scheduler.runOnce();
      expect((await s.v('GET', 'database/static-creds/static-sched')).body.data.password).toBe(second.password);
      s.clock.advance(next3(s.clock.now()) + 1_000 - s.clock.now());
      await s.engine.scheduler.runOnce();
      const third = (await s.v('GET', 'database/static-creds/static-sched')).body.data;
      expect(third.password).not.toBe(second.password);
      expect((await pg.psql(user, third.password, 'SELECT 1')).status).toBe(0);

      // rotation_window without a schedule in the request is ignored (Vault); a period replaces the schedule.
      expect((await write({ rotation_window: 7200 })).status).toBe(204);
      expect((await s.v('GET', 'database/static-roles/static-sched')).body.data.rotation_window).toBe(3600);
      expect((await write({ rotation_period: 600 })).status).toBe(204);
      const period = (await s.v('GET', 'database/static-roles/static-sched')).body.data;
      expect(period.rotation_period).toBe(600);
      expect(period).not.toHaveProperty('rotation_schedule');
      expect(period).not.toHaveProperty('rotation_window');
      expect((await write({ rotation_schedule: '*/30 * * * MON-FRI' })).status).toBe(204);
      const back = (await s.v('GET', 'database/static-roles/static-sched')).body.data;
      expect([back.rotation_schedule, back.rotation_window, back.rotation_period]).toEqual(['*/30 * * * MON-FRI', undefined, undefined]);
      expect((await s.v('DELETE', 'database/static-roles/static-sched')).status).toBe(204);
    });

    test('skip_static_role_import_rotation on a connection is echoed and makes its static roles skip the first rotation', async () => {
      const user = `skip_${kind}`;
      await pg.admin(`DROP ROLE IF EXISTS ${user}; CREATE ROLE ${user} LOGIN PASSWORD 'initial'`);
      expect((await s.v('POST', 'database/config/pg-skip', { ...pgConfig(), skip_static_role_import_rotation: true })).status).toBe(204);
      expect((await s.v('GET', 'database/config/pg-skip')).body.data.skip_static_role_import_rotation).toBe(true);
      expect((await s.v('GET', 'database/config/pg')).body.data.skip_static_role_import_rotation).toBe(false);
      expect((await s.v('POST', 'database/static-roles/static-skip', { db_name: 'pg-skip', username: user, rotation_period: 60 })).status).toBe(204);
      expect((await s.v('GET', 'database/static-roles/static-skip')).body.data.skip_import_rotation).toBe(true);
      expect((await pg.psql(user, 'initial', 'SELECT 1')).status).toBe(0);
      // The role's own value wins over the connection's.
      expect((await s.v('POST', 'database/static-roles/static-skip2', { db_name: 'pg-skip', username: `${user}2`, rotation_period: 60, skip_import_rotation: false })).status).toBe(400);
      expect((await s.v('GET', 'database/static-roles/static-skip2')).status).toBe(404);
      expect((await s.v('POST', 'database/static-roles/static-skip', { skip_import_rotation: false })).status).toBe(204);
      expect((await s.v('GET', 'database/static-roles/static-skip')).body.data.skip_import_rotation).toBe(false);
      expect((await s.v('POST', 'database/rotate-role/static-skip')).status).toBe(204);
      expect((await pg.psql(user, 'initial', 'SELECT 1')).status).not.toBe(0);
      expect((await s.v('DELETE', 'database/static-roles/static-skip')).status).toBe(204);
      expect((await s.v('DELETE', 'database/config/pg-skip')).status).toBe(204);
    });

    test('password policies: HCL rules, generate, used by a connection', async () => {
      const policy = 'length = 32\nrule "charset" {\n  charset = "abcdef"\n  min-chars = 2\n}\nrule "charset" {\n  charset = "0123456789"\n  min-chars = 5\n}\n';
      expect((await s.v('PUT', 'sys/policies/password/hex', { policy })).status).toBe(204);
      expect((await s.v('GET', 'sys/policies/password/hex')).body.data).toEqual({ policy });
      expect((await s.v('LIST', 'sys/policies/password')).body.data.keys).toEqual(['hex']);
      const generated = (await s.v('GET', 'sys/policies/password/hex/generate')).body.data.password as string;
      expect(generated).toMatch(/^[a-f0-9]{32}$/);
      expect(generated.replace(/[^0-9]/g, '').length).toBeGreaterThanOrEqual(5);
      for (const [bad, message] of [
        ['length = 2\nrule "charset" { charset = "a" }', /length must be between 4 and 100/],
        ['length = 8', /at least one rule "charset"/],
        ['length = 4\nrule "charset" { charset = "ab" min-chars = 5 }', /need 5 characters but length is 4/],
        ['length = 8\nrule "other" { x = 1 }', /rule "other" is not supported/],
        ['length = 8\nrule "charset" { charset = "a"', /no closing brace/],
      ] as const) {
        const res = await s.v('PUT', 'sys/policies/password/bad', { policy: bad });
        expect([res.status, res.body.errors[0]]).toEqual([400, expect.stringMatching(message)]);
      }
      expect((await s.v('GET', 'sys/policies/password/bad/generate')).status).toBe(404);
      expect((await s.v('POST', 'database/config/pg', { password_policy: 'hex' })).status).toBe(204);
      const creds = (await s.v('GET', 'database/creds/ro')).body;
      expect(creds.data.password).toMatch(/^[a-f0-9]{32}$/);
      expect((await pg.psql(creds.data.username, creds.data.password, 'SELECT 1')).status).toBe(0);
      expect((await s.v('POST', 'database/config/pg', { password_policy: '' })).status).toBe(204);
      expect((await s.v('POST', 'sys/leases/revoke', { lease_id: creds.lease_id })).status).toBe(204);
      expect((await s.v('DELETE', 'sys/policies/password/hex')).status).toBe(204);
    });

    test('connection_details echo what was written, as written; an update merges; a password policy is looked up when issuing', async () => {
      const sent = {
        ...pgConfig(),
        max_idle_connections: '3',
        max_connection_lifetime: '5m',
        disable_escaping: true,
        password_authentication: 'scram-sha-256',
        verify_connection: false,
        password_policy: 'later',
      };
      expect((await s.v('POST', 'database/config/echo', sent)).status).toBe(204);
      const details = {
        connection_url: pg.urlTemplate,
        username: 'hangar',
        max_idle_connections: '3',
        max_connection_lifetime: '5m',
        disable_escaping: true,
        password_authentication: 'scram-sha-256',
      };
      const read = (await s.v('GET', 'database/config/echo')).body.data;
      expect([read.connection_details, read.password_policy, read.verify_connection]).toEqual([details, 'later', false]);
      expect((await s.v('POST', 'database/config/echo', { max_open_connections: 7 })).status).toBe(204);
      expect((await s.v('GET', 'database/config/echo')).body.data.connection_details).toEqual({ ...details, max_open_connections: 7 });
      // The policy named does not exist yet: the write was accepted, issuing fails with Vault's message.
      expect((await s.v('POST', 'database/roles/echo-ro', { db_name: 'echo', creation_statements: PG_CREATE })).status).toBe(204);
      expect((await s.v('POST', 'database/config/echo', { allowed_roles: 'echo-ro' })).status).toBe(204);
      const missing = await s.v('GET', 'database/creds/echo-ro');
      expect([missing.status, missing.body.errors[0]]).toEqual([400, expect.stringMatching(/^password_policy: failed to generate password: no password policy found/)]);
      expect((await s.v('PUT', 'sys/policies/password/later', { policy: 'length = 20\nrule "charset" { charset = "abcdefgh" }' })).status).toBe(204);
      const creds = (await s.v('GET', 'database/creds/echo-ro')).body;
      expect(creds.data.password).toMatch(/^[a-h]{20}$/);
      expect((await s.v('POST', 'sys/leases/revoke', { lease_id: creds.lease_id })).status).toBe(204);
      expect((await s.v('DELETE', 'database/roles/echo-ro')).status).toBe(204);
      expect((await s.v('DELETE', 'database/config/echo')).status).toBe(204);
      expect((await s.v('DELETE', 'sys/policies/password/later')).status).toBe(204);
    });

    test('MySQL variants (legacy, RDS, Aurora): the same plugin with 16-character usernames', async () => {
      for (const plugin of ['mysql-legacy-database-plugin', 'mysql-rds-database-plugin', 'mysql-aurora-database-plugin']) {
        expect((await s.v('POST', 'database/config/my-variant', { ...myConfig(), plugin_name: plugin })).status).toBe(204);
        expect((await s.v('GET', 'database/config/my-variant')).body.data.plugin_name).toBe(plugin);
        expect((await s.v('POST', 'database/roles/variant-ro', { db_name: 'my-variant', creation_statements: MY_CREATE })).status).toBe(204);
        const creds = (await s.v('GET', 'database/creds/variant-ro')).body;
        // Vault's DefaultLegacyUserNameTemplate: "v-" + the role's first 4 characters + random, cut to 16.
        expect([plugin, creds.data.username]).toEqual([plugin, expect.stringMatching(/^v-vari-[A-Za-z0-9]{9}$/)]);
        expect((await my.mysql(creds.data.username, creds.data.password, 'SELECT 1')).status).toBe(0);
        expect((await s.v('POST', 'sys/leases/revoke', { lease_id: creds.lease_id })).status).toBe(204);
        expect((await s.v('DELETE', 'database/roles/variant-ro')).status).toBe(204);
        expect((await s.v('DELETE', 'database/config/my-variant')).status).toBe(204);
      }
    });

    test('MariaDB: dynamic credentials with grants, default revocation, static rotation', async () => {
      expect((await s.v('POST', 'database/roles/my-ro', { db_name: 'my', creation_statements: MY_CREATE, default_ttl: 300 })).status).toBe(204);
      const creds = (await s.v('GET', 'database/creds/my-ro')).body;
      const { username, password } = creds.data;
      expect(username.length).toBeLessThanOrEqual(32);
      expect(username).toMatch(/^v-root-my-ro-/);
      const grants = await my.mysql(username, password, 'SHOW GRANTS');
      expect(grants.status).toBe(0);
      expect(grants.output).toContain('GRANT SELECT ON `app`.*');
      expect((await my.mysql(username, password, 'INSERT INTO app.items VALUES (1)')).output).toMatch(/denied/);
      expect((await s.v('POST', 'sys/leases/revoke', { lease_id: creds.lease_id })).status).toBe(204);
      expect((await my.mysql(username, password, 'SELECT 1')).output).toMatch(/Access denied/);
      expect(await my.admin(`SELECT user FROM mysql.user WHERE user = '${username}'`)).toEqual([]);

      const user = `st_${kind}`;
      await my.admin(`CREATE USER IF NOT EXISTS '${user}'@'%' IDENTIFIED BY 'initial'`);
      expect((await s.v('POST', 'database/static-roles/my-static', { db_name: 'my', username: user, rotation_period: 3600 })).status).toBe(204);
      const first = (await s.v('GET', 'database/static-creds/my-static')).body.data;
      expect((await my.mysql(user, 'initial', 'SELECT 1')).status).not.toBe(0);
      expect((await my.mysql(user, first.password, 'SELECT 1')).status).toBe(0);
      expect((await s.v('POST', 'database/rotate-role/my-static')).status).toBe(204);
      const second = (await s.v('GET', 'database/static-creds/my-static')).body.data;
      expect((await my.mysql(user, first.password, 'SELECT 1')).status).not.toBe(0);
      expect((await my.mysql(user, second.password, 'SELECT 1')).status).toBe(0);
      expect((await s.v('DELETE', 'database/static-roles/my-static')).status).toBe(204);
    });

    test('MariaDB unreachable: verify_connection is a clear 400 storing nothing; creds while it is down leave no lease', async () => {
      const proxy = await cuttableProxy(my);
      const config = { ...myConfig(), connection_url: `{{username}}:{{password}}@tcp(127.0.0.1:${proxy.port})/` };
      await proxy.cut();
      const refused = await s.v('POST', 'database/config/my-away', config);
      expect([refused.status, refused.body.errors[0]]).toEqual([400, expect.stringMatching(/could not verify the connection: .*ECONNREFUSED/)]);
      expect((await s.v('GET', 'database/config/my-away')).status).toBe(404);
      if (kind === 'sqlite') {
        // A server that accepts the connection but never greets: a clear error once the connect timeout passes.
        const held: Socket[] = [];
        const silent = await new Promise<Server>((r) => {
          const srv = createServer((c) => void held.push(c));
          srv.listen(0, '127.0.0.1', () => r(srv));
        });
        const hung = await s.v('POST', 'database/config/my-away', { ...config, connection_url: `{{username}}:{{password}}@tcp(127.0.0.1:${(silent.address() as { port: number }).port})/` });
        expect([hung.status, hung.body.errors[0]]).toEqual([400, expect.stringMatching(/could not verify the connection: .*(timeout|ETIMEDOUT)/i)]);
        held.forEach((c) => c.destroy());
        silent.close();
        expect((await s.v('GET', 'database/config/my-away')).status).toBe(404);
      }

      await proxy.restore();
      expect((await s.v('POST', 'database/config/my-away', config)).status).toBe(204);
      expect((await s.v('POST', 'database/roles/my-away', { db_name: 'my-away', creation_statements: MY_CREATE })).status).toBe(204);
      const leases = async () => (await s.v('LIST', 'sys/leases/lookup/database/creds/my-away/')).body.data?.keys ?? [];
      const held = (await s.v('GET', 'database/creds/my-away')).body;
      expect(await leases()).toHaveLength(1);
      await proxy.cut();
      const down = await s.v('GET', 'database/creds/my-away');
      expect([down.status, down.body.errors[0]]).toEqual([400, expect.stringMatching(/^failed to create the database user: .*(ECONNREFUSED|closed|lost)/i)]);
      expect(await leases()).toHaveLength(1);
      // Revoking while it is down keeps the lease marked; the job drops the user once it is back.
      const revoke = await s.v('POST', 'sys/leases/revoke', { lease_id: held.lease_id });
      expect([revoke.status, revoke.body.errors[0]]).toEqual([400, expect.stringMatching(/failed to revoke 1 lease\(s\); they stay marked/)]);
      await proxy.restore();
      s.clock.advance(60_000);
      await s.engine.scheduler.runOnce();
      expect(await my.admin(`SELECT user FROM mysql.user WHERE user = '${held.data.username}'`)).toEqual([]);
      expect(await leases()).toEqual([]);
      const again = (await s.v('GET', 'database/creds/my-away')).body;
      expect((await my.mysql(again.data.username, again.data.password, 'SELECT 1')).status).toBe(0);
      expect((await s.v('POST', 'sys/leases/revoke', { lease_id: again.lease_id })).status).toBe(204);
      expect((await s.v('DELETE', 'database/config/my-away')).status).toBe(204);
      await proxy.cut();
    });

    test('rotate-root: the old root password stops working and Hangar still manages users', async () => {
      const admin = `root_${kind}`;
      await pg.admin(`DROP ROLE IF EXISTS ${admin}; CREATE ROLE ${admin} LOGIN CREATEROLE PASSWORD 'root-initial'; GRANT SELECT ON items TO ${admin} WITH GRANT OPTION`);
      expect((await s.v('POST', 'database/config/pgroot', { ...pgConfig(), username: admin, password: 'root-initial', allowed_roles: 'ro-root' })).status).toBe(204);
      expect((await s.v('POST', 'database/rotate-root/pgroot')).status).toBe(204);
      expect((await pg.psql(admin, 'root-initial', 'SELECT 1')).status).not.toBe(0);
      const create = ['CREATE ROLE "{{name}}" WITH LOGIN PASSWORD \'{{password}}\';', 'GRANT SELECT ON items TO "{{name}}";'];
      expect((await s.v('POST', 'database/roles/ro-root', { db_name: 'pgroot', creation_statements: create })).status).toBe(204);
      const creds = (await s.v('GET', 'database/creds/ro-root')).body;
      expect((await pg.psql(creds.data.username, creds.data.password, 'SELECT count(*) FROM items')).output.trim()).toBe('2');
      expect((await s.v('POST', 'sys/leases/revoke', { lease_id: creds.lease_id })).status).toBe(204);
      expect((await s.v('GET', 'database/config/pgroot')).text).not.toContain('root-initial');
      // Deleting the connection first drops the users issued through it.
      const held = (await s.v('GET', 'database/creds/ro-root')).body.data;
      expect((await s.v('DELETE', 'database/config/pgroot')).status).toBe(204);
      expect((await pg.admin('SELECT 1 FROM pg_roles WHERE rolname = $1', [held.username])).rows).toHaveLength(0);
      expect((await s.v('GET', 'database/creds/ro-root')).body.errors[0]).toMatch(/connection "pgroot" does not exist/);

      const myAdmin = `mroot_${kind}`;
      await my.admin(`CREATE USER IF NOT EXISTS '${myAdmin}'@'%' IDENTIFIED BY 'root-initial'; `);
      await my.admin(`GRANT ALL PRIVILEGES ON *.* TO '${myAdmin}'@'%' WITH GRANT OPTION`);
      expect((await s.v('POST', 'database/config/myroot', { ...myConfig(), username: myAdmin, password: 'root-initial' })).status).toBe(204);
      expect((await s.v('POST', 'database/rotate-root/myroot')).status).toBe(204);
      expect((await my.mysql(myAdmin, 'root-initial', 'SELECT 1')).status).not.toBe(0);
      expect((await s.v('POST', 'database/roles/my-root', { db_name: 'myroot', creation_statements: MY_CREATE })).status).toBe(204);
      const mine = (await s.v('GET', 'database/creds/my-root')).body;
      expect((await my.mysql(mine.data.username, mine.data.password, 'SELECT 1')).status).toBe(0);
      expect((await s.v('POST', 'sys/leases/revoke', { lease_id: mine.lease_id })).status).toBe(204);
      expect((await s.v('POST', 'database/reset/myroot')).status).toBe(204);
    });

    test('failing static rotations are retried with a back-off that doubles up to an hour, then resume the period', async () => {
      expect([1, 2, 3, 9, 10, 50].map(retryDelayMs)).toEqual([10_000, 20_000, 40_000, 2_560_000, 3_600_000, 3_600_000]);
      const user = `backoff_${kind}`;
      await pg.admin(`DROP ROLE IF EXISTS ${user}; CREATE ROLE ${user} LOGIN`);
      expect((await s.v('POST', 'database/static-roles/static-backoff', { db_name: 'pg', username: user, rotation_period: 60 })).status).toBe(204);
      const before = (await s.v('GET', 'database/static-creds/static-backoff')).body.data.password;
      await pg.admin(`DROP ROLE ${user}`);
      const attempts = () => log.records().filter((r) => r.msg?.includes('static role rotation failed') && r.role === 'static-backoff').length;
      const round = async (seconds: number) => {
        s.clock.advance(seconds * 1000);
        await s.engine.scheduler.runOnce();
        return attempts();
      };
      expect(await round(61)).toBe(1);
      expect((await s.v('GET', 'database/static-creds/static-backoff')).body.data.ttl).toBe(10);
      // Each retry waits twice as long as the one before: rounds in between try nothing.
      expect([await round(5), await round(6), await round(15), await round(6), await round(34), await round(7)]).toEqual([1, 2, 2, 3, 3, 4]);
      expect((await s.v('GET', 'database/static-creds/static-backoff')).body.data.ttl).toBe(80);
      // The user is back: the next retry succeeds and the role returns to its rotation period.
      await pg.admin(`CREATE ROLE ${user} LOGIN`);
      expect(await round(81)).toBe(4);
      const after = (await s.v('GET', 'database/static-creds/static-backoff')).body.data;
      expect(after.password).not.toBe(before);
      expect(after.ttl).toBe(60);
      expect((await pg.psql(user, after.password, 'SELECT 1')).status).toBe(0);
      expect((await s.v('DELETE', 'database/static-roles/static-backoff')).status).toBe(204);
    });

    test('passwords are sealed at rest and never logged, also when a rotation fails', async () => {
      const creds = (await s.v('GET', 'database/creds/ro')).body;
      const user = `sealed_${kind}`;
      await pg.admin(`DROP ROLE IF EXISTS ${user}; CREATE ROLE ${user} LOGIN`);
      expect((await s.v('POST', 'database/static-roles/static-sealed', { db_name: 'pg', username: user, rotation_period: 10 })).status).toBe(204);
      const staticPassword = (await s.v('GET', 'database/static-creds/static-sealed')).body.data.password;
      // The user disappears: the job's rotation fails, is logged, and is retried next round.
      await pg.admin(`DROP ROLE ${user}`);
      s.clock.advance(11_000);
      await s.engine.scheduler.runOnce();
      expect(log.records().some((r) => r.msg?.includes('static role rotation failed') && r.role === 'static-sealed')).toBe(true);
      expect((await s.v('GET', 'database/static-creds/static-sealed')).body.data.password).toBe(staticPassword);
      const secrets = [pg.adminPassword, my.adminPassword, creds.data.password, staticPassword];
      const stored = await storedText(s.engine.storage, s.dataDir);
      for (const secret of secrets) {
        expect(stored).not.toContain(secret);
        expect(log.text()).not.toContain(secret);
      }
      expect((await s.v('DELETE', 'database/static-roles/static-sealed')).status).toBe(204);
      expect((await s.v('POST', 'sys/leases/revoke', { lease_id: creds.lease_id })).status).toBe(204);
    });
  });

  test('the rotation job runs once across two servers on one storage and resumes after a restart', async () => {
    const clock = new ManualClock(Date.now());
    const a = await startSecrets('sqlite', { clock });
    const open = () => Engine.open({ storage: { kind: 'sqlite', dataDir: a.dataDir }, dataDir: a.dataDir, devRootToken: ROOT_TOKEN, clock });
    let b: Engine | undefined;
    try {
      expect((await a.v('POST', 'database/config/pg', pgConfig())).status).toBe(204);
      await pg.admin('DROP ROLE IF EXISTS static_two; CREATE ROLE static_two LOGIN PASSWORD \'initial\'');
      expect((await a.v('POST', 'database/static-roles/static-two', { db_name: 'pg', username: 'static_two', rotation_period: 10 })).status).toBe(204);
      const first = (await a.v('GET', 'database/static-creds/static-two')).body.data;
      b = await open();
      clock.advance(11_000);
      await Promise.all([a.engine.scheduler.runOnce(), b.scheduler.runOnce()]);
      const second = (await a.v('GET', 'database/static-creds/static-two')).body.data;
      expect(second.password).not.toBe(first.password);
      expect(second.ttl).toBe(10);
      expect((await pg.psql('static_two', second.password, 'SELECT 1')).status).toBe(0);
      // The first server stops; the second resumes the schedule from storage.
      await a.engine.close();
      clock.advance(25_000);
      await b.scheduler.runOnce();
      await closeDatabaseSessions();
      const c = await open();
      const third = await c.app('secrets').inject({ method: 'GET', url: '/v1/database/static-creds/static-two', headers: { 'x-vault-token': ROOT_TOKEN } });
      await c.close();
      const password = third.json().data.password;
      expect(password).not.toBe(second.password);
      expect((await pg.psql('static_two', password, 'SELECT 1')).status).toBe(0);
    } finally {
      await b?.close();
      await a.close().catch(() => undefined);
    }
  }, 60_000);

  test('reconcile kinds through the embedded engine: created, unchanged, updated in place, deleted', async () => {
    const dataDir = tempDir();
    const payload = (kind: string, key: string, desired: Record<string, unknown>) => ({
      v: PAYLOAD_VERSION,
      kind,
      key,
      connection: { dataDir },
      desired,
    });
    const read = async (path: string) => {
      const transport = await openTransport({ dataDir });
      try {
        return await new SecretsClient(transport).read(path);
      } finally {
        await transport.close();
      }
    };
    const mount = payload('secrets.mount', 'db', { type: 'database', description: '', defaultLeaseTtl: 0, maxLeaseTtl: 0 });
    const policy = payload('secrets.password-policy', 'digits', { policy: 'length = 24\nrule "charset" { charset = "0123456789" }' });
    const conn = payload('secrets.database-connection', 'db/pg', {
      pluginName: 'postgresql-database-plugin',
      connectionUrl: pg.urlTemplate,
      username: pg.adminUser,
      passwordEnv: 'TEST_DB_ROOT_PASSWORD',
      allowedRoles: ['app', 'app-static'],
      passwordPolicy: 'digits',
    });
    const role = payload('secrets.database-role', 'db/app', { dbName: 'pg', creationStatements: PG_CREATE, defaultTtl: 3600 });
    await pg.admin('DROP ROLE IF EXISTS reconciled; CREATE ROLE reconciled LOGIN');
    const staticRole = payload('secrets.database-static-role', 'db/app-static', { dbName: 'pg', username: 'reconciled', rotationPeriod: 3600 });
    expect(await apply(mount)).toBe('created');
    expect(await apply(policy)).toBe('created');
    await expect(apply(conn)).rejects.toThrow(/TEST_DB_ROOT_PASSWORD \(passwordEnv\) is not set/);
    process.env.TEST_DB_ROOT_PASSWORD = pg.adminPassword;
    try {
      expect(await apply(conn)).toBe('created');
      expect(await apply(conn)).toBe('unchanged');
    } finally {
      delete process.env.TEST_DB_ROOT_PASSWORD;
    }
    // Updates leave the stored password alone: no environment variable needed.
    expect(await apply({ ...conn, desired: { ...conn.desired, allowedRoles: ['app', 'app-static', 'more'] } })).toBe('updated');
    expect(await apply(role)).toBe('created');
    expect(await apply(role)).toBe('unchanged');
    expect(await apply({ ...role, desired: { ...role.desired, defaultTtl: 600 } })).toBe('updated');
    expect((await read('db/roles/app'))?.data?.default_ttl).toBe(600);
    expect(await apply(staticRole)).toBe('created');
    expect(await apply(staticRole)).toBe('unchanged');
    const creds = await read('db/static-creds/app-static');
    expect(creds?.data?.password).toMatch(/^\d{24}$/);
    expect((await pg.psql('reconciled', creds?.data?.password, 'SELECT 1')).status).toBe(0);
    expect(await apply({ ...staticRole, desired: { ...staticRole.desired, rotationPeriod: 7200 } })).toBe('updated');
    expect((await read('db/static-creds/app-static'))?.data?.password).toBe(creds?.data?.password);
    for (const p of [staticRole, role, conn, policy]) {
      expect(await destroy(p)).toBe(true);
      expect(await destroy(p)).toBe(false);
    }
    expect(await destroy(mount)).toBe(true);
    await closeDatabaseSessions();
  });
});
