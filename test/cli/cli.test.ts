import { existsSync, readFileSync } from 'node:fs';
import { request } from 'undici';
import { encodePayload } from '../../src/reconcile/payload-format';
import { hangar, startServerProcess } from '../helpers/cli';
import { freshStorage, tempDir } from '../helpers/storage';

async function json(url: string, init: { method?: string; body?: unknown; token?: string } = {}) {
  const res = await request(url, {
    method: (init.method ?? 'GET') as 'GET',
    headers: { ...(init.body ? { 'content-type': 'application/json' } : {}), ...(init.token ? { authorization: `Bearer ${init.token}` } : {}) },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}

describe('hangar command', () => {
  test('--help everywhere, exit codes 0 ok / 1 failure / 2 usage', () => {
    const top = hangar(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/Usage: hangar COMMAND/);
    for (const cmd of [['server'], ['registry', 'create-user'], ['registry', 'create-org'], ['apply'], ['destroy'], ['prune']]) {
      const res = hangar([...cmd, '--help']);
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(new RegExp(`Usage: hangar ${cmd.join(' ')}`));
    }
    expect(hangar([]).code).toBe(2);
    expect(hangar(['--version']).stdout).toMatch(/^hangar \d+\.\d+\.\d+/);

    const unknown = hangar(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"/);

    const badFlag = hangar(['server', '--nope']);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/--nope/);
    expect(hangar(['server', '--storage', 'mysql']).stderr).toMatch(/--storage must be sqlite or postgres/);
    expect(hangar(['server', '--storage', 'postgres']).code).toBe(2);
    expect(hangar(['server', '--registry-addr', 'nonsense']).stderr).toMatch(/HOST:PORT/);
    expect(hangar(['registry', 'create-user']).code).toBe(2);
    expect(hangar(['registry', 'create-user', 'x', '--data', tempDir()]).stderr).toMatch(/--password is required/);
  });

  test('admin commands on a data directory, then served by hangar server --data', async () => {
    const data = tempDir();
    const user = hangar(['registry', 'create-user', 'alice', '--password', 'correct horse', '--email', 'alice@example.com', '--data', data]);
    expect(user).toMatchObject({ code: 0, stdout: 'created user alice\n' });
    expect(hangar(['registry', 'create-org', 'acme', '--owner', 'alice', '--data', data]).code).toBe(0);

    const again = hangar(['registry', 'create-user', 'alice', '--password', 'correct horse', '--data', data]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^hangar: error: the server answered 422: .*already been taken\n$/);
    const weak = hangar(['registry', 'create-user', 'bob', '--password', 'short', '--data', data]);
    expect(weak.code).toBe(1);
    expect(weak.stderr).toMatch(/password: must be at least 8 characters/);

    const server = await startServerProcess(['--data', data]);
    try {
      expect(server.stderr()).toMatch(/root token was created and written to .*root-token/);
      const login = await json(`${server.urls.registry}/api/v1/authenticate`, {
        method: 'POST',
        body: { user: { login: 'alice@example.com', password: 'correct horse' } },
      });
      expect(login.status).toBe(200);
      const box = await json(`${server.urls.registry}/api/v1/boxes`, { method: 'POST', body: { box: { username: 'acme', name: 'base' } }, token: login.body.token });
      expect(box.body.tag).toBe('acme/base');
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test('admin commands against a running server with the root token', async () => {
    const server = await startServerProcess(['--dev', '--dev-root-token', 'dev-root']);
    try {
      const env = { HANGAR_TOKEN: 'dev-root' };
      expect(hangar(['registry', 'create-user', 'carol', '--password', 'password123', '--address', server.urls.registry], env).code).toBe(0);
      const wrong = hangar(['registry', 'create-user', 'dave', '--password', 'password123', '--address', server.urls.registry, '--token', 'wrong']);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(/the server answered 401/);
      const noServer = hangar(['registry', 'create-user', 'dave', '--password', 'password123', '--address', 'http://127.0.0.1:1', '--token', 'x']);
      expect(noServer.code).toBe(1);
      expect(noServer.stderr).toMatch(/^hangar: error: .*(ECONNREFUSED|connect)/);
    } finally {
      await server.stop();
    }
  });

  const withPostgres = process.env.HANGAR_TEST_POSTGRES_URL ? test : test.skip;
  withPostgres('two servers on one PostgreSQL database serve the same data', async () => {
    const storage = await freshStorage('postgres');
    const url = storage.config.kind === 'postgres' ? storage.config.url : '';
    const a = await startServerProcess(['--storage', 'postgres', '--postgres-url', url, '--data', tempDir()]);
    const b = await startServerProcess([], { HANGAR_STORAGE: 'postgres', HANGAR_POSTGRES_URL: url, HANGAR_DATA: tempDir() });
    try {
      expect(a.stderr()).toMatch(/root token was created/);
      expect(b.stderr()).not.toMatch(/root token was created/);
      const root = /written to (\S+) /.exec(a.stderr())![1];
      const token = readFileSync(root, 'utf8').trim();
      expect(hangar(['registry', 'create-user', 'erin', '--password', 'password123', '--address', a.urls.registry, '--token', token]).code).toBe(0);
      const login = await json(`${b.urls.registry}/api/v1/authenticate`, { method: 'POST', body: { user: { login: 'erin', password: 'password123' } } });
      expect(login.status).toBe(200);
      await json(`${a.urls.registry}/api/v1/boxes`, { method: 'POST', body: { box: { name: 'shared' } }, token: login.body.token });
      expect((await json(`${b.urls.registry}/api/v1/box/erin/shared`, { token: login.body.token })).body.tag).toBe('erin/shared');
    } finally {
      expect(await a.stop()).toBe(0);
      expect(await b.stop()).toBe(0);
      await storage.cleanup();
    }
  });

  test('server --dev: temporary data, given root token for all three APIs, clean SIGTERM and SIGINT', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const server = await startServerProcess(['--dev', '--dev-root-token', 'dev-root']);
      const dataLine = /Data: (\S+)\/hangar\.db/.exec(server.stderr());
      expect(dataLine).not.toBeNull();
      expect(server.stderr()).toMatch(/Root token: dev-root/);
      const lookup = await request(`${server.urls.secrets}/v1/auth/token/lookup-self`, { headers: { 'x-vault-token': 'dev-root' } });
      expect(lookup.statusCode).toBe(200);
      await lookup.body.dump();
      const self = await request(`${server.urls.catalog}/v1/acl/token/self`, { headers: { 'x-consul-token': 'dev-root' } });
      expect(self.statusCode).toBe(200);
      await self.body.dump();
      expect(await server.stop(signal)).toBe(0);
      expect(existsSync(dataLine![1])).toBe(false);
    }
  });

  test('server --dev prints a random root token when none is given', async () => {
    const server = await startServerProcess(['--dev']);
    try {
      const token = /Root token: (\S+)/.exec(server.stderr())![1];
      expect(token.length).toBeGreaterThan(20);
      const res = await request(`${server.urls.secrets}/v1/auth/token/lookup-self`, { headers: { 'x-secrets-token': token } });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
    } finally {
      await server.stop();
    }
  });

  test('apply, destroy and prune a box on a data directory (idempotent)', () => {
    const data = tempDir();
    expect(hangar(['registry', 'create-user', 'alice', '--password', 'password123', '--data', data]).code).toBe(0);
    const connection = { dataDir: data };
    const payload = (desired?: Record<string, unknown>) => encodePayload({ v: 1, kind: 'registry.box', key: 'alice/web', connection, desired });

    expect(hangar(['apply'], { HANGAR_PAYLOAD: payload({ shortDescription: 'one' }) }).stdout).toBe('registry.box alice/web: created\n');
    expect(hangar(['apply'], { HANGAR_PAYLOAD: payload({ shortDescription: 'one' }) }).stdout).toBe('registry.box alice/web: unchanged\n');
    expect(hangar(['apply', '--payload', payload({ shortDescription: 'two' })]).stdout).toBe('registry.box alice/web: updated\n');
    expect(hangar(['destroy'], { HANGAR_PAYLOAD: payload() }).stdout).toBe('registry.box alice/web: deleted\n');
    expect(hangar(['destroy'], { HANGAR_PAYLOAD: payload() }).stdout).toBe('registry.box alice/web: already gone\n');

    hangar(['apply'], { HANGAR_PAYLOAD: payload({}) });
    const entry = { v: 1, kind: 'registry.box', key: 'alice/web', connection };
    const pruned = hangar(['prune'], { HANGAR_PREVIOUS: encodePayload([entry]), HANGAR_CURRENT: encodePayload([]) });
    expect(pruned.stdout).toBe('registry.box alice/web: removed from the stack, deleted\n');
    expect(hangar(['prune'], { HANGAR_PREVIOUS: encodePayload([entry]), HANGAR_CURRENT: encodePayload([entry]) }).stdout).toBe('nothing to prune\n');
  });

  test('apply of a batch: in order, on one engine, over continued variables; the first failure stops it and names its object', () => {
    const data = tempDir();
    expect(hangar(['registry', 'create-user', 'alice', '--password', 'password123', '--data', data]).code).toBe(0);
    const connection = { dataDir: data };
    const box = (name: string) => ({ v: 1, kind: 'registry.box', key: `alice/${name}`, connection, desired: {} });
    const version = (name: string) => ({ v: 1, kind: 'registry.box-version', key: `alice/${name}/1.0.0`, connection, desired: { description: '' } });
    const batch = { HANGAR_PAYLOADS: encodePayload([box('a'), version('a')]), HANGAR_PAYLOADS_2: encodePayload([box('b')]) };
    const lines = (outcome: string, outcome2 = outcome) => `registry.box alice/a: ${outcome}\nregistry.box-version alice/a/1.0.0: ${outcome2}\nregistry.box alice/b: ${outcome}\n`;
    expect(hangar(['apply'], batch)).toMatchObject({ code: 0, stdout: lines('created') });
    expect(hangar(['apply'], batch)).toMatchObject({ code: 0, stdout: lines('unchanged') });

    // A version of a box that does not exist: what came before it is applied, what comes after is not.
    const failed = hangar(['apply'], { HANGAR_PAYLOADS: encodePayload([box('c'), version('missing'), box('d')]) });
    expect(failed).toMatchObject({ code: 1, stdout: 'registry.box alice/c: created\nregistry.box-version alice/missing/1.0.0: failed\n' });
    expect(failed.stderr).toMatch(/the server answered 404/);
    expect(hangar(['apply', '--payload', encodePayload(box('d'))]).stdout).toBe('registry.box alice/d: created\n');

    const both = hangar(['apply'], { HANGAR_PAYLOAD: encodePayload(box('a')), HANGAR_PAYLOADS: encodePayload([box('a')]) });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/HANGAR_PAYLOAD and a batch \(HANGAR_PAYLOADS\) are both set/);
    const garbled = hangar(['apply'], { HANGAR_PAYLOADS: encodePayload([box('e')]), HANGAR_PAYLOADS_2: 'not base64 json' });
    expect(garbled).toMatchObject({ code: 1, stdout: '' });
    expect(garbled.stderr).toMatch(/HANGAR_PAYLOADS_2 is not base64url-encoded JSON/);
  });

  test('bad payloads fail with a message, and HTTP mode needs a token', () => {
    expect(hangar(['apply']).code).toBe(2);
    const garbage = hangar(['apply'], { HANGAR_PAYLOAD: 'not base64 json' });
    expect(garbage.code).toBe(1);
    expect(garbage.stderr).toMatch(/payload is not base64url-encoded JSON/);
    const future = hangar(['apply'], { HANGAR_PAYLOAD: encodePayload({ v: 99, kind: 'registry.box', key: 'a/b', connection: {} }) });
    expect(future.stderr).toMatch(/payload is not understood \(v: /);
    const unknownKind = hangar(['apply'], { HANGAR_PAYLOAD: encodePayload({ v: 1, kind: 'nope', key: 'a/b', connection: { dataDir: tempDir() } }) });
    expect(unknownKind.stderr).toMatch(/unknown resource kind "nope"/);
    const http = hangar(['apply'], {
      HANGAR_TOKEN: '',
      HANGAR_PAYLOAD: encodePayload({ v: 1, kind: 'registry.box', key: 'a/b', connection: { endpoints: { registry: 'http://127.0.0.1:1' } } }),
    });
    expect(http.code).toBe(1);
    expect(http.stderr).toMatch(/set the environment variable HANGAR_TOKEN/);
  });
});
