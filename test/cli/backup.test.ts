import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { CLI, hangar, startServerProcess } from '../helpers/cli';
import { tempDir } from '../helpers/storage';

/** A secrets API request with a token. */
async function vault(base: string, token: string, method: string, path: string, body?: unknown) {
  const res = await request(`${base}/v1/${path}`, {
    method: method as 'GET',
    headers: { 'x-vault-token': token, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}

describe('hangar operator backup / restore', () => {
  test('backs up a running server, restores into a new data directory that a server then serves, refuses a second restore', async () => {
    const source = tempDir();
    const server = await startServerProcess(['--data', source]);
    let token: string;
    try {
      token = readFileSync(join(source, 'root-token'), 'utf8').trim();
      expect((await vault(server.urls.secrets, token, 'POST', 'sys/mounts/kvb', { type: 'kv', options: { version: '2' } })).status).toBe(204);
      expect((await vault(server.urls.secrets, token, 'POST', 'kvb/data/app', { data: { password: 'cli-FAKEXSECRET' } })).status).toBe(200);

      expect(hangar(['operator', 'backup', '--data', source]).stderr).toMatch(/--to FILE is required/);
      const file = join(tempDir(), 'hangar.backup');
      const backup = hangar(['operator', 'backup', '--to', file, '--data', source]);
      expect(backup.stderr).toMatch(/^Backup written to .*hangar\.backup: \d+ rows of \d+ tables, 0 box files \(0 bytes\), schema \d+\.\nSecrets key not included \(fingerprint sha256:[0-9a-f]{64}\): a restore needs that key\.\n$/);
      expect(backup.code).toBe(0);
      expect(statSync(file).mode % 0o1000).toBe(0o600);
      expect(existsSync(`${file}.partial`)).toBe(false);

      // To stdout: the same format.
      const piped = spawnSync(process.execPath, [CLI, 'operator', 'backup', '--to', '-', '--data', source], { env: { ...process.env, NODE_OPTIONS: '' } });
      expect(piped.status).toBe(0);
      writeFileSync(`${file}.piped`, piped.stdout);

      const target = tempDir();
      const refused = hangar(['operator', 'restore', '--from', file, '--data', target]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/hangar: error: the backup's secrets are sealed with the key of fingerprint sha256:[0-9a-f]{64}, which it does not hold: put that key in/);
      copyFileSync(join(source, 'secrets.key'), join(target, 'secrets.key'));
      const restored = hangar(['operator', 'restore', '--from', `${file}.piped`, '--data', target]);
      expect(restored.stderr).toMatch(/^Restored the backup of .* into /);
      expect(restored.code).toBe(0);
      const again = hangar(['operator', 'restore', '--from', file, '--data', target]);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/is not empty: restore into a new one \(nothing was changed\)/);

      const second = await startServerProcess(['--data', target]);
      try {
        const read = await vault(second.urls.secrets, token, 'GET', 'kvb/data/app');
        expect(read.body.data.data).toEqual({ password: 'cli-FAKEXSECRET' });
      } finally {
        await second.stop();
      }
    } finally {
      await server.stop();
    }
  }, 120_000);
});
