import { ChildProcess, execFile, spawn } from 'node:child_process';
import { createSocket, Socket as UdpSocket } from 'node:dgram';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createSecureServer, createServer as createH2Server, Http2Server } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import { AddressInfo, createServer as createTcpServer, Server as TcpServer } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { promisify } from 'node:util';
import { CatalogServer, startCatalogServer } from './helpers';
import { Checker, startChecker, StatusHandler, stopChecker } from '../../../src/engine/catalog/checker';
import { startServerNode } from '../../../src/engine/catalog/servers';
import { ManualClock } from '../../../src/engine/clock';
import { haveGo } from '../../helpers/compat';
import { FreshStorage, freshStorage, STORAGE_KINDS, tempDir } from '../../helpers/storage';
import { makeCa } from '../../helpers/tls';
import { until } from '../../helpers/until';

/** Counters of a check: the public service's StatusHandler, result by result. */
describe('StatusHandler', () => {
  const ok = { status: 'passing' as const, output: 'ok' };
  const bad = { status: 'critical' as const, output: 'down' };
  const run = (h: StatusHandler, results: typeof ok[] | (typeof ok | typeof bad)[]) => results.map((r) => h.next(r)?.status ?? '-');

  test('without thresholds every result counts at once', () => {
    expect(run(new StatusHandler({}), [ok, bad, ok])).toEqual(['passing', 'critical', 'passing']);
  });

  test('FailuresBeforeWarning, FailuresBeforeCritical, SuccessBeforePassing', () => {
    const h = new StatusHandler({ SuccessBeforePassing: 2, FailuresBeforeWarning: 1, FailuresBeforeCritical: 3 });
    // The first result counts at once (counters start at their thresholds).
    expect(run(h, [ok, bad, bad, bad, ok, ok, bad])).toEqual(['passing', 'warning', 'warning', 'critical', '-', 'passing', 'warning']);
  });

  test('FailuresBeforeWarning defaults to FailuresBeforeCritical', () => {
    expect(run(new StatusHandler({ FailuresBeforeCritical: 2 }), [ok, bad, bad])).toEqual(['passing', '-', 'critical']);
  });
});

/** An HTTP server the checks probe; `answer` decides each response. */
class Backend {
  server?: Server;
  port = 0;
  answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end('ok');

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.answer(req, res));
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  url(path = '/health'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }
}

const index = (r: { headers: Record<string, unknown> }) => Number(r.headers['x-consul-index']);

describe.each(STORAGE_KINDS)('health checks that run (%s)', (kind) => {
  let s: CatalogServer;
  let checker: Checker;
  const backend = new Backend();
  beforeAll(async () => {
    process.env.HANGAR_CATALOG_CHECK_DEREGISTER_MIN = '1s';
    s = await startCatalogServer(kind, { catalogNode: { name: 'checker-node' } });
    await startServerNode(s.engine);
    checker = await startChecker(s.engine);
    await backend.start();
  });
  afterAll(async () => {
    delete process.env.HANGAR_CATALOG_CHECK_DEREGISTER_MIN;
    await backend.stop();
    await s.close();
  });

  const register = async (service: Record<string, unknown>) => {
    const res = await s.root('PUT', '/v1/agent/service/register', service);
    if (res.status !== 200) throw new Error(`register: ${res.status} ${res.text}`);
    await checker.refresh();
  };
  const checkOf = async (id: string) => ((await s.root('GET', '/v1/agent/checks')).body as Record<string, any>)[id];
  const statusOf = async (id: string) => (await checkOf(id))?.Status as string | undefined;
  const passingOf = async (name: string) => (await s.root('GET', `/v1/health/service/${name}?passing`)).body as unknown[];

  test('HTTP: passing while the backend answers, critical once it stops (a blocking query wakes), back when it starts', async () => {
    await register({ Name: 'web', ID: 'web-1', Port: backend.port, Check: { HTTP: backend.url(), Interval: '1s', Timeout: '1s' } });
    await until('the HTTP check passes', async () => (await statusOf('service:web-1')) === 'passing');
    expect((await checkOf('service:web-1')).Output).toBe(`HTTP GET ${backend.url()}: 200 OK Output: ok`);
    const healthy = await s.root('GET', '/v1/health/service/web?passing');
    expect(healthy.body).toHaveLength(1);

    const waiting = s.root('GET', `/v1/health/service/web?passing&index=${index(healthy)}&wait=30s`);
    await backend.stop();
    const woke = await waiting;
    expect(woke.body).toEqual([]);
    expect(await checkOf('service:web-1')).toEqual(expect.objectContaining({
      Status: 'critical',
      Output: `Get "${backend.url()}": dial tcp 127.0.0.1:${backend.port}: connect: connection refused`,
    }));

    await backend.start();
    await until('the HTTP check passes again', async () => (await passingOf('web')).length === 1);
  });

  test('no write when nothing changed: the index stays while the check keeps passing', async () => {
    const before = index(await s.root('GET', '/v1/health/service/web'));
    await new Promise((r) => setTimeout(r, 2500));
    expect(index(await s.root('GET', '/v1/health/service/web'))).toBe(before);
  });

  test('a check registered again keeps its status and output (no flap to critical)', async () => {
    const before = await checkOf('service:web-1');
    expect(before.Status).toBe('passing');
    await register({ Name: 'web', ID: 'web-1', Port: backend.port, Check: { HTTP: backend.url(), Interval: '1s', Timeout: '1s' } });
    expect(await checkOf('service:web-1')).toEqual(expect.objectContaining({ Status: 'passing', Output: before.Output }));
  });

  test('TCP: a listener started and stopped by the test', async () => {
    let listener: TcpServer = createTcpServer((socket) => socket.end());
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as AddressInfo).port;
    await register({ Name: 'db', ID: 'db-1', Port: port, Check: { TCP: `127.0.0.1:${port}`, Interval: '1s', Timeout: '1s' } });
    await until('the TCP check passes', async () => (await statusOf('service:db-1')) === 'passing');
    expect((await checkOf('service:db-1')).Output).toBe(`TCP connect 127.0.0.1:${port}: Success`);
    await new Promise((resolve) => listener.close(resolve));
    await until('the TCP check fails', async () => (await passingOf('db')).length === 0);
    expect((await checkOf('service:db-1')).Output).toBe(`dial tcp 127.0.0.1:${port}: connect: connection refused`);
    listener = createTcpServer((socket) => socket.end());
    await new Promise<void>((resolve) => listener.listen(port, '127.0.0.1', resolve));
    await until('the TCP check passes again', async () => (await statusOf('service:db-1')) === 'passing');
    await new Promise((resolve) => listener.close(resolve));
  });

  test('HTTP status codes: 429 is warning, 503 critical with the body; method, headers and body are sent', async () => {
    const seen: string[] = [];
    const other = await new Backend().start();
    other.answer = (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push(`${req.method} ${req.headers['x-probe']} ${req.headers['user-agent']} ${body}`);
        res.statusCode = seen.length === 1 ? 429 : 503;
        res.end('busy');
      });
    };
    try {
      await register({
        Name: 'codes',
        ID: 'codes-1',
        Check: { CheckID: 'codes', HTTP: other.url('/x'), Method: 'POST', Header: { 'X-Probe': ['yes'] }, Body: '{"ping":1}', Interval: '1s' },
      });
      await until('the check warns', async () => (await statusOf('codes')) === 'warning');
      expect((await checkOf('codes')).Output).toBe(`HTTP POST ${other.url('/x')}: 429 Too Many Requests Output: busy`);
      await until('the check is critical', async () => (await statusOf('codes')) === 'critical');
      expect((await checkOf('codes')).Output).toBe(`HTTP POST ${other.url('/x')}: 503 Service Unavailable Output: busy`);
      expect(seen[0]).toBe('POST yes Consul Health Check {"ping":1}');
    } finally {
      await s.root('PUT', '/v1/agent/service/deregister/codes-1');
      await other.stop();
    }
  });

  test('output is cut to OutputMaxSize, and an endless body is not read to its end', async () => {
    const other = await new Backend().start();
    other.answer = (req, res) => {
      if (req.url === '/big') {
        res.end('y'.repeat(10_000));
        return;
      }
      // Endless: the check must stop reading on its own.
      const timer = setInterval(() => res.write('z'.repeat(16_384)), 5);
      res.on('close', () => clearInterval(timer));
    };
    try {
      await register({
        Name: 'big',
        ID: 'big-1',
        Checks: [
          { CheckID: 'big-small', HTTP: other.url('/big'), Interval: '1s', OutputMaxSize: 100 },
          { CheckID: 'big-default', HTTP: other.url('/big'), Interval: '1s' },
          { CheckID: 'big-endless', HTTP: other.url('/endless'), Interval: '1s', Timeout: '30s' },
        ],
      });
      await until('the three checks pass', async () => {
        const all = (await s.root('GET', '/v1/agent/checks')).body;
        return ['big-small', 'big-default', 'big-endless'].every((id) => all[id]?.Status === 'passing');
      });
      const all = (await s.root('GET', '/v1/agent/checks')).body;
      expect(all['big-small'].Output).toBe(`HTTP GET ${other.url('/big')}: 200 OK Output: ${'y'.repeat(100)}`);
      expect(all['big-default'].Output).toBe(`HTTP GET ${other.url('/big')}: 200 OK Output: ${'y'.repeat(4096)}`);
      expect(all['big-endless'].Output).toBe(`HTTP GET ${other.url('/endless')}: 200 OK Output: ${'z'.repeat(4096)}`);
    } finally {
      await s.root('PUT', '/v1/agent/service/deregister/big-1');
      await other.stop();
    }
  });

  test('a slow backend hits the timeout; a body that stalls after the headers counts with what was read', async () => {
    const other = await new Backend().start();
    other.answer = (req, res) => {
      if (req.url === '/stall') res.write('part');
      else setTimeout(() => res.end('late'), 3000);
    };
    try {
      await register({
        Name: 'slow',
        ID: 'slow-1',
        Checks: [
          { CheckID: 'slow', HTTP: other.url(), Interval: '1s', Timeout: '300ms', Status: 'passing' },
          { CheckID: 'stall', HTTP: other.url('/stall'), Interval: '1s', Timeout: '300ms' },
        ],
      });
      await until('the checks settle', async () => (await statusOf('slow')) === 'critical' && (await statusOf('stall')) === 'passing');
      expect((await checkOf('slow')).Output).toBe(`Get "${other.url()}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`);
      expect((await checkOf('stall')).Output).toBe(`HTTP GET ${other.url('/stall')}: 200 OK Output: part`);
    } finally {
      await s.root('PUT', '/v1/agent/service/deregister/slow-1');
      await other.stop();
    }
  });

  test('redirects are followed as the public service does (to another host too), unless DisableRedirects', async () => {
    const other = await new Backend().start();
    other.answer = (req, res) => {
      // Another host: localhost instead of 127.0.0.1.
      if (req.url === '/moved') res.writeHead(302, { location: `http://localhost:${backend.port}/health` }).end();
      else res.writeHead(301, { location: '/loop' }).end();
    };
    try {
      await register({
        Name: 'moved',
        ID: 'moved-1',
        Checks: [
          { CheckID: 'follow', HTTP: other.url('/moved'), Interval: '1s' },
          { CheckID: 'stay', HTTP: other.url('/moved'), Interval: '1s', DisableRedirects: true, Status: 'passing' },
          { CheckID: 'loop', HTTP: other.url('/loop'), Interval: '1s', Status: 'passing' },
        ],
      });
      await until('the checks settle', async () => {
        const all = (await s.root('GET', '/v1/agent/checks')).body;
        return all.follow?.Status === 'passing' && all.stay?.Status === 'critical' && all.loop?.Status === 'critical';
      });
      const all = (await s.root('GET', '/v1/agent/checks')).body;
      expect(all.follow.Output).toBe(`HTTP GET ${other.url('/moved')}: 200 OK Output: ok`);
      expect(all.stay.Output).toBe(`HTTP GET ${other.url('/moved')}: 302 Found Output: `);
      expect(all.loop.Output).toBe(`Get "${other.url('/loop')}": stopped after 10 redirects`);
    } finally {
      await s.root('PUT', '/v1/agent/service/deregister/moved-1');
      await other.stop();
    }
  });

  test('UDP: a reply or silence is passing, a closed port (ICMP) critical', async () => {
    const echo: UdpSocket = createSocket('udp4');
    echo.on('message', (_msg, peer) => echo.send(Buffer.from('pong'), peer.port, peer.address));
    await new Promise<void>((resolve) => echo.bind(0, '127.0.0.1', resolve));
    const silent: UdpSocket = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    const closed: UdpSocket = createSocket('udp4');
    await new Promise<void>((resolve) => closed.bind(0, '127.0.0.1', resolve));
    const closedPort = closed.address().port;
    await new Promise<void>((resolve) => closed.close(resolve));
    try {
      await register({
        Name: 'udp',
        ID: 'udp-1',
        Checks: [
          { CheckID: 'udp-echo', UDP: `127.0.0.1:${echo.address().port}`, Interval: '1s' },
          { CheckID: 'udp-silent', UDP: `127.0.0.1:${silent.address().port}`, Interval: '1s', Timeout: '200ms' },
          { CheckID: 'udp-closed', UDP: `127.0.0.1:${closedPort}`, Interval: '1s', Status: 'passing' },
        ],
      });
      await until('the UDP checks settle', async () => {
        const all = (await s.root('GET', '/v1/agent/checks')).body;
        return all['udp-echo']?.Status === 'passing' && all['udp-silent']?.Status === 'passing' && all['udp-closed']?.Status === 'critical';
      });
      const all = (await s.root('GET', '/v1/agent/checks')).body;
      expect(all['udp-echo'].Output).toBe(`UDP connect 127.0.0.1:${echo.address().port}: Success`);
      expect(all['udp-closed'].Output).toMatch(new RegExp(`^read udp 127\\.0\\.0\\.1:\\d+->127\\.0\\.0\\.1:${closedPort}: read: connection refused$`));
    } finally {
      await s.root('PUT', '/v1/agent/service/deregister/udp-1');
      echo.close();
      silent.close();
    }
  });

  (haveGo() ? test : test.skip)('gRPC: grpc-go\'s own health server (grpc.health.v1), overall and per service', async () => {
    const grpc = await startGrpcHealth();
    try {
      await grpc.send('SERVING');
      await grpc.send('NOT_SERVING api');
      await register({
        Name: 'grpc',
        ID: 'grpc-1',
        Checks: [
          { CheckID: 'grpc-all', GRPC: grpc.address, Interval: '1s' },
          { CheckID: 'grpc-api', GRPC: `${grpc.address}/api`, Interval: '1s', Status: 'passing' },
          { CheckID: 'grpc-unknown', GRPC: `${grpc.address}/nope`, Interval: '1s', Status: 'passing' },
        ],
      });
      await until('the gRPC checks settle', async () => {
        const all = (await s.root('GET', '/v1/agent/checks')).body;
        return all['grpc-all']?.Status === 'passing' && all['grpc-api']?.Status === 'critical' && all['grpc-unknown']?.Status === 'critical';
      });
      const all = (await s.root('GET', '/v1/agent/checks')).body;
      expect(all['grpc-all'].Output).toBe(`gRPC check ${grpc.address}: success`);
      expect(all['grpc-api'].Output).toBe(`gRPC ${grpc.address}/api serving status: NOT_SERVING`);
      expect(all['grpc-unknown'].Output).toBe('rpc error: code = NotFound desc = unknown service');
      await grpc.send('SERVING api');
      await until('the service turns SERVING', async () => (await statusOf('grpc-api')) === 'passing');
    } finally {
      await s.root('PUT', '/v1/agent/service/deregister/grpc-1');
      grpc.stop();
    }
    // The first build of the Go helper (grpc-go from the module cache or proxy) takes a minute on 2 cores.
  }, 180_000);

  test('TLS (HTTPS, TCPUseTLS, H2PING over TLS): verified against the system CAs unless TLSSkipVerify; H2PING in clear text', async () => {
    const { cert, key } = makeCa(tempDir('checker-tls-'), true);
    const listen = async (server: { listen: (port: number, host: string, cb: () => void) => unknown; address: () => unknown }) => {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return (server.address() as AddressInfo).port;
    };
    const https = createHttpsServer({ cert, key }, (_req, res) => res.end('secure'));
    const tls = createTlsServer({ cert, key }, (socket) => socket.end());
    const h2tls: Http2Server = createSecureServer({ cert, key });
    const h2: Http2Server = createH2Server();
    const [httpsPort, tlsPort, h2tlsPort, h2Port] = [await listen(https), await listen(tls), await listen(h2tls), await listen(h2)];
    try {
      await register({
        Name: 'tls',
        ID: 'tls-1',
        Checks: [
          { CheckID: 'https-skip', HTTP: `https://127.0.0.1:${httpsPort}/`, TLSSkipVerify: true, Interval: '1s' },
          { CheckID: 'https-verify', HTTP: `https://127.0.0.1:${httpsPort}/`, Interval: '1s', Status: 'passing' },
          { CheckID: 'tcp-tls', TCP: `127.0.0.1:${tlsPort}`, TCPUseTLS: true, TLSSkipVerify: true, Interval: '1s' },
          { CheckID: 'h2ping-tls', H2PING: `127.0.0.1:${h2tlsPort}`, H2PingUseTLS: true, TLSSkipVerify: true, Interval: '1s' },
          { CheckID: 'h2ping', H2PING: `127.0.0.1:${h2Port}`, Interval: '1s' },
        ],
      });
      const expected: Record<string, string> = {
        'https-skip': 'passing', 'https-verify': 'critical', 'tcp-tls': 'passing', 'h2ping-tls': 'passing', 'h2ping': 'passing',
      };
      await until('the TLS checks settle', async () => {
        const all = (await s.root('GET', '/v1/agent/checks')).body;
        return Object.entries(expected).every(([id, status]) => all[id]?.Status === status);
      });
      const all = (await s.root('GET', '/v1/agent/checks')).body;
      expect(all['https-skip'].Output).toBe(`HTTP GET https://127.0.0.1:${httpsPort}/: 200 OK Output: secure`);
      expect(all['https-verify'].Output).toBe(`Get "https://127.0.0.1:${httpsPort}/": tls: failed to verify certificate: x509: certificate signed by unknown authority`);
      expect(all['tcp-tls'].Output).toBe(`TCP+TLS connect 127.0.0.1:${tlsPort}: Success`);
      expect(all.h2ping.Output).toBe('HTTP2 ping was successful');
    } finally {
      await s.root('PUT', '/v1/agent/service/deregister/tls-1');
      for (const server of [https, tls, h2tls, h2]) server.close();
    }
  });

  test('alias checks follow the aliased service\'s checks', async () => {
    await register({ Name: 'origin', ID: 'origin-1', Check: { CheckID: 'origin-ttl', TTL: '1h', Status: 'passing' } });
    await register({ Name: 'follower', ID: 'follower-1', Check: { CheckID: 'alias', AliasService: 'origin-1' } });
    await until('the alias passes', async () => (await statusOf('alias')) === 'passing');
    expect((await checkOf('alias')).Output).toBe('All checks passing.');
    await s.root('PUT', '/v1/agent/check/fail/origin-ttl?note=gone');
    await until('the alias fails', async () => (await statusOf('alias')) === 'critical');
    expect((await checkOf('alias')).Output).toBe('Aliased check "Service \'origin\' check" failing: gone');
    await s.root('PUT', '/v1/agent/service/deregister/follower-1');
    await s.root('PUT', '/v1/agent/service/deregister/origin-1');
  });

  test('DeregisterCriticalServiceAfter removes the service and its checks once critical that long', async () => {
    await register({
      Name: 'doomed',
      ID: 'doomed-1',
      Checks: [
        { CheckID: 'doomed', TCP: '127.0.0.1:1', Interval: '1s', DeregisterCriticalServiceAfter: '1s' },
        { CheckID: 'doomed-ttl', TTL: '1h', Status: 'passing' },
      ],
    });
    await until('the service is removed', async () => (await s.root('GET', '/v1/catalog/service/doomed')).body.length === 0);
    expect(await checkOf('doomed-ttl')).toBeUndefined();
  });

  test('checks of external nodes (node meta external-node) registered in the catalog run; others do not', async () => {
    const node = (name: string, meta: Record<string, string>) => s.root('PUT', '/v1/catalog/register', {
      Node: name,
      Address: '127.0.0.1',
      NodeMeta: meta,
      Service: { ID: 'ext', Service: 'ext', Port: backend.port },
      Checks: [{ CheckID: 'ext-http', Name: 'ext', ServiceID: 'ext', Definition: { HTTP: backend.url(), Interval: '1s' } }],
    });
    expect((await node('outside', { 'external-node': 'true' })).status).toBe(200);
    expect((await node('plain', {})).status).toBe(200);
    await checker.refresh();
    await until('the external node\'s check passes', async () =>
      (await s.root('GET', '/v1/health/node/outside')).body.some((c: any) => c.CheckID === 'ext-http' && c.Status === 'passing'));
    expect((await s.root('GET', '/v1/health/node/plain')).body.find((c: any) => c.CheckID === 'ext-http').Status).toBe('critical');
  });
});

/** grpc-go's health server (test/compat/grpc-health), built once per run; commands set serving statuses. */
async function startGrpcHealth(): Promise<{ address: string; send(line: string): Promise<void>; stop(): void }> {
  const bin = join(tempDir('grpc-health-'), 'grpc-health');
  // Without blocking the event loop: the server under test lives in this process.
  await promisify(execFile)('go', ['build', '-o', bin, '.'], { cwd: join(__dirname, '../../compat/grpc-health') });
  const child: ChildProcess = spawn(bin, [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop()!;
    lines.push(...parts);
  });
  await until('the gRPC health server listens', () => lines.length > 0, { ms: 20_000 });
  const address = lines.shift()!;
  return {
    address,
    async send(line) {
      const before = lines.length;
      child.stdin!.write(`${line}\n`);
      await until(`the gRPC health server took "${line}"`, () => lines.length > before, { ms: 10_000 });
    },
    stop: () => {
      child.stdin!.end();
      child.kill();
    },
  };
}

/** Two servers on one database: a check runs on the server whose node has it, and moves when that server fails. */
describe.each(STORAGE_KINDS)('checks across servers (%s)', (kind) => {
  let storage: FreshStorage;
  let a: CatalogServer;
  let b: CatalogServer;
  const backend = new Backend();
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    storage = await freshStorage(kind);
    a = await startCatalogServer(kind, { clock, sharedStorage: storage, catalogNode: { name: 'server-a', address: '127.0.0.11' } });
    b = await startCatalogServer(kind, { clock, sharedStorage: storage, catalogNode: { name: 'server-b', address: '127.0.0.12' } });
    await startServerNode(a.engine);
    await startServerNode(b.engine);
    await backend.start();
  });
  afterAll(async () => {
    await backend.stop();
    await b.close();
    await storage.cleanup();
  });

  test('the check runs on its server only; when that server fails, the oldest live server takes it over', async () => {
    const checkerA = await startChecker(a.engine);
    const checkerB = await startChecker(b.engine);
    expect((await a.root('PUT', '/v1/agent/service/register', { Name: 'web', ID: 'web-a', Check: { CheckID: 'web-a', HTTP: backend.url(), Interval: '1s' } })).status).toBe(200);
    await checkerA.refresh();
    await checkerB.refresh();
    expect([checkerA.size, checkerB.size]).toEqual([1, 0]);
    const status = async () => (await b.root('GET', '/v1/health/checks/web')).body[0]?.Status;
    await until('server-a runs the check', async () => (await status()) === 'passing');

    // server-a dies: its heartbeat stops; 31 s later (engine clock) it is failed and server-b takes over.
    await a.close();
    expect(checkerA.size).toBe(0);
    clock.advance(31_000);
    await startServerNode(b.engine);
    await checkerB.refresh();
    expect(checkerB.size).toBe(1);
    await backend.stop();
    await until('server-b sees the backend stop', async () => (await status()) === 'critical');
    await stopChecker(b.engine);
  });
});
