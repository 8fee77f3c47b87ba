import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { freePort } from '../setup/postgres';

/** Debian's rabbitmq-server script without the wrapper that switches to the rabbitmq user. */
const SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';

/** A private RabbitMQ node with the management plugin, for one test file. */
export interface TestRabbit {
  /** The management API's base URL (`http://127.0.0.1:PORT`), what `connection_uri` takes. */
  readonly managementUrl: string;
  /** `amqp://127.0.0.1:PORT` without credentials. */
  readonly amqpUrl: string;
  readonly amqpPort: number;
  /** The administrator the node was started with. */
  readonly username: string;
  readonly password: string;
  /** A management API call as the administrator (or other credentials); vhost segments must be encoded. */
  api(method: string, path: string, body?: unknown, auth?: { username: string; password: string }): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

/**
 * True when rabbitmq-server is installed; under CI a missing server is a failure, never a skip
 * (scripts/setup installs it).
 */
export function haveRabbit(): boolean {
  if (existsSync(SERVER)) return true;
  if (process.env.CI) throw new Error(`${SERVER} is missing: run scripts/setup (Debian package rabbitmq-server)`);
  return false;
}

/**
 * Starts a node in a temporary directory: its own node name, AMQP, distribution and management
 * ports on loopback, its own Erlang cookie (HOME), a random administrator. It is never the system
 * service. Startup takes seconds, so start one per test file.
 */
export async function startRabbit(): Promise<TestRabbit> {
  const dir = mkdtempSync(join(tmpdir(), 'hangar-rabbit-'));
  const [amqpPort, distPort, mgmtPort] = [await freePort(), await freePort(), await freePort()];
  const username = 'hangar-admin';
  const password = randomBytes(12).toString('hex');
  writeFileSync(
    join(dir, 'rabbitmq.conf'),
    [
      `listeners.tcp.1 = 127.0.0.1:${amqpPort}`,
      'management.tcp.ip = 127.0.0.1',
      `management.tcp.port = ${mgmtPort}`,
      `default_user = ${username}`,
      `default_pass = ${password}`,
      // Issued users connect over loopback too.
      'loopback_users = none',
      'log.console = false',
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'enabled_plugins'), '[rabbitmq_management].\n');
  const env = {
    ...process.env,
    HOME: dir,
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_NODENAME: `hangar-${randomBytes(4).toString('hex')}@localhost`,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(amqpPort),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_PID_FILE: join(dir, 'rabbit.pid'),
  };
  const logFile = join(dir, 'server.log');
  const out = openSync(logFile, 'a');
  // Its own process group, so that stop() reaches the Erlang VM and its helpers.
  const child = spawn(SERVER, [], { cwd: dir, env, stdio: ['ignore', out, out], detached: true });
  child.unref();
  let exited = false;
  child.once('exit', () => (exited = true));

  const managementUrl = `http://127.0.0.1:${mgmtPort}`;
  const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
  const api: TestRabbit['api'] = async (method, path, body, auth) => {
    const res = await request(`${managementUrl}/api/${path}`, {
      method: method as 'GET',
      headers: {
        authorization: basic(auth?.username ?? username, auth?.password ?? password),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    return { status: res.statusCode, body: parsed };
  };

  const stop = async () => {
    if (!exited && child.pid) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      const deadline = Date.now() + 20_000;
      while (!exited && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      if (!exited) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 90_000;
  for (;;) {
    if (exited) {
      const log = readFileSync(logFile, 'utf8');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`rabbitmq-server exited during startup:\n${log.slice(-2000)}`);
    }
    try {
      if ((await api('GET', 'overview')).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error('rabbitmq-server did not answer on its management port within 90 s');
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { managementUrl, amqpUrl: `amqp://127.0.0.1:${amqpPort}`, amqpPort, username, password, api, stop };
}
