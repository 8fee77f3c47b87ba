import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT_TOKEN, startSecrets, SecretsTestServer } from './helpers';
import { newKey, sign } from './jwt-helpers';
import { captureLog, CapturedLog } from '../../helpers/log-capture';
import { STORAGE_KINDS } from '../../helpers/storage';

type Line = Record<string, any>;
const lines = (file: string, prefix = ''): Line[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l.slice(prefix.length)));
const HMAC = /^hmac-sha256:[0-9a-f]{64}$/;

describe.each(STORAGE_KINDS)('audit devices (%s)', (kind) => {
  let s: SecretsTestServer;
  let dir: string;
  beforeAll(async () => {
    s = await startSecrets(kind);
    dir = mkdtempSync(join(tmpdir(), 'hangar-audit-'));
    expect((await s.v('POST', 'sys/mounts/kv', { type: 'kv', options: { version: '1' } })).status).toBe(204);
  });
  afterAll(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('enable, list (no salt shown), refusals naming the field, sudo required, disable', async () => {
    expect((await s.v('GET', 'sys/audit')).body.data).toEqual({});
    const file = join(dir, 'api.log');
    expect((await s.v('PUT', 'sys/audit/api', { type: 'file', description: 'main', options: { file_path: file, hmac_accessor: false } })).status).toBe(204);
    expect(statSync(file).mode % 0o1000).toBe(0o600);
    const list = await s.v('GET', 'sys/audit');
    const shown = { type: 'file', description: 'main', options: { file_path: file, hmac_accessor: 'false' }, local: false, path: 'api/' };
    expect([list.body.data, list.body['api/']]).toEqual([{ 'api/': shown }, shown]);

    for (const [body, message] of [
      [{ type: 'file', options: { file_path: file } }, /path already in use/],
      [{ type: 'syslog', options: {} }, /^type: unknown audit device type "syslog"/],
      [{ type: 'file', options: {} }, /^options.file_path is required/],
      [{ type: 'file', options: { file_path: 'relative.log' } }, /^options.file_path: must be an absolute path/],
      [{ type: 'file', options: { file_path: join(dir, 'missing', 'a.log') } }, /^options.file_path: cannot open .* \(ENOENT\)/],
      [{ type: 'file', options: { file_path: file, log_raw: 'maybe' } }, /^options.log_raw: must be a boolean/],
      [{ type: 'file', options: { file_path: file, format: 'jsonx' } }, /^options.format: only "json"/],
      [{ type: 'file', options: { file_path: file, colour: 'red' } }, /^options.colour: unknown option/],
      [{ options: { file_path: file } }, /^type is required/],
    ] as const) {
      const res = await s.v('PUT', `sys/audit/${body.type === 'file' && /in use/.test(message.source) ? 'api' : 'other'}`, body);
      expect([res.status, res.body.errors?.[0]]).toEqual([400, expect.stringMatching(message)]);
    }
    expect((await s.v('PUT', 'sys/audit/bad%20path', { type: 'file', options: { file_path: file } })).body.errors[0]).toMatch(/^path "bad path" is invalid/);

    const user = await s.tokenWith('path "sys/audit*" { capabilities = ["read", "update", "delete", "list"] }');
    expect((await s.v('GET', 'sys/audit', undefined, user)).status).toBe(403);
    expect((await s.v('PUT', 'sys/audit/mine', { type: 'file', options: { file_path: 'discard' } }, user)).status).toBe(403);

    expect((await s.v('DELETE', 'sys/audit/api')).status).toBe(204);
    expect((await s.v('DELETE', 'sys/audit/api')).status).toBe(204);
    expect((await s.v('GET', 'sys/audit')).body.data).toEqual({});
  });

  test("request and response lines in Vault's shape, strings HMAC'ed per device, log_raw and prefix honoured", async () => {
    const hashed = join(dir, 'hashed.log');
    const raw = join(dir, 'raw.log');
    expect((await s.v('PUT', 'sys/audit/hashed', { type: 'file', options: { file_path: hashed } })).status).toBe(204);
    expect((await s.v('PUT', 'sys/audit/raw', { type: 'file', options: { file_path: raw, log_raw: true, prefix: 'AUDIT ' } })).status).toBe(204);

    const token = await s.tokenWith('path "kv/*" { capabilities = ["create", "update", "read"] }');
    expect((await s.v('PUT', 'kv/app', { password: 'hunter2-audit', port: 5432 }, token)).status).toBe(204);
    expect((await s.v('GET', 'kv/app', undefined, token)).body.data.password).toBe('hunter2-audit');
    expect((await s.v('GET', 'kv/other', undefined, null)).status).toBe(403);

    const hashOf = async (input: string) => (await s.v('POST', 'sys/audit-hash/hashed', { input })).body.data.hash as string;
    const accessor = (await s.v('POST', 'auth/token/lookup', { token })).body.data.accessor as string;
    const mine = lines(hashed).filter((l) => l.request?.path === 'kv/app');
    expect(mine.map((l) => [l.type, l.request.operation])).toEqual([
      ['request', 'create'],
      ['response', 'create'],
      ['request', 'read'],
      ['response', 'read'],
    ]);
    const [writeReq, , , readRes] = mine;
    expect(writeReq).toEqual({
      time: expect.stringMatching(/Z$/),
      type: 'request',
      auth: expect.objectContaining({ client_token: await hashOf(token), accessor: await hashOf(accessor), policies: expect.any(Array), token_type: 'service' }),
      request: {
        id: expect.any(String),
        operation: 'create',
        mount_type: 'kv',
        mount_accessor: expect.any(String),
        mount_point: 'kv/',
        client_token: await hashOf(token),
        client_token_accessor: await hashOf(accessor),
        namespace: { id: 'root' },
        path: 'kv/app',
        data: { password: await hashOf('hunter2-audit'), port: 5432 },
        remote_address: '127.0.0.1',
      },
    });
    expect(readRes.response).toMatchObject({ mount_type: 'kv', data: { password: await hashOf('hunter2-audit'), port: 5432 } });
    expect(await hashOf('x')).toMatch(HMAC);
    // The refused anonymous read is logged with its error.
    expect(lines(hashed).filter((l) => l.request?.path === 'kv/other').map((l) => [l.type, l.error])).toEqual([
      ['request', 'permission denied'],
      ['response', 'permission denied'],
    ]);

    // log_raw: the values as sent; prefix: before each line.
    const rawWrite = lines(raw, 'AUDIT ').find((l) => l.type === 'request' && l.request.path === 'kv/app');
    expect([rawWrite?.request.data, rawWrite?.request.client_token]).toEqual([{ password: 'hunter2-audit', port: 5432 }, token]);
    expect(readFileSync(hashed, 'utf8')).not.toContain('hunter2-audit');

    // Salts differ per device: the same value hashes differently on a second device.
    expect((await s.v('PUT', 'sys/audit/second', { type: 'file', options: { file_path: 'discard' } })).status).toBe(204);
    expect((await s.v('POST', 'sys/audit-hash/second', { input: 'x' })).body.data.hash).not.toBe(await hashOf('x'));
    expect((await s.v('POST', 'sys/audit-hash/nope', { input: 'x' })).status).toBe(400);
    for (const p of ['hashed', 'raw', 'second']) expect((await s.v('DELETE', `sys/audit/${p}`)).status).toBe(204);
  });

  test('a request that no device can log is refused with 500 "internal error" and does nothing', async () => {
    const sub = join(dir, 'gone');
    mkdirSync(sub);
    expect((await s.v('PUT', 'sys/audit/fragile', { type: 'file', options: { file_path: join(sub, 'a.log') } })).status).toBe(204);
    expect((await s.v('PUT', 'kv/blocked', { v: 'before' })).status).toBe(204);
    rmSync(sub, { recursive: true });

    const refused = await s.v('PUT', 'kv/blocked', { v: 'after' });
    expect([refused.status, refused.body]).toEqual([500, { errors: ['internal error'] }]);
    // A second device that works lets requests through again.
    expect((await s.v('PUT', 'sys/audit/spare', { type: 'file', options: { file_path: 'discard' } })).status).toBe(500);
    mkdirSync(sub);
    expect((await s.v('GET', 'kv/blocked')).body.data).toEqual({ v: 'before' });
    expect((await s.v('PUT', 'sys/audit/spare', { type: 'file', options: { file_path: 'discard' } })).status).toBe(204);
    rmSync(sub, { recursive: true });
    expect((await s.v('PUT', 'kv/blocked', { v: 'after' })).status).toBe(204);
    for (const p of ['fragile', 'spare']) expect((await s.v('DELETE', `sys/audit/${p}`)).status).toBe(204);
  });
});

/**
 * Issue 18: with a device enabled, a representative run of secrets operations leaves no token and
 * no secret value in plaintext, neither in the audit file nor in the server's own log.
 */
describe('no token or secret in the audit file or the server log', () => {
  let s: SecretsTestServer;
  let log: CapturedLog;
  let dir: string;
  beforeAll(async () => {
    log = captureLog('trace');
    s = await startSecrets('sqlite', { logger: log.logger });
    dir = mkdtempSync(join(tmpdir(), 'hangar-audit-'));
  });
  afterAll(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('tokens, logins, KV, transit and PKI', async () => {
    const file = join(dir, 'audit.log');
    expect((await s.v('PUT', 'sys/audit/file', { type: 'file', options: { file_path: file } })).status).toBe(204);
    const secrets: string[] = [ROOT_TOKEN];
    const ok = async (method: string, path: string, body?: unknown, token?: string | null) => {
      const res = await s.v(method, path, body, token);
      expect([path, res.status]).toEqual([path, expect.any(Number)]);
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
      return res.body;
    };

    // Tokens: a created one, and one from a JWT login (the JWT itself is a credential too).
    const created = await ok('POST', 'auth/token/create', { policies: ['default'], meta: { team: 'a' } });
    secrets.push(created.auth.client_token);
    await ok('GET', 'auth/token/lookup-self', undefined, created.auth.client_token);
    const key = await newKey('k1');
    await ok('POST', 'auth/jwt/config', { jwt_validation_pubkeys: [key.publicPem] });
    await ok('POST', 'auth/jwt/role/ci', { role_type: 'jwt', user_claim: 'sub', bound_audiences: ['hangar'], token_policies: 'default' });
    const jwt = await sign(key, { sub: 'ci-runner', aud: 'hangar' }, s.clock.now());
    const login = await ok('POST', 'auth/jwt/login', { role: 'ci', jwt }, null);
    secrets.push(jwt, login.auth.client_token);

    // KV v2, transit, PKI: values sent and values answered.
    // `secret/` is KV version 2 in dev mode, as on the public dev server (mounted by the engine).
    await ok('POST', 'secret/data/db', { data: { password: 'kv-secret-value-42' } });
    await ok('GET', 'secret/data/db');
    secrets.push('kv-secret-value-42');
    await ok('POST', 'sys/mounts/transit', { type: 'transit' });
    const plaintext = Buffer.from('transit-plaintext-17').toString('base64');
    const encrypted = await ok('POST', 'transit/encrypt/app', { plaintext });
    await ok('POST', 'transit/decrypt/app', { ciphertext: encrypted.data.ciphertext });
    secrets.push(plaintext, 'transit-plaintext-17');
    await ok('POST', 'sys/mounts/pkia', { type: 'pki' });
    await ok('POST', 'pkia/root/generate/internal', { common_name: 'audit.test', key_type: 'ec', key_bits: 256 });
    await ok('POST', 'pkia/roles/web', { allowed_domains: 'audit.test', allow_subdomains: true, key_type: 'ec', key_bits: 256 });
    const issued = await ok('POST', 'pkia/issue/web', { common_name: 'a.audit.test' });
    secrets.push(issued.data.private_key.split('\n')[1]);

    const audit = readFileSync(file, 'utf8');
    const serverLog = log.text();
    for (const secret of secrets) {
      expect([secret.slice(0, 12), audit.includes(secret)]).toEqual([secret.slice(0, 12), false]);
      expect([secret.slice(0, 12), serverLog.includes(secret)]).toEqual([secret.slice(0, 12), false]);
    }
    // And the trail is there: every request logged, the login's token as its HMAC.
    const hash = (await s.v('POST', 'sys/audit-hash/file', { input: login.auth.client_token })).body.data.hash;
    expect(lines(file).some((l) => l.type === 'response' && l.request.path === 'auth/jwt/login' && l.response.auth.client_token === hash)).toBe(true);
    expect(lines(file).filter((l) => l.type === 'request').length).toBeGreaterThanOrEqual(14);
  });
});
