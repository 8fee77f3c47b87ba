import type { Server as HttpsServer } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import type { Engine } from '../engine';
import type { ApiName } from './api';
import { prepareTlsServer, reloadTls } from './tls';

export type ListenAddresses = Readonly<Record<ApiName, string>>;

/** The listen backlog asked for; the kernel grants at most net.core.somaxconn (4096 on Linux >= 5.4). */
const LISTEN_BACKLOG = 65535;

export const DEFAULT_ADDRESSES: ListenAddresses = {
  registry: '127.0.0.1:8080',
  secrets: '127.0.0.1:8200',
  catalog: '127.0.0.1:8500',
};

/** "HOST:PORT" (IPv6 as "[::1]:8080") to its parts; throws a message naming the bad value. */
export function parseHostPort(value: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value.trim());
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) throw new Error(`invalid address "${value}": expected HOST:PORT, for example 127.0.0.1:8080`);
  return { host: match[1] ?? match[2], port };
}

/**
 * Starts the three listeners; resolves to the URLs they really listen on (port 0 picks a free port).
 * With `shared`, each listener is opened with SO_REUSEPORT, so that the worker threads of one server
 * (`hangar server --workers N`) each listen on the same ports and the kernel spreads connections
 * among them. A port already taken is refused even then, by anyone: the first thread checks with a
 * plain listener first, since another server of the same user, started with `--workers` by mistake,
 * would otherwise quietly share the port.
 */
export async function listen(engine: Engine, addresses: ListenAddresses, shared?: 'first' | 'join'): Promise<Record<ApiName, string>> {
  const urls = {} as Record<ApiName, string>;
  engine.enableMetrics();
  for (const name of ['registry', 'secrets', 'catalog'] as const) {
    const { host, port } = parseHostPort(addresses[name]);
    if (shared === 'first' && port !== 0) await ensureFree(host, port);
    const app = engine.app(name);
    const tls = engine.tls[name];
    if (tls) prepareTlsServer(app.server as unknown as HttpsServer, tls);
    // A deep accept queue (Linux caps it at net.core.somaxconn): thousands of clients reconnecting
    // at once after a restart are queued, not dropped into SYN retries (Node's default is 511).
    await app.listen({ host, port, backlog: LISTEN_BACKLOG, ...(shared ? { reusePort: true } : {}) });
    const address = app.server.address() as AddressInfo;
    const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    urls[name] = `${tls ? 'https' : 'http'}://${shownHost}:${address.port}`;
  }
  return urls;
}

/**
 * SIGHUP's TLS part: each TLS listener reads its certificate, key and client CA files again. New
 * connections get the new ones, open connections are left alone; a listener whose files do not
 * serve (unreadable, mismatched, expired) keeps its current ones and the error names the file.
 * Resolves to whether every listener took its new files.
 */
export function reloadListenersTls(engine: Engine): boolean {
  let ok = true;
  for (const [name, tls] of Object.entries(engine.tls)) {
    try {
      reloadTls(engine.app(name as ApiName).server as unknown as HttpsServer, tls.files);
      engine.logger.info({ listener: name, cert: tls.files.cert.path }, 'TLS certificate reloaded');
    } catch (err) {
      ok = false;
      engine.logger.error({ listener: name, problem: (err as Error).message }, `TLS reload failed, the ${name} listener keeps its certificate`);
    }
  }
  return ok;
}

/** Throws EADDRINUSE (or whatever else listening on host:port meets) unless it is free. */
function ensureFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ host, port }, () => probe.close(() => resolve()));
  });
}
