import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CAPTURE_FILES, LEAK_WATCH_VAR, prepareLeakWatchDir } from '../../../src/engine/leak-watch';
import { startServerProcess } from '../../helpers/cli';
import { assertNoLeaks, FAKE_SECRET_MARK, readSecrets, scanLeaks, SecretIndex } from '../../setup/leak-scan';

/**
 * The suite-wide leak scan (issue 18; test/setup/global-teardown.ts runs it over the whole run)
 * checks itself here, in a capture directory of its own, so that a planted leak fails this test
 * and never the run.
 */
describe('leak scan', () => {
  test('finds a recorded secret anywhere in a line, of any length from the minimum', () => {
    const index = new SecretIndex();
    index.add('s3cr3t-value-0001', 'secret value');
    index.add('hvs.CAESIJ1abcdefghij', 'token');
    index.add('short', 'password');
    expect(index.size).toBe(2);
    expect([...index.kindsIn('s3cr3t-value-0001')]).toEqual(['secret value']);
    expect([...index.kindsIn('{"msg":"x hvs.CAESIJ1abcdefghij"}')]).toEqual(['token']);
    expect([...index.kindsIn('prefix:s3cr3t-value-0001:and hvs.CAESIJ1abcdefghij')].sort()).toEqual(['secret value', 'token']);
    expect([...index.kindsIn('s3cr3t-value-000 and hvs.CAESIJ1abcdefghi and short')]).toEqual([]);
  });

  test('a server whose variable names a directory not made for the watch records nothing there', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'hangar-not-a-leak-watch-'));
    try {
      const server = await startServerProcess(['--dev', '--dev-root-token', 'leak-scan-root-2'], { [LEAK_WATCH_VAR]: elsewhere });
      try {
        const res = await fetch(`${server.urls.secrets}/v1/auth/token/create`, { method: 'POST', headers: { 'x-vault-token': 'leak-scan-root-2' }, body: '{}' });
        expect(res.status).toBe(200);
      } finally {
        await server.stop();
      }
      expect(readdirSync(elsewhere)).toEqual([]);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  describe('over a real server process', () => {
    let dir: string;
    let secrets: { token: string; kv: string; key: string };
    beforeAll(async () => {
      dir = prepareLeakWatchDir(mkdtempSync(join(tmpdir(), 'hangar-leak-scan-')));
      const server = await startServerProcess(['--dev', '--dev-root-token', 'leak-scan-root', '--log-level', 'debug'], { [LEAK_WATCH_VAR]: dir });
      try {
        const call = async (method: string, path: string, body?: unknown) => {
          const res = await fetch(`${server.urls.secrets}/v1/${path}`, { method, headers: { 'x-vault-token': 'leak-scan-root' }, body: body === undefined ? undefined : JSON.stringify(body) });
          if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
          return res.status === 204 ? undefined : ((await res.json()) as any);
        };
        await call('PUT', 'sys/audit/file', { type: 'file', options: { file_path: join(dir, 'device.log') } });
        const created = await call('POST', 'auth/token/create', { policies: ['default'] });
        await call('POST', 'secret/data/db', { data: { connection: 'kv-leak-scan-value-7' } });
        await call('POST', 'sys/mounts/pkil', { type: 'pki' });
        await call('POST', 'pkil/root/generate/internal', { common_name: 'leak.test', key_type: 'ec', key_bits: 256 });
        await call('POST', 'pkil/roles/web', { allowed_domains: 'leak.test', allow_subdomains: true, key_type: 'ec', key_bits: 256 });
        const issued = await call('POST', 'pkil/issue/web', { common_name: 'a.leak.test', ttl: '1h' });
        secrets = { token: created.auth.client_token, kv: 'kv-leak-scan-value-7', key: issued.data.private_key.split('\n')[1] };
      } finally {
        await server.stop();
      }
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    test("the server's log and audit lines are captured, its secrets recorded, and the run is clean", () => {
      const names = readdirSync(dir);
      for (const prefix of Object.values(CAPTURE_FILES)) expect(names.some((n) => n.startsWith(prefix))).toBe(true);
      const index = readSecrets(dir);
      expect([...index.kindsIn(secrets.token)]).toEqual(['token']);
      expect([...index.kindsIn(secrets.kv)]).toEqual(['secret value']);
      expect([...index.kindsIn(secrets.key)]).toEqual(['private key']);
      // The audit device's copy holds the request lines (HMAC'ed), and nothing is found.
      const audit = names.find((n) => n.startsWith(CAPTURE_FILES.audit))!;
      expect(readFileSync(join(dir, audit), 'utf8')).toContain('"path":"secret/data/db"');
      expect(scanLeaks(dir)).toEqual([]);
    });

    test('a planted secret fails the scan, named by file, line and kind, never shown', () => {
      const log = readdirSync(dir).find((n) => n.startsWith(CAPTURE_FILES.log))!;
      const audit = readdirSync(dir).find((n) => n.startsWith(CAPTURE_FILES.audit))!;
      const logLines = readFileSync(join(dir, log), 'utf8').split('\n').length;
      appendFileSync(join(dir, log), `${JSON.stringify({ level: 30, msg: `token ${secrets.token} renewed` })}\n`);
      appendFileSync(join(dir, audit), `${JSON.stringify({ request: { data: { connection: secrets.kv, key: `-----BEGIN EC PRIVATE KEY-----\n${secrets.key}` } } })}\n`);
      // Shapes of credentials nobody recorded: a JWT, a token; a marked made-up one is not a finding.
      const jwt = ['eyJhbGciOiJFUzI1NiJ9', 'eyJzdWIiOiJjaS1ydW5uZXIifQ', 'c2lnbmF0dXJlLXNpZ25hdHVyZQ'].join('.');
      appendFileSync(join(dir, log), `${JSON.stringify({ msg: `login with ${jwt}, fake hvs.${FAKE_SECRET_MARK}000000000000000000` })}\n`);
      appendFileSync(join(dir, log), `${JSON.stringify({ msg: 'hvs.AAAAAAAAAAAAAAAAAAAAAAAA' })}\n`);

      const findings = scanLeaks(dir);
      expect(findings).toEqual([
        { file: audit, line: expect.any(Number), kind: 'recorded secret value' },
        { file: audit, line: expect.any(Number), kind: 'recorded private key' },
        { file: audit, line: expect.any(Number), kind: 'PEM private key' },
        { file: log, line: logLines, kind: 'recorded token' },
        { file: log, line: logLines, kind: 'secrets token (hvs.)' },
        { file: log, line: logLines + 1, kind: 'JWT' },
        { file: log, line: logLines + 2, kind: 'secrets token (hvs.)' },
      ]);
      let message = '';
      try {
        assertNoLeaks(dir);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toContain('7 secret(s) in plaintext');
      expect(message).toContain(`${join(dir, log)}:${logLines}: recorded token`);
      for (const secret of [secrets.token, secrets.kv, secrets.key, jwt]) expect(message).not.toContain(secret);
    });
  });
});
