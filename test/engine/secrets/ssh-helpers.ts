import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SecretsTestServer } from './helpers';
import { tempDir } from '../../helpers/storage';

const run = promisify(execFile);

/** Mounts the SSH engine at `path` (dev mode's `ssh/` is kept: 200 with a warning). */
export async function mountSsh(s: SecretsTestServer, path = 'ssh'): Promise<void> {
  const res = await s.v('POST', `sys/mounts/${path}`, { type: 'ssh' });
  if (res.status !== 204 && res.status !== 200) throw new Error(`mount ${path}: ${res.status} ${res.text}`);
}

/** Client key pairs made by ssh-keygen: `{ private: path, public: "ssh-... AAAA..." }`. */
export async function clientKey(type: 'ed25519' | 'ecdsa' | 'rsa', bits?: number): Promise<{ path: string; public: string }> {
  const path = join(tempDir('hangar-ssh-key-'), `id_${type}`);
  await run('ssh-keygen', ['-q', '-t', type, ...(bits ? ['-b', String(bits)] : []), '-N', '', '-C', 'test@hangar', '-f', path]);
  return { path, public: readFileSync(`${path}.pub`, 'utf8') };
}

/** `ssh-keygen -L` of a certificate, in UTC; the reader the issue names as the judge of the format. */
export async function describeCert(signedKey: string): Promise<string> {
  const file = join(tempDir('hangar-ssh-cert-'), 'id-cert.pub');
  writeFileSync(file, signedKey);
  const { stdout } = await run('ssh-keygen', ['-L', '-f', file], { env: { ...process.env, TZ: 'UTC' } });
  return stdout;
}

/** The public key (`type base64`) of a private key, by `ssh-keygen -y`: proves the key is usable by OpenSSH. */
export async function publicOf(privateKey: string): Promise<string> {
  const file = join(tempDir('hangar-ssh-priv-'), 'id');
  writeFileSync(file, privateKey, { mode: 0o600 });
  const { stdout } = await run('ssh-keygen', ['-y', '-f', file]);
  return stdout.trim().split(/\s+/).slice(0, 2).join(' ');
}
