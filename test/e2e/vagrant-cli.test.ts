import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request as httpRequest } from 'undici';
import { makeBoxFile } from '../helpers/box-file';
import { hangar, RunningServer, startServerProcess } from '../helpers/cli';
import { tempDir } from '../helpers/storage';

/**
 * The real Vagrant CLI (Debian's vagrant 2.3.4 with its vagrant_cloud 3.0.5 gem) against
 * `hangar server`, pointed there by VAGRANT_SERVER_URL. Under CI a missing vagrant is a failure.
 */
const hasVagrant = spawnSync('vagrant', ['--version'], { encoding: 'utf8' }).status === 0;
if (!hasVagrant && process.env.CI) throw new Error('vagrant is not installed (apt-get install --no-install-recommends vagrant)');
const describeWithVagrant = hasVagrant ? describe : describe.skip;
if (!hasVagrant) process.stderr.write('vagrant is not installed: Vagrant CLI e2e tests skipped\n');

const ROOT = 'vagrant-e2e-root-token';
const PASSWORD = 'correct horse battery';

interface Vagrant {
  readonly home: string;
  /** Runs `vagrant ARGS` to completion (non-interactive). */
  run(...args: string[]): { code: number; out: string };
  /** Runs `vagrant ARGS` on a terminal and answers its prompts as they appear. */
  interact(args: string[], answers: [RegExp, string | (() => string)][]): Promise<{ code: number; out: string }>;
}

function vagrant(server: RunningServer, extraEnv: NodeJS.ProcessEnv = {}): Vagrant {
  const home = tempDir('hangar-vagrant-');
  const env = { ...process.env, ...extraEnv, VAGRANT_HOME: home, VAGRANT_SERVER_URL: server.urls.registry, VAGRANT_CHECKPOINT_DISABLE: '1', VAGRANT_NO_COLOR: '1' };
  return {
    home,
    run(...args) {
      const res = spawnSync('vagrant', args, { env, encoding: 'utf8', timeout: 120_000, cwd: home });
      return { code: res.status ?? -1, out: `${res.stdout}${res.stderr}` };
    },
    interact(args, answers) {
      // `script` gives vagrant the terminal its prompts insist on.
      const child = spawn('script', ['-qfec', ['vagrant', ...args].map((a) => `'${a}'`).join(' '), '/dev/null'], { env, cwd: home });
      let out = '';
      const pending = [...answers];
      const onData = (chunk: Buffer) => {
        out += chunk.toString('utf8');
        const next = pending[0];
        if (next && next[0].test(out)) {
          pending.shift();
          out += '\n';
          child.stdin.write(`${typeof next[1] === 'function' ? next[1]() : next[1]}\n`);
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      return new Promise((resolve) => child.on('exit', (code) => resolve({ code: code ?? -1, out })));
    },
  };
}

async function api(server: RunningServer, method: string, path: string, body?: unknown, token = ROOT) {
  // A fresh connection each time (reset): the vagrant commands between two calls can outlast the
  // server's keep-alive timeout, and a pooled socket closed by the server fails the next call.
  const res = await httpRequest(`${server.urls.registry}${path}`, {
    method: method as 'GET',
    reset: true,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}

describeWithVagrant('the Vagrant CLI against hangar server', () => {
  jest.setTimeout(300_000);
  let server: RunningServer;
  let work: string;
  let box: { path: string; sha256: string };
  const codeFile = () => join(work, '2fa-code');

  beforeAll(async () => {
    work = tempDir('hangar-vagrant-work-');
    box = makeBoxFile(work);
    server = await startServerProcess(['--dev', '--dev-root-token', ROOT], {
      // The two-factor notifier: a command that receives the code in its environment.
      HANGAR_REGISTRY_2FA_COMMAND: `echo "$HANGAR_2FA_CODE" > '${join(work, '2fa-code')}'`,
    });
    for (const user of ['alice', 'carol']) {
      const made = hangar(['registry', 'create-user', user, '--password', PASSWORD, '--phone', '+1 555 010 0199', '--address', server.urls.registry, '--token', ROOT]);
      expect(made.stderr).toBe('');
    }
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function tokenFor(user: string, code?: string): Promise<string> {
    const res = await api(server, 'POST', '/api/v1/authenticate', { user: { login: user, password: PASSWORD }, two_factor: code ? { code } : undefined });
    if (res.status !== 200) throw new Error(`login ${user}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.token;
  }

  test('auth login with username and password (on a terminal), with a token, whoami and logout', async () => {
    const v = vagrant(server);
    const login = await v.interact(['cloud', 'auth', 'login'], [
      [/username or email: $/m, 'alice'],
      [/Password \(will be hidden\): $/m, PASSWORD],
      [/Token description.*: $/m, 'e2e laptop'],
    ]);
    expect(login.out).toMatch(/You are now logged in/);
    expect(login.code).toBe(0);
    expect(readFileSync(join(v.home, 'data', 'vagrant_login_token'), 'utf8')).toMatch(/^hgr\./);
    expect(v.run('cloud', 'auth', 'whoami').out).toMatch(/Currently logged in as alice/);
    expect(v.run('cloud', 'auth', 'login', '--check').code).toBe(0);
    expect(v.run('cloud', 'auth', 'logout').code).toBe(0);
    expect(v.run('cloud', 'auth', 'login', '--check').code).toBe(1);

    const byToken = vagrant(server);
    const saved = byToken.run('cloud', 'auth', 'login', '--token', await tokenFor('alice'));
    expect(saved.out).toMatch(/token was successfully saved/);
    expect(saved.out).toMatch(/You are already logged in/);
    const invalid = vagrant(server).run('cloud', 'auth', 'login', '--token', 'hgr.not-a-token');
    expect(invalid.code).toBe(1);
  });

  test('two-factor: the CLI is told a code is needed; the SMS code (through the notifier) logs in once', async () => {
    const enabled = hangar(['registry', 'two-factor', 'carol', 'on', '--address', server.urls.registry, '--token', ROOT]);
    expect(enabled).toMatchObject({ code: 0, stdout: 'two-factor login on for carol\n' });
    const v = vagrant(server);
    const login = await v.interact(['cloud', 'auth', 'login'], [
      [/username or email: $/m, 'carol'],
      [/Password \(will be hidden\): $/m, PASSWORD],
      [/Token description.*: $/m, 'e2e'],
    ]);
    // vagrant 2.3.4 rescues Excon's 406, but its vagrant_cloud gem re-raises every HTTP error as its
    // own RequestError, so the CLI stops here with the server's message (docs/compatibility.md).
    expect(login.code).not.toBe(0);
    expect(login.out).toMatch(/Two-factor authentication is enabled/);

    const request = await api(server, 'POST', '/api/v1/two-factor/request-code', {
      two_factor: { delivery_method: 'sms' },
      user: { login: 'carol', password: PASSWORD },
    });
    expect(request.body).toEqual({ two_factor: { obfuscated_destination: '+* *** *** **99' } });
    const code = readFileSync(codeFile(), 'utf8').trim();
    expect(code).toMatch(/^\d{6}$/);
    const token = await tokenFor('carol', code);
    expect((await api(server, 'POST', '/api/v1/authenticate', { user: { login: 'carol', password: PASSWORD }, two_factor: { code } })).status).toBe(401);
    expect(v.run('cloud', 'auth', 'login', '--token', token).out).toMatch(/You are already logged in/);
    expect(v.run('cloud', 'auth', 'whoami').out).toMatch(/carol/);
  });

  test('box, version and provider life cycle with the cloud subcommands', async () => {
    const v = vagrant(server);
    v.run('cloud', 'auth', 'login', '--token', await tokenFor('alice'));
    const created = v.run('cloud', 'box', 'create', 'alice/life', '--short-description', 'Life cycle', '--no-private');
    expect(created.code).toBe(0);
    expect(created.out).toMatch(/Created box alice\/life/);
    expect(v.run('cloud', 'box', 'update', 'alice/life', '--short-description', 'Changed').code).toBe(0);
    expect(v.run('cloud', 'box', 'show', 'alice/life').out).toMatch(/Box: +alice\/life\n(.*\n)*Private: +no/);

    expect(v.run('cloud', 'version', 'create', 'alice/life', '1.0.0', '--description', 'first').code).toBe(0);
    expect(v.run('cloud', 'version', 'update', 'alice/life', '1.0.0', '--description', 'First!').code).toBe(0);
    expect(v.run('cloud', 'provider', 'create', 'alice/life', 'virtualbox', '1.0.0', '--checksum', box.sha256, '--checksum-type', 'SHA256').code).toBe(0);
    const upload = v.run('cloud', 'provider', 'upload', 'alice/life', 'virtualbox', '1.0.0', box.path);
    expect(upload.out).toMatch(/Uploaded provider virtualbox/);
    expect(v.run('cloud', 'provider', 'update', 'alice/life', 'virtualbox', '1.0.0', '--checksum', box.sha256, '--checksum-type', 'sha256').code).toBe(0);
    const release = v.run('cloud', 'version', 'release', 'alice/life', '1.0.0', '--force');
    expect(release.out).toMatch(/Released version 1\.0\.0/);
    const read = await api(server, 'GET', '/api/v1/box/alice/life');
    expect(read.body).toMatchObject({
      short_description: 'Changed',
      current_version: { version: '1.0.0', status: 'active', description_markdown: 'First!', providers: [{ name: 'virtualbox', hosted: true, checksum: box.sha256, checksum_type: 'sha256' }] },
    });

    expect(v.run('cloud', 'version', 'revoke', 'alice/life', '1.0.0', '--force').out).toMatch(/Revoked version 1\.0\.0/);
    expect((await api(server, 'GET', '/api/v1/box/alice/life')).body.current_version).toBeNull();
    expect(v.run('cloud', 'provider', 'delete', 'alice/life', 'virtualbox', '1.0.0', '--force').code).toBe(0);
    expect(v.run('cloud', 'version', 'delete', 'alice/life', '1.0.0', '--force').code).toBe(0);
    expect(v.run('cloud', 'box', 'delete', 'alice/life', '--force').code).toBe(0);
    expect((await api(server, 'GET', '/api/v1/box/alice/life')).status).toBe(404);
  });

  test('publish --release (direct and plain upload), search, and vagrant box add with checksum verification', async () => {
    const v = vagrant(server);
    v.run('cloud', 'auth', 'login', '--token', await tokenFor('alice'));
    const direct = v.run('cloud', 'publish', 'alice/web', '1.0.0', 'virtualbox', box.path, '--release', '--force',
      '--short-description', 'Web server', '--no-private', '--checksum', box.sha256, '--checksum-type', 'sha256');
    expect(direct.out).toMatch(/Complete! Published alice\/web/);
    expect(direct.code).toBe(0);
    const plain = v.run('cloud', 'publish', 'alice/db', '2.1.0', 'virtualbox', box.path, '--release', '--force',
      '--short-description', 'Database server', '--no-private', '--no-direct-upload');
    expect(plain.code).toBe(0);
    for (const tag of ['alice/web', 'alice/db']) {
      const b = (await api(server, 'GET', `/api/v1/box/${tag}`)).body;
      expect(b.current_version.providers[0]).toMatchObject({ hosted: true });
    }

    const search = v.run('cloud', 'search', 'server', '--json');
    expect(search.code).toBe(0);
    const found = JSON.parse(search.out.trim().split('\n').pop()!);
    expect(found.map((b: any) => b.name).sort()).toEqual(['alice/db', 'alice/web']);
    expect(v.run('cloud', 'search', 'web', '--short').out.trim()).toBe('alice/web');

    const add = v.run('box', 'add', 'alice/web', '--provider', 'virtualbox');
    expect(add.out).toMatch(/Calculating and comparing box checksum/);
    expect(add.out).toMatch(/Successfully added box 'alice\/web' \(v1\.0\.0\) for 'virtualbox'/);
    expect(add.code).toBe(0);
    expect(existsSync(join(v.home, 'boxes', 'alice-VAGRANTSLASH-web', '1.0.0', 'virtualbox', 'box-disk1.vmdk'))).toBe(true);
    expect((await api(server, 'GET', '/api/v1/box/alice/web')).body.downloads).toBe(1);

    // A private box needs the login; the CLI sends its token to its own server.
    expect(v.run('cloud', 'publish', 'alice/secret', '1.0.0', 'virtualbox', box.path, '--release', '--force', '--private').code).toBe(0);
    expect(v.run('box', 'add', 'alice/secret', '--provider', 'virtualbox').code).toBe(0);
    const stranger = vagrant(server);
    const refused = stranger.run('box', 'add', 'alice/secret', '--provider', 'virtualbox');
    expect(refused.code).not.toBe(0);
  });

  test('a box published through API v2 with amd64 and arm64 builds: vagrant 2.3 adds the default architecture', async () => {
    // The amd64 entry carries a wrong checksum: were vagrant 2.3 to pick it instead of the default (arm64), the add would fail.
    const token = await tokenFor('alice');
    const v2 = (method: string, path: string, body?: unknown) => api(server, method, `/api/v2${path}`, body, token);
    const V = '/box/alice/multi/version/1.0.0';
    expect((await v2('POST', '/boxes', { box: { username: 'alice', name: 'multi', is_private: false } })).status).toBe(200);
    expect((await v2('POST', '/box/alice/multi/versions', { version: { version: '1.0.0' } })).status).toBe(200);
    for (const [architecture, checksum] of [['amd64', 'ab'.repeat(32)], ['arm64', box.sha256]]) {
      const made = await v2('POST', `${V}/providers`, { provider: { name: 'virtualbox', architecture, checksum, checksum_type: 'sha256' } });
      expect(made.status).toBe(200);
    }
    expect((await v2('PUT', `${V}/provider/virtualbox/arm64`, { provider: { default_architecture: true } })).body.default_architecture).toBe(true);
    const target = await v2('GET', `${V}/provider/virtualbox/arm64/upload`);
    const put = await httpRequest(target.body.upload_path, { method: 'PUT', reset: true, body: readFileSync(box.path) });
    await put.body.text();
    expect(put.statusCode).toBe(200);
    // amd64 gets its file through a URL (the arm64 one; its declared checksum does not match it).
    const arm64 = (await v2('GET', `${V}/provider/virtualbox/arm64`)).body;
    expect((await v2('PUT', `${V}/provider/virtualbox/amd64`, { provider: { url: arm64.download_url } })).status).toBe(200);
    expect((await v2('PUT', `${V}/release`)).body.status).toBe('active');

    const v = vagrant(server);
    const add = v.run('box', 'add', 'alice/multi', '--provider', 'virtualbox');
    expect(add.out).toMatch(/Successfully added box 'alice\/multi' \(v1\.0\.0\) for 'virtualbox'/);
    expect(add.code).toBe(0);
    // The v1 view of the same box (what `vagrant cloud` of 2.3 reads) shows the default only.
    const read = await api(server, 'GET', '/api/v1/box/alice/multi');
    expect(read.body.current_version.providers).toEqual([expect.objectContaining({ name: 'virtualbox', hosted: true, checksum: box.sha256 })]);
    expect(v.run('cloud', 'box', 'show', 'alice/multi').code).toBe(0);
  });

  test('a box whose checksum does not match is refused by vagrant box add', async () => {
    // The provider points at an external URL (here: the hosted file of another box) with a wrong checksum.
    const v = vagrant(server);
    const token = await tokenFor('alice');
    v.run('cloud', 'auth', 'login', '--token', token);
    const url = (await api(server, 'GET', '/api/v1/box/alice/web/version/1.0.0/provider/virtualbox', undefined, token)).body.download_url;
    expect(v.run('cloud', 'publish', 'alice/bad', '1.0.0', 'virtualbox', '--url', url, '--release', '--force', '--no-private',
      '--checksum', 'ab'.repeat(32), '--checksum-type', 'sha256').code).toBe(0);
    const add = v.run('box', 'add', 'alice/bad', '--provider', 'virtualbox');
    expect(add.code).not.toBe(0);
    expect(add.out).toMatch(/checksum/i);
  });
});

/**
 * An https registry (`hangar server --dev-tls`): the CLI trusts the dev CA through SSL_CERT_FILE (its
 * API calls, Ruby's OpenSSL) and CURL_CA_BUNDLE (box files, through curl), the variables the dev banner
 * prints for it, and refuses the server without them.
 */
describeWithVagrant('the Vagrant CLI against an https registry trusting its CA (--dev-tls, SSL_CERT_FILE, CURL_CA_BUNDLE)', () => {
  jest.setTimeout(300_000);
  let server: RunningServer;
  let ca: string;
  let box: { path: string; sha256: string };

  beforeAll(async () => {
    const data = tempDir();
    box = makeBoxFile(tempDir('hangar-vagrant-work-'));
    server = await startServerProcess(['--dev-tls', '--dev-root-token', ROOT, '--data', data]);
    ca = join(data, 'ca.pem');
    expect(server.stderr()).toContain(`export SSL_CERT_FILE='${ca}'`);
    expect(server.stderr()).toContain(`export CURL_CA_BUNDLE='${ca}'`);
    const made = hangar(['registry', 'create-user', 'alice', '--password', PASSWORD, '--address', server.urls.registry, '--token', ROOT], { NODE_EXTRA_CA_CERTS: ca });
    expect(made.stderr).toBe('');
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('logs in, publishes a box with its file and adds it, over https', async () => {
    expect(server.urls.registry).toMatch(/^https:/);
    const v = vagrant(server, { SSL_CERT_FILE: ca, CURL_CA_BUNDLE: ca });
    const login = await v.interact(['cloud', 'auth', 'login'], [
      [/username or email: $/m, 'alice'],
      [/Password \(will be hidden\): $/m, PASSWORD],
      [/Token description.*: $/m, 'https laptop'],
    ]);
    expect(login.out).toMatch(/You are now logged in/);
    const published = v.run('cloud', 'publish', 'alice/tls', '1.0.0', 'virtualbox', box.path, '--release', '--force',
      '--short-description', 'Over https', '--no-private', '--checksum', box.sha256, '--checksum-type', 'sha256');
    expect(published.out).toMatch(/Complete! Published alice\/tls/);
    expect(published.code).toBe(0);
    const add = v.run('box', 'add', 'alice/tls', '--provider', 'virtualbox');
    expect(add.out).toMatch(/Successfully added box 'alice\/tls' \(v1\.0\.0\) for 'virtualbox'/);
    expect(add.code).toBe(0);

    const untrusting = vagrant(server).run('box', 'add', 'alice/tls', '--provider', 'virtualbox');
    expect(untrusting.code).not.toBe(0);
    expect(untrusting.out).toMatch(/certificate verify failed|SSL/);
  });
});
