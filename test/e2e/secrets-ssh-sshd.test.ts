import { ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ManualClock } from '../../src/engine/clock';
import { startSecrets, SecretsTestServer } from '../engine/secrets/helpers';
import { clientKey, mountSsh } from '../engine/secrets/ssh-helpers';
import { tempDir } from '../helpers/storage';
import { freePort } from '../setup/postgres';

const run = promisify(execFile);
const SSHD = '/usr/sbin/sshd';
const HOST = 'web1.hangar.example.com';

/**
 * The judge of the SSH engine: Debian's OpenSSH. A private sshd (temporary directory, free loopback
 * port) trusts Hangar's CA for user certificates and presents a host certificate Hangar signed; the
 * `ssh` client trusts that CA through a `@cert-authority` line. A second sshd checks passwords with
 * PAM, whose exec helper asks Hangar's unauthenticated `ssh/verify` (what vault-ssh-helper does).
 * sshd runs as root (it must, to switch users); the login user is the current one.
 */
const canRun = existsSync(SSHD) && process.getuid?.() === 0;
if (!canRun && process.env.CI) throw new Error(`${SSHD} and root are needed for the sshd tests: run scripts/setup as root`);
const maybe = canRun ? describe : describe.skip;


interface Sshd {
  readonly port: number;
  readonly log: () => string;
  stop(): Promise<void>;
}

/** Starts `sshd -D -e` on a free loopback port with the given extra config; resolves once it listens. */
async function startSshd(dir: string, name: string, config: string[], binary = SSHD): Promise<Sshd> {
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const port = await freePort();
  const file = join(dir, `${name}.conf`);
  writeFileSync(
    file,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `PidFile ${join(dir, `${name}.pid`)}`,
      'AuthorizedKeysFile none',
      'StrictModes no',
      'PermitRootLogin yes',
      'LogLevel VERBOSE',
      ...config,
    ].join('\n'),
  );
  const child: ChildProcess = spawn(binary, ['-D', '-e', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (/Server listening/.test(out)) {
        clearInterval(timer);
        resolve();
      } else if (child.exitCode !== null) {
        clearInterval(timer);
        reject(new Error(`sshd exited: ${out}`));
      }
    }, 20);
  });
  return {
    port,
    log: () => out,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** `ssh ... echo hangar-ok`: its exit status and output. No system or user config is read. */
async function ssh(port: number, options: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  const args = ['-F', '/dev/null', '-p', String(port), '-o', 'ConnectTimeout=10', '-o', 'ConnectionAttempts=1', ...options, `${userInfo().username}@127.0.0.1`, 'echo hangar-ok'];
  try {
    const { stdout, stderr } = await run('ssh', args, { env: { ...process.env, ...env }, timeout: 30_000 });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

maybe('a real sshd and ssh accept what the SSH engine issues', () => {
  let s: SecretsTestServer;
  let dir: string;
  let sshd: Sshd;
  let user: { path: string; public: string };
  const clock = new ManualClock(Date.now());
  const me = userInfo().username;

  beforeAll(async () => {
    s = await startSecrets('sqlite', { clock });
    await mountSsh(s);
    dir = tempDir('hangar-sshd-');
    const ca = await s.v('POST', 'ssh/config/ca', { key_type: 'ed25519' });
    const userRole = { key_type: 'ca', allow_user_certificates: true, allowed_users: `${me},intruder`, default_user: me, ttl: '1h' };
    await s.v('POST', 'ssh/roles/users', userRole);
    // Two more CAs (RSA, ECDSA) on mounts of their own, trusted by the same sshd.
    const trusted = [ca.body.data.public_key];
    for (const [mount, caType] of [['ssh-rsa', { key_type: 'rsa', key_bits: 2048 }], ['ssh-ec', { key_type: 'ec', key_bits: 384 }]] as const) {
      await mountSsh(s, mount);
      trusted.push((await s.v('POST', `${mount}/config/ca`, caType)).body.data.public_key);
      for (const signer of ['default', 'rsa-sha2-512', 'ssh-rsa']) await s.v('POST', `${mount}/roles/${signer}`, { ...userRole, algorithm_signer: mount === 'ssh-ec' ? 'default' : signer });
    }
    writeFileSync(join(dir, 'ca.pub'), trusted.join(''));
    await s.v('POST', 'ssh/roles/hosts', { key_type: 'ca', allow_host_certificates: true, allowed_domains: 'hangar.example.com', allow_subdomains: true });
    // The host's own key, certified by Hangar.
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'host_key')]);
    const host = await s.v('POST', 'ssh/sign/hosts', { public_key: readFileSync(join(dir, 'host_key.pub'), 'utf8'), cert_type: 'host', valid_principals: HOST });
    expect(host.status).toBe(200);
    writeFileSync(join(dir, 'host_key-cert.pub'), host.body.data.signed_key);
    sshd = await startSshd(dir, 'cert', [
      `HostKey ${join(dir, 'host_key')}`,
      `HostCertificate ${join(dir, 'host_key-cert.pub')}`,
      `TrustedUserCAKeys ${join(dir, 'ca.pub')}`,
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
    ]);
    user = await clientKey('ed25519');
    writeFileSync(join(dir, 'known_hosts'), `@cert-authority *.hangar.example.com ${ca.body.data.public_key}`);
  });
  afterAll(async () => {
    await sshd?.stop();
    await s?.close();
  });

  /** Logs in with the user key and a certificate, trusting the host through the CA line. */
  const login = (cert: string, knownHosts = join(dir, 'known_hosts')) => {
    const certFile = join(dir, `cert-${randomBytes(4).toString('hex')}.pub`);
    writeFileSync(certFile, cert);
    return ssh(sshd.port, [
      '-i', user.path,
      '-o', `CertificateFile=${certFile}`,
      '-o', 'IdentitiesOnly=yes',
      '-o', 'BatchMode=yes',
      '-o', 'PreferredAuthentications=publickey',
      '-o', `UserKnownHostsFile=${knownHosts}`,
      '-o', 'GlobalKnownHostsFile=/dev/null',
      '-o', 'StrictHostKeyChecking=yes',
      '-o', `HostKeyAlias=${HOST}`,
    ]);
  };
  const signUser = async (principals: string, path = 'ssh/sign/users') => {
    const res = await s.v('POST', path, { public_key: user.public, valid_principals: principals });
    expect(res.status).toBe(200);
    return res.body.data.signed_key as string;
  };

  test('a user certificate for the login user is accepted, and the host certificate is trusted through @cert-authority', async () => {
    const res = await login(await signUser(me));
    expect([res.code, res.out]).toEqual([0, expect.stringContaining('hangar-ok')]);
  });

  test.each([
    ['ssh-rsa/sign/default', 0],
    ['ssh-rsa/sign/rsa-sha2-512', 0],
    ['ssh-ec/sign/default', 0],
    // SHA-1 signatures: OpenSSH 8.8 and later refuse them (the spec's "unusable without a workaround").
    ['ssh-rsa/sign/ssh-rsa', 255],
  ])('a user certificate from %s: exit %d', async (path, code) => {
    const res = await login(await signUser(me, path));
    expect([res.code, res.code ? '' : res.out]).toEqual([code, code ? '' : expect.stringContaining('hangar-ok')]);
    if (code) expect(sshd.log()).toContain('certificate signature algorithm ssh-rsa: signature algorithm not supported');
  });

  test('a certificate for another principal is refused', async () => {
    const res = await login(await signUser('intruder'));
    expect(res.code).toBe(255);
    expect(res.out).toMatch(/Permission denied/);
  });

  test('an expired certificate is refused', async () => {
    clock.advance(-3 * 3600_000);
    const cert = await signUser(me);
    clock.advance(3 * 3600_000);
    const res = await login(cert);
    expect(res.code).toBe(255);
    expect(sshd.log()).toMatch(/expired|not yet valid|Certificate invalid/i);
  });

  test('without the @cert-authority line the host is not trusted', async () => {
    const empty = join(dir, 'no_known_hosts');
    writeFileSync(empty, '');
    const res = await login(await signUser(me), empty);
    expect(res.code).toBe(255);
    expect(res.out).toMatch(/Host key verification failed/);
  });

  describe('one-time passwords through PAM', () => {
    // sshd names its PAM service after the program: a link with our own name selects our PAM file.
    const service = `hangar-otp-${randomBytes(4).toString('hex')}`;
    const pamFile = `/etc/pam.d/${service}`;
    let otpSshd: Sshd;

    beforeAll(async () => {
      const helper = join(dir, 'verify-otp.js');
      // pam_exec's expose_authtok writes the password to stdin; the helper accepts it only when
      // Hangar verifies it for this user (and thereby consumes it).
      writeFileSync(
        helper,
        `const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', async () => {
  const otp = Buffer.concat(chunks).toString().replace(/\\0.*$/s, '').trim();
  const res = await fetch(${JSON.stringify(`${s.urls.secrets}/v1/ssh/verify`)}, { method: 'POST', body: JSON.stringify({ otp }) });
  const body = await res.json().catch(() => ({}));
  process.exit(res.status === 200 && body.data && body.data.username === process.env.PAM_USER ? 0 : 1);
});
`,
      );
      writeFileSync(join(dir, 'verify-otp'), `#!/bin/sh\nexec ${process.execPath} ${helper}\n`);
      chmodSync(join(dir, 'verify-otp'), 0o755);
      writeFileSync(
        pamFile,
        [
          // type=auth: only authentication runs the helper (not pam_setcred, which pam_permit answers).
          `auth required pam_exec.so type=auth expose_authtok quiet ${join(dir, 'verify-otp')}`,
          'auth optional pam_permit.so',
          'account required pam_permit.so',
          'session required pam_permit.so',
          'password required pam_deny.so',
          '',
        ].join('\n'),
      );
      const link = join(dir, service);
      await run('ln', ['-s', SSHD, link]);
      otpSshd = await startSshd(
        dir,
        'otp',
        [`HostKey ${join(dir, 'host_key')}`, 'UsePAM yes', 'PasswordAuthentication yes', 'KbdInteractiveAuthentication yes', 'PubkeyAuthentication no'],
        link,
      );
      await s.v('POST', 'ssh/roles/otp', { key_type: 'otp', default_user: me, cidr_list: '127.0.0.0/8' });
    });
    afterAll(async () => {
      await otpSshd?.stop();
      rmSync(pamFile, { force: true });
    });

    const withPassword = (password: string) => {
      const askpass = join(dir, `askpass-${randomBytes(4).toString('hex')}`);
      writeFileSync(askpass, `#!/bin/sh\necho '${password}'\n`);
      chmodSync(askpass, 0o755);
      return ssh(
        otpSshd.port,
        [
          '-o', 'PreferredAuthentications=keyboard-interactive,password',
          '-o', 'PubkeyAuthentication=no',
          '-o', 'NumberOfPasswordPrompts=1',
          '-o', 'StrictHostKeyChecking=no',
          '-o', `UserKnownHostsFile=${join(dir, 'otp_known_hosts')}`,
        ],
        { SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force', DISPLAY: ':0' },
      );
    };

    test('the OTP logs in once; its reuse and a made-up password are refused', async () => {
      const creds = await s.v('POST', 'ssh/creds/otp', { ip: '127.0.0.1' });
      expect(creds.status).toBe(200);
      const first = await withPassword(creds.body.data.key);
      expect([first.code, first.out, first.code ? otpSshd.log() : '']).toEqual([0, expect.stringContaining('hangar-ok'), '']);
      const again = await withPassword(creds.body.data.key);
      expect(again.code).toBe(255);
      expect((await withPassword('not-an-otp')).code).toBe(255);
    });
  });
});
