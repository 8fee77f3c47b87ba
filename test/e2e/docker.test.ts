import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const COMPOSE = ['compose', '-f', join(ROOT, 'examples', 'docker', 'compose.yaml'), '-p', `hangar-test-${process.pid}`];

/**
 * Docker is the one optional component that CI may lack (it needs a daemon, not a Debian package):
 * without it this test is skipped with a message, under CI too.
 */
const docker = spawnSync('docker', ['info'], { stdio: 'ignore' }).status === 0;
if (!docker) process.stderr.write('docker.test.ts skipped: no Docker daemon (`docker info` failed); see README, "Optional components"\n');

(docker ? describe : describe.skip)('the Docker image and the compose example with PostgreSQL', () => {
  afterAll(async () => {
    await run('docker', [...COMPOSE, 'down', '-v'], { timeout: 120_000 }).catch(() => undefined);
  });

  test('builds, starts healthy on PostgreSQL, runs as non-root, and answers', async () => {
    // The image is the repository's Dockerfile: the single-file hangar (cached by its inputs' hash).
    await run('bash', [join(ROOT, 'scripts', 'build-executable')], { cwd: ROOT, timeout: 600_000 });
    await run('docker', [...COMPOSE, 'up', '-d', '--build', '--wait', '--wait-timeout', '120'], { cwd: ROOT, timeout: 600_000 });
    const status = await run('docker', [...COMPOSE, 'exec', '-T', 'hangar', 'hangar', 'status', '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ healthy: true, storage: 'ok' });
    const user = await run('docker', [...COMPOSE, 'exec', '-T', 'hangar', 'id', '-u']);
    expect(user.stdout.trim()).not.toBe('0');
    // No Node.js in the image: the executable is the whole runtime.
    const node = await run('docker', [...COMPOSE, 'exec', '-T', 'hangar', 'sh', '-c', 'command -v node || echo none']);
    expect(node.stdout.trim()).toBe('none');
    const { stdout: id } = await run('docker', [...COMPOSE, 'ps', '-q', 'hangar']);
    const health = await run('docker', ['inspect', '--format', '{{.State.Health.Status}}', id.trim()]);
    expect(health.stdout.trim()).toBe('healthy');
    const res = await fetch('http://127.0.0.1:8200/v1/sys/health');
    expect(res.status).toBe(200);
  }, 900_000);
});
