import { existsSync } from 'node:fs';
import { connect, Socket } from 'node:net';
import { join } from 'node:path';
import { Client } from 'pg';
import { Engine } from '../../../src/engine/engine';
import { ApiName } from '../../../src/engine/http/api';
import { listen } from '../../../src/engine/http/server';
import { captureLog, CapturedLog } from '../../helpers/log-capture';
import { openRawSqlite, SQLITE_FILE } from '../../helpers/raw-db';
import { ROOT_TOKEN } from '../../helpers/server';
import { freshStorage, STORAGE_KINDS } from '../../helpers/storage';

const APIS: readonly ApiName[] = ['registry', 'secrets', 'catalog'];

describe.each(STORAGE_KINDS)('graceful shutdown (%s)', (kind) => {
  let fresh: Awaited<ReturnType<typeof freshStorage>>;
  let log: CapturedLog;
  let engine: Engine;
  let urls: Record<ApiName, string>;
  let closing: Promise<void> | undefined;
  /** engine.close(), once: the test closes the engine, and afterEach makes sure it did. */
  const close = () => (closing ??= engine.close());

  beforeEach(async () => {
    log = captureLog('trace');
    fresh = await freshStorage(kind);
    engine = await Engine.open({ storage: fresh.config, dataDir: fresh.dataDir, devRootToken: ROOT_TOKEN, logger: log.logger });
    closing = undefined;
    urls = await listen(engine, { registry: '127.0.0.1:0', secrets: '127.0.0.1:0', catalog: '127.0.0.1:0' });
  });
  afterEach(async () => {
    await close();
    await fresh.cleanup();
  });

  test('an in-flight request completes, new connections are refused, and the database is closed cleanly', async () => {
    // A user creation whose body is only half sent: the server has the request but cannot finish it.
    const body = JSON.stringify({ user: { username: 'latecomer', password: 'a long enough password' } });
    const request = await startRequest(urls.registry, 'POST', '/api/v1/admin/users', body, {
      'authorization': `Bearer ${ROOT_TOKEN}`,
      'content-type': 'application/json',
    });
    await log.waitFor((r) => r.msg === 'request received' && r.url === '/api/v1/admin/users');

    const closed = close();
    await until(() => APIS.every((api) => !engine.app(api).server.listening));
    for (const api of APIS) expect(await connectOutcome(urls[api])).toBe('ECONNREFUSED');

    request.finish();
    const response = await request.response;
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({ username: 'latecomer', kind: 'user' });
    // The server hangs up after that response, rather than keeping the connection (and close()) waiting.
    expect(response.headers).toMatch(/^connection: close$/im);
    await request.hungUp;
    await closed;

    expect(await usernamesAfterClose(kind, fresh)).toEqual(['latecomer']);
  });

  test('an idle keep-alive connection does not hold shutdown up', async () => {
    const request = await startRequest(urls.secrets, 'GET', '/v1/sys/health', '', {});
    request.finish();
    expect((await request.response).status).toBe(200);
    await close();
    await request.hungUp;
  });
});

// ---------------------------------------------------------------------------------------------

/**
 * The users in the database after the engine closed, checking it was closed cleanly. SQLite: its
 * WAL has been checkpointed and removed, and the file passes an integrity check. PostgreSQL: no
 * session of the engine is left.
 */
async function usernamesAfterClose(kind: 'sqlite' | 'postgres', fresh: Awaited<ReturnType<typeof freshStorage>>): Promise<string[]> {
  if (kind === 'sqlite') {
    expect(existsSync(join(fresh.dataDir, `${SQLITE_FILE}-wal`))).toBe(false);
    const raw = openRawSqlite(fresh.dataDir);
    try {
      expect(raw.prepare('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
      return raw.prepare('SELECT username FROM registry_owners ORDER BY username').all().map((r) => r.username as string);
    } finally {
      raw.close();
    }
  }
  if (fresh.config.kind !== 'postgres') throw new Error('unreachable');
  const client = new Client({ connectionString: fresh.config.url });
  await client.connect();
  try {
    // A backend ends a moment after its client hung up: wait for the engine's sessions to go.
    await until(async () => {
      const others = await client.query('SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
      return others.rows[0].n === 0;
    });
    return (await client.query('SELECT username FROM registry_owners ORDER BY username')).rows.map((r) => r.username as string);
  } finally {
    await client.end();
  }
}

interface RawRequest {
  /** The response, once its status line, headers and whole body have arrived. */
  readonly response: Promise<{ status: number; headers: string; body: string }>;
  /** Resolves when the server ends the connection. */
  readonly hungUp: Promise<void>;
  /** Sends the rest of the body. */
  finish(): void;
}

/** An HTTP/1.1 request over a raw socket whose head and first half of the body are sent at once. */
async function startRequest(url: string, method: string, path: string, body: string, headers: Record<string, string>): Promise<RawRequest> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const head = [`${method} ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, `Content-Length: ${Buffer.byteLength(body)}`]
    .concat(Object.entries(headers).map(([name, value]) => `${name}: ${value}`))
    .join('\r\n');
  const half = Math.floor(body.length / 2);
  socket.write(`${head}\r\n\r\n${body.slice(0, half)}`);

  let received = Buffer.alloc(0);
  const hungUp = new Promise<void>((resolve) => socket.once('end', resolve));
  const response = new Promise<{ status: number; headers: string; body: string }>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const text = received.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/^content-length:\s*(\d+)/im.exec(text.slice(0, end))?.[1] ?? 0);
      if (received.length < end + 4 + length) return;
      resolve({
        status: Number(text.split(' ')[1]),
        headers: text.slice(0, end),
        body: received.subarray(end + 4, end + 4 + length).toString('utf8'),
      });
    });
  });
  return { finish: () => socket.write(body.slice(half)), response, hungUp };
}

/** 'connected', or the error code of a refused connection. */
function connectOutcome(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket: Socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/** Resolves once the condition holds, checking it every 10 ms. */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 10));
}
