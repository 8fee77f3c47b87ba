import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request, RequestOptions } from 'node:https';
import { join } from 'node:path';
import { connect, TLSSocket } from 'node:tls';
import { hangar, RunningServer, startServerProcess } from '../helpers/cli';
import { publicServiceBinary } from '../helpers/public-tools';
import { tempDir } from '../helpers/storage';
import { TestCa } from '../helpers/tls';
import { until } from '../helpers/until';

/**
 * TLS on the three listeners (docs/security.md, "TLS"): the files refused at start, the chain and the
 * protocol as `openssl s_client` sees them, client certificates, rotation on SIGHUP, and `--dev-tls`
 * with the public secrets service's own CLI trusting its CA. Certificates are made by openssl.
 */

const LOOPBACK = ['--registry-addr', '127.0.0.1:0', '--secrets-addr', '127.0.0.1:0', '--catalog-addr', '127.0.0.1:0'];

/** One HTTPS GET; resolves to the status, or rejects with the connection's error. */
function get(url: string, options: RequestOptions = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, ...options }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The subject CN of the certificate a new connection to `url` is served. */
function servedName(url: string, ca: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), ca: readFileSync(ca) }, () => {
      resolve(String(socket.getPeerCertificate().subject.CN));
      socket.end();
    });
    socket.on('error', reject);
  });
}

/** Two requests on one kept-alive TLS connection, the second sent when `between` resolved. */
async function onOneConnection(url: string, ca: string, between: () => Promise<void>): Promise<string[]> {
  const { hostname, port } = new URL(url);
  const socket = await new Promise<TLSSocket>((resolve, reject) => {
    const s = connect({ host: hostname, port: Number(port), ca: readFileSync(ca) }, () => resolve(s));
    s.on('error', reject);
  });
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  const ask = async (count: number) => {
    socket.write(`GET /v1/status/leader HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
    await until('an answer on the open connection', () => (received.match(/HTTP\/1\.1 \d+/g) ?? []).length >= count);
  };
  await ask(1);
  await between();
  await ask(2);
  socket.end();
  return [...(received.match(/HTTP\/1\.1 \d+/g) ?? []), String(socket.getPeerCertificate().subject.CN)];
}

function startRefused(args: readonly string[]): { code: number; stderr: string } {
  const res = hangar(['server', '--dev', ...LOOPBACK, ...args]);
  return { code: res.code, stderr: res.stderr };
}

describe('hangar server with TLS', () => {
  const dir = tempDir();
  const ca = new TestCa(tempDir());
  const other = new TestCa(tempDir(), 'Another CA');
  const good = ca.issue('server', { chain: true });
  const client = ca.issue('client', { client: true });
  const stranger = other.issue('stranger', { client: true });

  describe('refuses bad input at start, naming the flag, the file and the problem', () => {
    const expired = ca.issue('expired', { from: new Date(Date.now() - 3 * 86_400_000), to: new Date(Date.now() - 86_400_000) });
    const early = ca.issue('early', { from: new Date(Date.now() + 86_400_000), to: new Date(Date.now() + 2 * 86_400_000) });
    const noCerts = join(dir, 'empty-bundle.pem');
    writeFileSync(noCerts, 'not a certificate\n');
    test.each([
      ['an unreadable file', ['--tls-cert-file', join(dir, 'missing.pem'), '--tls-key-file', good.key], /--tls-cert-file \S+missing\.pem: cannot be read \(ENOENT\)/],
      ['a key that is not its certificate\'s', ['--tls-cert-file', good.cert, '--tls-key-file', client.key], /--tls-key-file \S+client\.key: this key does not match the certificate in \S+server\.pem/],
      ['an expired certificate', ['--tls-cert-file', expired.cert, '--tls-key-file', expired.key], /--tls-cert-file \S+expired\.pem: the certificate for "CN=expired" expired on /],
      ['a certificate not yet valid', ['--secrets-tls-cert-file', early.cert, '--secrets-tls-key-file', early.key], /--secrets-tls-cert-file \S+early\.pem: .* is not valid before /],
      ['a client CA bundle with no certificate', ['--tls-cert-file', good.cert, '--tls-key-file', good.key, '--tls-client-ca-file', noCerts], /--tls-client-ca-file \S+empty-bundle\.pem: holds no PEM certificate/],
      ['a key file with no key', ['--tls-cert-file', good.cert, '--tls-key-file', good.cert], /--tls-key-file \S+server\.pem: holds no readable private key/],
      ['a flag given twice in conflict', ['--tls-cert-file', good.cert, '--tls-cert-file', expired.cert], /--tls-cert-file given twice/],
      ['--dev-tls with certificate files', ['--dev-tls', '--tls-cert-file', good.cert], /--dev-tls makes its own certificate: do not also give --tls-cert-file/],
      ['a certificate without its key', ['--catalog-tls-cert-file', good.cert], /--catalog-tls-cert-file needs a key/],
      ['an unknown minimum version', ['--tls-cert-file', good.cert, '--tls-key-file', good.key, '--tls-min-version', 'tls11'], /--tls-min-version must be tls12 or tls13, not "tls11"/],
      ['client verification without a CA', ['--tls-cert-file', good.cert, '--tls-key-file', good.key, '--tls-client-auth', 'require'], /--tls-client-auth require needs a CA/],
      ['a listener setting without a certificate', ['--registry-tls-min-version', 'tls13'], /--registry-tls-min-version needs a certificate/],
      ['plain HTTP on a non-loopback address', ['--secrets-addr', '0.0.0.0:0'], /--secrets-addr 0\.0\.0\.0:0 is not a loopback address and the secrets listener has no TLS: .*--secrets-tls-disable/],
      ['--tls-disable with a certificate', ['--tls-disable', '--tls-cert-file', good.cert], /--tls-disable and --tls-cert-file conflict/],
    ])('%s', (_what, args, message) => {
      const res = startRefused(args);
      expect(res.stderr).toMatch(message);
      expect(res.code).toBe(2);
    });

    test('a non-loopback listener serves plain HTTP when --tls-disable says so', async () => {
      const server = await startServerProcess(['--dev', '--registry-addr', '0.0.0.0:0', '--tls-disable']);
      try {
        expect(server.urls.registry).toMatch(/^http:\/\/0\.0\.0\.0:/);
      } finally {
        await server.stop();
      }
    });
  });

  describe('serving certificates from files', () => {
    const files = join(dir, 'live');
    const live = { cert: `${files}.pem`, key: `${files}.key` };
    let server: RunningServer;

    beforeAll(async () => {
      copyFileSync(good.cert, live.cert);
      copyFileSync(good.key, live.key);
      server = await startServerProcess([
        '--dev', '--tls-cert-file', live.cert, '--tls-key-file', live.key, '--catalog-tls-min-version', 'tls13',
        '--tls-client-ca-file', ca.ca, '--secrets-tls-client-auth', 'require', '--catalog-tls-client-auth', 'none', '--log-level', 'info',
      ], {}, { stdout: true });
    });
    afterAll(() => server.stop());

    test('every listener is https; openssl s_client shows the chain and the protocol', async () => {
      for (const url of Object.values(server.urls)) expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const { port } = new URL(server.urls.catalog);
      const { stdout } = spawnSync('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-CAfile', ca.ca, '-showcerts'], { input: '', encoding: 'utf8', timeout: 10_000 });
      expect(stdout).toMatch(/Certificate chain\n 0 s:CN = server\n +i:CN = Hangar test CA\n[^]*\n 1 s:CN = Hangar test CA\n/);
      expect(stdout).toMatch(/New, TLSv1\.3, Cipher is/);
      expect(stdout).toMatch(/Verify return code: 0 \(ok\)/);
    });

    test('TLS 1.2 is refused where the minimum is TLS 1.3 and accepted elsewhere', async () => {
      const tls12 = (url: string) => {
        const { port } = new URL(url);
        const res = spawnSync('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-CAfile', ca.ca, '-tls1_2'], { input: '', encoding: 'utf8', timeout: 10_000 });
        return res.stdout + res.stderr;
      };
      expect(tls12(server.urls.catalog)).toMatch(/alert protocol version|no protocols available|wrong version number/);
      expect(tls12(server.urls.registry)).toMatch(/Protocol *: TLSv1\.2/);
    });

    test('client certificates: require refuses none and a stranger\'s; verify-if-given accepts none and refuses a stranger\'s', async () => {
      const trust = { ca: readFileSync(ca.ca) };
      const cert = (f: { cert: string; key: string }) => ({ cert: readFileSync(f.cert), key: readFileSync(f.key) });
      const health = `${server.urls.secrets}/v1/sys/health`;
      await expect(get(health, trust)).rejects.toThrow();
      await expect(get(health, { ...trust, ...cert(stranger) })).rejects.toThrow();
      expect(await get(health, { ...trust, ...cert(client) })).toBe(200);
      // The registry has the client CA from --tls-client-ca-file and no mode of its own: verify-if-given.
      const search = `${server.urls.registry}/api/v1/search`;
      expect(await get(search, trust)).toBe(200);
      expect(await get(search, { ...trust, ...cert(client) })).toBe(200);
      await expect(get(search, { ...trust, ...cert(stranger) })).rejects.toThrow();
      // The catalog does not ask.
      expect(await get(`${server.urls.catalog}/v1/status/leader`, { ...trust, ...cert(stranger) })).toBe(200);
    });

    test('SIGHUP: new connections get the new certificate, open ones go on; a bad file keeps the old one', async () => {
      const url = server.urls.catalog;
      expect(await servedName(url, ca.ca)).toBe('server');
      const rotated = ca.issue('rotated', { chain: true });
      const answers = await onOneConnection(url, ca.ca, async () => {
        copyFileSync(rotated.cert, live.cert);
        copyFileSync(rotated.key, live.key);
        server.signal('SIGHUP');
        await until('the reload', () => (server.stdout().match(/TLS certificate reloaded/g) ?? []).length === 3, { detail: server.stdout });
        expect(await servedName(url, ca.ca)).toBe('rotated');
      });
      // Both answers came on the connection opened before, which still has the old certificate.
      expect(answers).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200', 'server']);

      writeFileSync(live.key, 'garbage\n');
      server.signal('SIGHUP');
      await until('the failed reload', () => /TLS reload failed/.test(server.stdout()), { detail: server.stdout });
      expect(server.stdout()).toMatch(/--tls-key-file [^ ]*live\.key: holds no readable private key/);
      expect(await servedName(url, ca.ca)).toBe('rotated');
      expect(server.process.exitCode).toBeNull();
    });
  });

  describe('--dev-tls', () => {
    let server: RunningServer;
    let data: string;

    beforeAll(async () => {
      data = tempDir();
      server = await startServerProcess(['--dev-tls', '--data', data, '--workers', '2', '--log-level', 'info'], {}, { stdout: true });
    });
    afterAll(() => server.stop());

    test('writes its CA to the data directory and prints where it is and the export lines', () => {
      const caFile = join(data, 'ca.pem');
      expect(statSync(caFile).mode % 0o1000).toBe(0o644);
      expect(statSync(join(data, 'dev-tls-key.pem')).mode % 0o1000).toBe(0o600);
      const out = server.stderr();
      expect(out).toContain(`CA certificate: ${caFile}`);
      for (const [name, value] of [
        ['VAULT_ADDR', server.urls.secrets], ['CONSUL_HTTP_ADDR', server.urls.catalog], ['VAGRANT_SERVER_URL', server.urls.registry],
        ['VAULT_CACERT', caFile], ['CONSUL_CACERT', caFile], ['SSL_CERT_FILE', caFile], ['CURL_CA_BUNDLE', caFile],
      ]) expect(out).toContain(`export ${name}='${value}'`);
      expect(out).toMatch(/export VAULT_TOKEN='hgr\.root\.[^']+'\n[^]*export CONSUL_HTTP_TOKEN='hgr\.root\./);
    });

    test('the CA verifies every listener, on each worker thread, for localhost and 127.0.0.1', async () => {
      const trust = { ca: readFileSync(join(data, 'ca.pem')) };
      for (let i = 0; i < 6; i++) expect(await get(`${server.urls.secrets}/v1/sys/health`, trust)).toBe(200);
      expect(await get(`${server.urls.catalog.replace('127.0.0.1', 'localhost')}/v1/status/leader`, trust)).toBe(200);
      expect(await get(`${server.urls.registry}/api/v1/search`, trust)).toBe(200);
      await expect(get(`${server.urls.registry}/api/v1/search`)).rejects.toThrow(/self.signed|unable to verify/);
    });

    test('SIGHUP reloads the certificates in every worker thread', async () => {
      server.signal('SIGHUP');
      const reloaded = () => server.stdout().split('\n').filter((line) => line.includes('TLS certificate reloaded'));
      await until('three listeners reloaded in each of the two threads', () => reloaded().length === 6, { detail: server.stdout });
      expect(reloaded().filter((line) => line.includes('"thread":1'))).toHaveLength(3);
      expect(await get(`${server.urls.secrets}/v1/sys/health`, { ca: readFileSync(join(data, 'ca.pem')) })).toBe(200);
    });

    test('hangar status checks the listeners over https when given the certificate', () => {
      const addr = (url: string) => new URL(url).host;
      const args = ['status', '--registry-addr', addr(server.urls.registry), '--secrets-addr', addr(server.urls.secrets), '--catalog-addr', addr(server.urls.catalog)];
      const res = hangar(args, { HANGAR_TLS_CERT_FILE: join(data, 'dev-tls-cert.pem') });
      expect(res.stdout).toMatch(/secrets +https:\/\/127\.0\.0\.1:\d+ +ok/);
      expect(res.code).toBe(0);
      expect(hangar(args).code).toBe(1);
    });

    const vault = publicServiceBinary('vault');
    (vault ? test : test.skip)('the vault CLI works with the printed exports and refuses without VAULT_CACERT', () => {
      const exports = Object.fromEntries([...server.stderr().matchAll(/export (\w+)='([^']*)'/g)].map((m) => [m[1], m[2]]));
      const run = (env: Record<string, string>, ...args: string[]) =>
        spawnSync(vault!, args, { env: { PATH: process.env.PATH, HOME: tempDir(), ...env }, encoding: 'utf8', timeout: 30_000 });
      const put = run(exports, 'kv', 'put', 'secret/tls', 'over=https');
      expect(put.stderr).toBe('');
      expect(run(exports, 'kv', 'get', '-field=over', 'secret/tls').stdout).toBe('https');
      const { VAULT_CACERT: _ca, SSL_CERT_FILE: _ssl, ...untrusting } = exports;
      expect(run(untrusting, 'status').stderr).toMatch(/certificate signed by unknown authority/);
    });
  });
});
