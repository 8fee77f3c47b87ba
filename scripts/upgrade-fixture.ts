/**
 * Makes an upgrade fixture (see scripts/make-upgrade-fixture): runs a build of the CLI on SQLite and
 * on a private PostgreSQL, writes every kind of object through the three APIs, reads each back, and
 * saves the data (data directory with the secrets key, pg_dump) and what the reads answered in
 * test/fixtures/upgrade/NAME/. test/engine/storage/upgrade.test.ts opens them with the current build
 * and asks the same questions: each answer must still hold what it held (new fields may be added).
 *
 * Usage: ts-node --transpile-only scripts/upgrade-fixture.ts NAME [CLI_BUNDLE]
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { makeBoxFile } from '../test/helpers/box-file';
import { findPostgresBin, startCluster, stopCluster } from '../test/setup/postgres';

const ROOT = 'fixture-root-token';
type Api = 'registry' | 'secrets' | 'catalog';

/** One question the upgraded server must answer as the fixture's build did. */
export interface FixtureCheck {
  readonly api: Api;
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  /** The token (the root token when absent). */
  readonly token?: string;
  /** The answer, with the server's URLs as {registry} and so on; `undefined` when only the status counts. */
  readonly expect?: unknown;
}

export interface FixtureManifest {
  readonly build: string;
  readonly rootToken: string;
  readonly checks: FixtureCheck[];
  /** The box file: its download path on the registry and its sha256. */
  readonly box: { readonly path: string; readonly sha256: string };
}

/** Answers as compared: the server's URLs as placeholders, each answer's own request id dropped. */
export function normalize(value: unknown, urls: Record<Api, string>): unknown {
  let text = JSON.stringify(value ?? null);
  for (const [api, url] of Object.entries(urls)) text = text.split(url).join(`{${api}}`);
  const parsed = JSON.parse(text) as Record<string, unknown> | null;
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) delete parsed.request_id;
  return parsed;
}

/** A JSON request with the headers each API takes the token in. */
export async function call(urls: Record<Api, string>, api: Api, method: string, path: string, body?: unknown, token = ROOT) {
  const header = api === 'registry' ? 'authorization' : api === 'secrets' ? 'x-vault-token' : 'x-consul-token';
  const res = await fetch(`${urls[api]}${path}`, {
    method,
    headers: { [header]: api === 'registry' ? `Bearer ${token}` : token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // plain text (the catalog's KV raw values, errors)
  }
  return { status: res.status, body: parsed as any };
}

async function writeEverything(urls: Record<Api, string>, work: string): Promise<Omit<FixtureManifest, 'build'>> {
  const checks: FixtureCheck[] = [];
  const ok = async (api: Api, method: string, path: string, body?: unknown, token?: string) => {
    const res = await call(urls, api, method, path, body, token);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  /** Asks now and records the answer, for the upgraded server to give again. */
  const check = async (api: Api, method: string, path: string, options: { body?: unknown; token?: string; statusOnly?: boolean } = {}) => {
    const answer = await ok(api, method, path, options.body, options.token);
    checks.push({ api, method, path, body: options.body, token: options.token, expect: options.statusOnly ? undefined : normalize(answer, urls) });
  };

  // Registry: a user, an organization, a box with a version and a provider with an uploaded file.
  await ok('registry', 'POST', '/api/v1/admin/users', { user: { username: 'alice', password: 'correct horse battery', email: 'alice@example.com' } });
  await ok('registry', 'POST', '/api/v1/admin/organizations', { organization: { username: 'acme', owner: 'alice' } });
  const login = await ok('registry', 'POST', '/api/v1/authenticate', { token: { description: 'fixture' }, user: { login: 'alice', password: 'correct horse battery' } });
  const user = login.token as string;
  await ok('registry', 'POST', '/api/v1/boxes', { box: { username: 'acme', name: 'base', short_description: 'a base box', is_private: false } }, user);
  await ok('registry', 'POST', '/api/v1/box/acme/base/versions', { version: { version: '1.0.0', description: 'first' } }, user);
  const box = makeBoxFile(work, 'fixture.box', 1024);
  await ok('registry', 'POST', '/api/v1/box/acme/base/version/1.0.0/providers', { provider: { name: 'virtualbox', checksum: box.sha256, checksum_type: 'sha256' } }, user);
  const { upload_path: uploadPath } = await ok('registry', 'GET', '/api/v1/box/acme/base/version/1.0.0/provider/virtualbox/upload', undefined, user);
  const put = await fetch(uploadPath, { method: 'PUT', body: readFileSync(box.path) });
  if (put.status !== 200) throw new Error(`upload: ${put.status}`);
  await ok('registry', 'PUT', '/api/v1/box/acme/base/version/1.0.0/release', undefined, user);
  await check('registry', 'GET', '/api/v1/box/acme/base', { token: user });
  await check('registry', 'GET', '/api/v1/user/alice', { token: user });

  // Secrets: KV v1 and v2 (two versions), PKI (a CA, a role, an issued certificate), transit, a
  // database connection (to a PostgreSQL that does not run), an SSH CA, a policy.
  const mount = (path: string, body: unknown) => ok('secrets', 'POST', `/v1/sys/mounts/${path}`, body);
  await mount('kv1', { type: 'kv', options: { version: '1' } });
  await ok('secrets', 'POST', '/v1/kv1/app', { password: 'kv1-FAKEXSECRET' });
  await check('secrets', 'GET', '/v1/kv1/app');
  await mount('kv2', { type: 'kv', options: { version: '2' } });
  await ok('secrets', 'POST', '/v1/kv2/data/app', { data: { password: 'one-FAKEXSECRET' } });
  await ok('secrets', 'POST', '/v1/kv2/data/app', { data: { password: 'two-FAKEXSECRET' } });
  await check('secrets', 'GET', '/v1/kv2/data/app?version=1');
  await check('secrets', 'GET', '/v1/kv2/data/app');
  await check('secrets', 'GET', '/v1/kv2/metadata/app');
  await mount('pki', { type: 'pki', config: { max_lease_ttl: '87600h' } });
  await ok('secrets', 'POST', '/v1/pki/root/generate/internal', { common_name: 'fixture.test', ttl: '87600h', key_type: 'ec' });
  await ok('secrets', 'POST', '/v1/pki/roles/web', { allowed_domains: 'fixture.test', allow_subdomains: true, key_type: 'ec', ttl: '8760h' });
  const issued = await ok('secrets', 'POST', '/v1/pki/issue/web', { common_name: 'a.fixture.test' });
  await check('secrets', 'GET', `/v1/pki/cert/${issued.data.serial_number}`);
  await check('secrets', 'GET', '/v1/pki/cert/ca');
  await check('secrets', 'GET', '/v1/pki/roles/web');
  // The CA's private key must decrypt: the upgraded server issues with it.
  checks.push({ api: 'secrets', method: 'POST', path: '/v1/pki/issue/web', body: { common_name: 'b.fixture.test' } });
  await mount('transit', { type: 'transit' });
  await ok('secrets', 'POST', '/v1/transit/keys/app', {});
  const sealed = await ok('secrets', 'POST', '/v1/transit/encrypt/app', { plaintext: Buffer.from('hello upgrade').toString('base64') });
  await check('secrets', 'POST', '/v1/transit/decrypt/app', { body: { ciphertext: sealed.data.ciphertext } });
  await check('secrets', 'GET', '/v1/transit/keys/app');
  await mount('db', { type: 'database' });
  await ok('secrets', 'POST', '/v1/db/config/pg', {
    plugin_name: 'postgresql-database-plugin',
    connection_url: 'postgresql://{{username}}:{{password}}@127.0.0.1:1/app',
    username: 'admin',
    password: 'db-FAKEXSECRET',
    verify_connection: false,
    allowed_roles: '*',
  });
  await check('secrets', 'GET', '/v1/db/config/pg');
  await mount('ssh', { type: 'ssh' });
  await ok('secrets', 'POST', '/v1/ssh/config/ca', { generate_signing_key: true, key_type: 'ssh-ed25519' });
  await ok('secrets', 'POST', '/v1/ssh/roles/dev', { key_type: 'ca', allow_user_certificates: true, allowed_users: '*', default_user: 'dev' });
  await check('secrets', 'GET', '/v1/ssh/config/ca');
  await check('secrets', 'GET', '/v1/ssh/roles/dev');
  await ok('secrets', 'PUT', '/v1/sys/policies/acl/app', { policy: 'path "kv2/data/*" {\n  capabilities = ["read"]\n}\n' });
  await check('secrets', 'GET', '/v1/sys/policies/acl/app');
  await check('secrets', 'GET', '/v1/sys/mounts');

  // Catalog: ACL policy, role and token, a namespace, a node with a service and a check, KV, a session.
  await ok('catalog', 'PUT', '/v1/acl/policy', { Name: 'app', Rules: 'key_prefix "app/" {\n  policy = "read"\n}\n' });
  await ok('catalog', 'PUT', '/v1/acl/role', { Name: 'app-role', Policies: [{ Name: 'app' }] });
  const token = await ok('catalog', 'PUT', '/v1/acl/token', { Description: 'app token', Roles: [{ Name: 'app-role' }] });
  await check('catalog', 'GET', '/v1/acl/policy/name/app');
  await check('catalog', 'GET', '/v1/acl/role/name/app-role');
  await check('catalog', 'GET', `/v1/acl/token/${token.AccessorID}`);
  await ok('catalog', 'PUT', '/v1/namespace', { Name: 'team-a', Description: 'team A' });
  await check('catalog', 'GET', '/v1/namespace/team-a');
  await ok('catalog', 'PUT', '/v1/catalog/register', {
    Node: 'n1',
    Address: '10.0.0.1',
    Service: { ID: 'web', Service: 'web', Port: 80, Tags: ['v1'] },
    Check: { CheckID: 'web-alive', Name: 'web alive', Status: 'passing', ServiceID: 'web' },
  });
  await check('catalog', 'GET', '/v1/catalog/node/n1');
  await check('catalog', 'GET', '/v1/health/node/n1');
  await ok('catalog', 'PUT', '/v1/kv/app/config', 'hello');
  // The token's policy lets it read app/: the upgraded server still resolves token -> role -> policy.
  await check('catalog', 'GET', '/v1/kv/app/config', { token: token.SecretID });
  const session = await ok('catalog', 'PUT', '/v1/session/create', { Node: 'n1', Name: 'lock', Checks: [] });
  await check('catalog', 'GET', `/v1/session/info/${session.ID}`);

  const provider = await ok('registry', 'GET', '/api/v1/box/acme/base/version/1.0.0/provider/virtualbox', undefined, user);
  return { rootToken: ROOT, checks, box: { path: new URL(provider.download_url).pathname, sha256: box.sha256 } };
}

/** Starts `node CLI server` in dev mode (known root token) on DATA and free ports; resolves with its URLs. */
async function startServer(cli: string, data: string, extra: string[]): Promise<{ child: ChildProcess; urls: Record<Api, string> }> {
  const args = ['server', '--dev', '--dev-root-token', ROOT, '--data', data, '--log-level', 'warn', ...extra];
  for (const api of ['registry', 'secrets', 'catalog']) args.push(`--${api}-addr`, '127.0.0.1:0');
  const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const urls = await new Promise<Record<Api, string>>((done, fail) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const m = /registry (\S+), secrets (\S+), catalog (\S+)/.exec(stderr);
      if (m) done({ registry: m[1], secrets: m[2], catalog: m[3] });
    });
    child.once('exit', (code) => fail(new Error(`server exited with ${code}: ${stderr}`)));
  });
  return { child, urls };
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await exited;
}

async function main(): Promise<void> {
  const [name, cliArg] = process.argv.slice(2);
  if (!name || !/^[\w.-]+$/.test(name)) throw new Error('usage: upgrade-fixture.ts NAME [CLI_BUNDLE]');
  const cli = resolve(cliArg ?? join(__dirname, '..', 'assets', 'hangar.cjs'));
  const out = join(__dirname, '..', 'test', 'fixtures', 'upgrade', name);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const build = execFileSync(process.execPath, [cli, '--version'], { encoding: 'utf8' }).trim();
  const work = mkdtempSync(join(tmpdir(), 'hangar-fixture-'));
  const tarDir = (dir: string, file: string, exclude: string[] = []) =>
    execFileSync('tar', ['czf', join(out, file), ...exclude.map((e) => `--exclude=${e}`), '-C', dir, '.']);
  try {
    for (const kind of ['sqlite', 'postgres'] as const) {
      const data = join(work, kind);
      const bin = kind === 'postgres' ? findPostgresBin() : undefined;
      if (kind === 'postgres' && !bin) throw new Error('no PostgreSQL binaries (scripts/setup installs them)');
      const cluster = bin ? await startCluster(bin) : undefined;
      try {
        const server = await startServer(cli, data, cluster ? ['--storage', 'postgres', '--postgres-url', cluster.url] : []);
        let manifest: FixtureManifest;
        try {
          manifest = { build, ...(await writeEverything(server.urls, work)) };
        } finally {
          await stop(server.child);
        }
        writeFileSync(join(out, `${kind}.json`), `${JSON.stringify(manifest, null, 1)}\n`);
        if (cluster) {
          const dump = execFileSync(join(bin!, 'pg_dump'), ['--no-owner', '--no-privileges', '--dbname', cluster.url], { maxBuffer: 64 << 20 });
          writeFileSync(join(out, 'postgres.sql.gz'), execFileSync('gzip', ['-9n'], { input: dump }));
        }
        tarDir(data, `${kind}-data.tar.gz`);
      } finally {
        if (cluster) stopCluster(cluster);
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const sizes = execFileSync('du', ['-sk', out], { encoding: 'utf8' });
  process.stdout.write(`${out}: ${build}, ${sizes.split('\t')[0]} KiB\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  });
}
