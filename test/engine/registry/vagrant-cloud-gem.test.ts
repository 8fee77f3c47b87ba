import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { makeBoxFile } from '../../helpers/box-file';
import { startTestServer, TestServer, userWithToken } from '../../helpers/server';
import { tempDir } from '../../helpers/storage';

/**
 * Debian's vagrant_cloud gem (ruby-vagrant-cloud 3.0.5, the library behind `vagrant cloud`) drives
 * API v1 end to end: fixtures/vagrant-cloud-gem.rb. Under CI a missing gem is a failure.
 */
const hasGem = spawnSync('ruby', ['-e', 'require "vagrant_cloud"'], { encoding: 'utf8' }).status === 0;
if (!hasGem && process.env.CI) throw new Error('the vagrant_cloud gem is missing (apt-get install ruby-vagrant-cloud)');
if (!hasGem) process.stderr.write('ruby-vagrant-cloud is not installed: vagrant_cloud gem test skipped\n');
const describeWithGem = hasGem ? describe : describe.skip;

/** Runs a Ruby script without blocking the in-process server (never spawnSync here). */
function ruby(script: string, env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn('ruby', [script], { env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('exit', (code) => resolve({ code: code ?? -1, out, err }));
  });
}

describeWithGem('the vagrant_cloud gem against the registry (API v1)', () => {
  jest.setTimeout(120_000);
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer('sqlite');
  });
  afterAll(() => server.close());

  test('box, version, providers (URL, plain and direct upload), release, search, revoke and delete', async () => {
    const token = await userWithToken(server, 'gemuser');
    const box = makeBoxFile(tempDir('hangar-gem-'));
    const res = await ruby(join(__dirname, 'fixtures', 'vagrant-cloud-gem.rb'), {
      HANGAR_URL: server.urls.registry,
      HANGAR_TOKEN: token,
      BOX_FILE: box.path,
    });
    if (res.code !== 0) throw new Error(`vagrant_cloud gem script failed (${res.code}):\n${res.out}\n${res.err}`);
    expect(JSON.parse(res.out.trim().split('\n').pop()!)).toEqual({
      username: 'gemuser',
      released: true,
      box: { tag: 'gemuser/gem-box', short_description: 'Made by the vagrant_cloud gem', private: false },
      providers: [
        { name: 'libvirt', hosted: false, checksum_type: 'sha256' },
        { name: 'virtualbox', hosted: true, checksum_type: null },
      ],
      search: ['gemuser/gem-box'],
      revoked: true,
      deleted: true,
    });
  });
});
