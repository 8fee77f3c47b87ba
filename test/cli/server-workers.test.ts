import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { Agent, request } from 'undici';
import { CLI, hangar, RunningServer, startServerProcess } from '../helpers/cli';
import { goTest, haveGo } from '../helpers/compat';
import { ROOT_TOKEN } from '../helpers/server';
import { until } from '../helpers/until';

/**
 * `hangar server --workers N`: N threads, each with its own engine, on the same data and ports
 * (src/cli/commands/server-threads.ts). The official Go clients' catalog and secrets suites run
 * against such a server here, besides the in-process servers of test/compat.
 */
describe('hangar server --workers', () => {
  test('a count that is not auto or 1 to 64 is a usage error', () => {
    for (const value of ['0', '65', 'two', '1.5']) {
      const res = hangar(['server', '--dev', '--workers', value]);
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`--workers must be auto or a number from 1 to 64, not "${value}"`);
    }
  });

  test('health checks run in the main thread only', async () => {
    // The log goes to stdout, which startServerProcess does not keep: this server's is read here.
    const child = spawn(
      process.execPath,
      [CLI, 'server', '--registry-addr', '127.0.0.1:0', '--secrets-addr', '127.0.0.1:0', '--catalog-addr', '127.0.0.1:0',
        '--dev', '--workers', '2', '--log-level', 'info', '--log-format', 'json'],
      { env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    try {
      await until('the server is ready', () => stdout.includes('hangar is ready'), { ms: 30_000, detail: () => stdout });
      const lines = stdout.split('\n').filter((l) => l.includes('the health checker runs on this thread'));
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]).thread).toBeUndefined();
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  }, 40_000);

  describe('a dev server with two workers', () => {
    let server: RunningServer;
    let dataDir: string;
    beforeAll(async () => {
      server = await startServerProcess(['--dev', '--dev-root-token', ROOT_TOKEN, '--catalog-default-policy', 'deny', '--dns-token', ROOT_TOKEN, '--workers', '2', '--log-level', 'warn']);
      dataDir = dirname(/Data: (\S+)/.exec(server.stderr())![1]);
    }, 30_000);
    afterAll(() => server.stop());

    const catalog = (path: string, init: { method?: string; body?: string; dispatcher?: Agent } = {}) =>
      request(`${server.urls.catalog}${path}`, { method: (init.method ?? 'GET') as 'GET', body: init.body, headers: { 'x-consul-token': ROOT_TOKEN }, dispatcher: init.dispatcher });

    test('says so when ready', () => {
      expect(server.stderr()).toContain('Workers: 2 threads');
    });

    test('blocking queries on connections spread over the threads all answer one write', async () => {
      await (await catalog('/v1/kv/fan', { method: 'PUT', body: 'one' })).body.text();
      const first = await catalog('/v1/kv/fan');
      await first.body.text();
      const index = first.headers['x-consul-index'];
      // A connection each: the kernel spreads them over the two threads' listeners.
      const agents = Array.from({ length: 16 }, () => new Agent({ connections: 1 }));
      try {
        const waiting = agents.map(async (dispatcher) => {
          const res = await catalog(`/v1/kv/fan?index=${index}&wait=60s`, { dispatcher });
          const [entry] = (await res.body.json()) as { Value: string }[];
          return Buffer.from(entry.Value, 'base64').toString();
        });
        await new Promise((resolve) => setTimeout(resolve, 200));
        await (await catalog('/v1/kv/fan', { method: 'PUT', body: 'two' })).body.text();
        expect(await Promise.all(waiting)).toEqual(Array(16).fill('two'));
      } finally {
        await Promise.all(agents.map((a) => a.close()));
      }
    });

    test('its metrics count the requests of both threads', async () => {
      const before = await leaderCount();
      const agents = Array.from({ length: 16 }, () => new Agent({ connections: 1 }));
      try {
        for (const dispatcher of agents) await (await catalog('/v1/status/leader', { dispatcher })).body.text();
      } finally {
        await Promise.all(agents.map((a) => a.close()));
      }
      expect((await leaderCount()) - before).toBe(16);
    });

    const leaderCount = async () => {
      const text = await (await catalog('/v1/agent/metrics?format=prometheus')).body.text();
      return Number(/hangar_http_requests_total\{[^}]*route="\/v1\/status\/leader"[^}]*status="200"\} (\d+)/.exec(text)?.[1] ?? 0);
    };

    test('another server with workers cannot take its ports', async () => {
      const port = new URL(server.urls.catalog).port;
      const res = await startServerProcess(['--dev', '--workers', '2', '--catalog-addr', `127.0.0.1:${port}`]).then(
        async (other) => ({ started: true, stderr: (await other.stop(), other.stderr()) }),
        (err: Error) => ({ started: false, stderr: err.message }),
      );
      expect(res.started).toBe(false);
      expect(res.stderr).toMatch(/EADDRINUSE/);
    });

    test('github.com/hashicorp/consul/api: go test ./...', async () => {
      if (!haveGo()) return;
      // The DNS interface (served by the main thread only) answers as the root token (--dns-token).
      const env = { CONSUL_HTTP_ADDR: new URL(server.urls.catalog).host, CONSUL_HTTP_TOKEN: ROOT_TOKEN, CONSUL_HTTP_SSL: 'false', CONSUL_DNS_ADDR: server.dns! };
      const run = await goTest('consul-go', ['./...'], env);
      if (run.status !== 0) throw new Error(`suite failed (exit ${run.status}):\n${run.output}`);
    }, 300_000);

    test('github.com/hashicorp/vault/api: go test ./kv/... ./transit/...', async () => {
      if (!haveGo()) return;
      const run = await goTest('vault-go', ['./kv/...', './transit/...'], { VAULT_ADDR: server.urls.secrets, VAULT_TOKEN: ROOT_TOKEN });
      if (run.status !== 0) throw new Error(`suite failed (exit ${run.status}):\n${run.output}`);
      expect(run.output).not.toMatch(/--- (FAIL|SKIP)/);
    }, 300_000);

    test('stops on SIGTERM with every thread, and removes its temporary data', async () => {
      expect(existsSync(dataDir)).toBe(true);
      expect(await server.stop()).toBe(0);
      expect(existsSync(dataDir)).toBe(false);
    });
  });
});
