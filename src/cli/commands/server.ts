import { mkdtempSync, rmSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { defaultDataDir, prepareDataDir } from '../../engine/data-dir';
import { DEFAULT_ADDRESSES, parseHostPort } from '../../engine/http/server';
import type { StorageConfig } from '../../engine/storage';
import { CommandSpec, ParsedOptions } from '../options';
import { UsageError } from '../usage';
import { newThreadShared, serveInThread, ServerThreads, threadData, workerCount } from './server-threads';
import { TLS_OPTIONS, tlsFilesOf } from './server-tls';

export const serverCommand: CommandSpec = {
  name: 'server',
  summary:
    'Runs the box registry, secrets and catalog APIs. Data lives in SQLite under --data (the default) or in PostgreSQL.',
  usage: 'hangar server [options]',
  options: {
    'data': { type: 'string', env: 'HANGAR_DATA', placeholder: 'DIR', help: 'Data directory (default ~/.local/share/hangar; --dev: a temporary one)' },
    'storage': { type: 'string', env: 'HANGAR_STORAGE', placeholder: 'sqlite|postgres', help: 'Storage backend (default sqlite)' },
    'postgres-url': { type: 'string', env: 'HANGAR_POSTGRES_URL', placeholder: 'URL', help: 'PostgreSQL connection URL for --storage postgres' },
    'registry-addr': { type: 'string', env: 'HANGAR_REGISTRY_ADDR', placeholder: 'HOST:PORT', help: `Registry listener (default ${DEFAULT_ADDRESSES.registry})` },
    'secrets-addr': { type: 'string', env: 'HANGAR_SECRETS_ADDR', placeholder: 'HOST:PORT', help: `Secrets listener (default ${DEFAULT_ADDRESSES.secrets})` },
    'catalog-addr': { type: 'string', env: 'HANGAR_CATALOG_ADDR', placeholder: 'HOST:PORT', help: `Catalog listener (default ${DEFAULT_ADDRESSES.catalog})` },
    'catalog-default-policy': { type: 'string', env: 'HANGAR_CATALOG_DEFAULT_POLICY', placeholder: 'allow|deny', help: 'Catalog ACL default policy for what no rule decides (default deny; --dev: allow)' },
    'node-name': { type: 'string', env: 'HANGAR_NODE_NAME', placeholder: 'NAME', help: 'This server\'s node in the catalog (default: the host name); unique per server on one database' },
    'advertise-addr': { type: 'string', env: 'HANGAR_ADVERTISE_ADDR', placeholder: 'IP', help: 'This server\'s address in the catalog (default: the catalog listener\'s host, 127.0.0.1 if it listens on all)' },
    'secrets-key-file': { type: 'string', env: 'HANGAR_SECRETS_KEY_FILE', placeholder: 'FILE', help: 'Secrets master key file, away from the database (default <data>/secrets.key; HANGAR_SECRETS_KEY holds the key itself)' },
    'workers': {
      type: 'string',
      env: 'HANGAR_WORKERS',
      placeholder: 'N|auto',
      help: 'Threads serving requests, each with its own engine on the same data and ports (default 1; auto: one per core)',
    },
    'dev': { type: 'boolean', env: 'HANGAR_DEV', help: 'Development mode: temporary data, a known root token, ready at once' },
    ...TLS_OPTIONS,
    'dev-root-token': { type: 'string', env: 'HANGAR_DEV_ROOT_TOKEN', placeholder: 'TOKEN', help: 'Root token in --dev (default: a random one, printed)' },
    'log-level': { type: 'string', env: 'HANGAR_LOG_LEVEL', placeholder: 'LEVEL', help: 'fatal, error, warn, info (default; --dev: debug, one line per request), debug, trace' },
    'log-format': { type: 'string', env: 'HANGAR_LOG_FORMAT', placeholder: 'json|pretty', help: 'Log lines as JSON or readable text (default: pretty on a terminal, JSON otherwise)' },
  },
};

export async function runServer(options: ParsedOptions): Promise<number> {
  // Loaded here, not at the top, so that `hangar --help` and the custom resources' commands
  // do not pay for the server's modules (the bundle evaluates a module on its first require).
  const { Engine } = require('../../engine/engine') as typeof import('../../engine/engine');
  const { listen } = require('../../engine/http/server') as typeof import('../../engine/http/server');
  const { createLogger } = require('../../engine/logger') as typeof import('../../engine/logger');
  const { newRootToken, ROOT_TOKEN_FILE } = require('../../engine/root-token') as typeof import('../../engine/root-token');
  const { sweepPartialUploads } = require('../../engine/registry/uploads') as typeof import('../../engine/registry/uploads');
  const { startupWarnings } = require('../../engine/startup-warnings') as typeof import('../../engine/startup-warnings');
  const { v8Collector } = require('../../engine/collector') as typeof import('../../engine/collector');
  const { loadTls, TlsFileError } = require('../../engine/http/tls') as typeof import('../../engine/http/tls');
  const { devTlsPaths, makeDevTls } = require('../../engine/http/dev-tls') as typeof import('../../engine/http/dev-tls');
  // --dev-tls implies --dev, as `vault server -dev-tls` does.
  const devTls = options['dev-tls'] === true;
  const dev = options.dev === true || devTls;
  if (options['dev-root-token'] !== undefined && !dev) throw new UsageError('--dev-root-token needs --dev');
  const addresses = {
    registry: (options['registry-addr'] as string | undefined) ?? DEFAULT_ADDRESSES.registry,
    secrets: (options['secrets-addr'] as string | undefined) ?? DEFAULT_ADDRESSES.secrets,
    catalog: (options['catalog-addr'] as string | undefined) ?? DEFAULT_ADDRESSES.catalog,
  };
  for (const [name, value] of Object.entries(addresses)) {
    try {
      parseHostPort(value);
    } catch (err) {
      throw new UsageError(`--${name}-addr: ${(err as Error).message}`);
    }
  }
  const kind = (options.storage as string | undefined) ?? 'sqlite';
  if (kind !== 'sqlite' && kind !== 'postgres') throw new UsageError(`--storage must be sqlite or postgres, not "${kind}"`);
  if (kind === 'postgres' && !options['postgres-url']) throw new UsageError('--storage postgres needs --postgres-url (or HANGAR_POSTGRES_URL)');

  // Anonymous catalog callers may do nothing outside dev mode (the public service's production guidance).
  const catalogDefaultPolicy = (options['catalog-default-policy'] as string | undefined) ?? (dev ? 'allow' : 'deny');
  if (catalogDefaultPolicy !== 'allow' && catalogDefaultPolicy !== 'deny') {
    throw new UsageError(`--catalog-default-policy must be allow or deny, not "${catalogDefaultPolicy}"`);
  }

  const workers = workerCount(options.workers as string | undefined);
  // In a worker thread of a server with several (server-threads.ts), the main thread decided these.
  const thread = threadData();
  const temporary = !thread && dev && !options.data ? mkdtempSync(join(tmpdir(), 'hangar-dev-')) : undefined;
  const dataDir = thread?.dataDir ?? temporary ?? resolve((options.data as string | undefined) ?? defaultDataDir());
  const shared = thread ?? newThreadShared(workers);
  // TLS: flags checked before anything is written; the dev files are made by the main thread, read by the others.
  const devTlsFiles = devTls ? devTlsPaths(dataDir) : undefined;
  let tls;
  try {
    const tlsFiles = tlsFilesOf(options, addresses, devTlsFiles);
    if (devTls && !thread) {
      prepareDataDir(dataDir);
      await makeDevTls(dataDir);
    }
    tls = Object.fromEntries(Object.entries(tlsFiles).map(([name, files]) => [name, loadTls(files)]));
  } catch (err) {
    if (temporary) rmSync(temporary, { recursive: true, force: true });
    throw err instanceof TlsFileError ? new UsageError(err.message) : err;
  }
  const storage: StorageConfig =
    kind === 'postgres' ? { kind, url: options['postgres-url'] as string } : { kind: 'sqlite', dataDir, writeLock: shared?.writeLock };
  const devRootToken = dev ? (thread?.devRootToken ?? (options['dev-root-token'] as string | undefined) ?? newRootToken()) : undefined;
  // A worker thread's lines say which thread wrote them.
  const baseLogger = createLogger(logOptions(options, dev));
  const logger = thread ? baseLogger.child({ thread: thread.index }) : baseLogger;

  const secretsKeyFile = options['secrets-key-file'] as string | undefined;
  const peers = shared && { channel: shared.channel, count: shared.count, index: thread?.index ?? 0 };
  const catalogNode = { name: options['node-name'] as string | undefined, address: advertiseAddress(options, addresses.catalog) };
  const engine = await Engine.open({
    storage, dataDir, logger, devRootToken, createRootToken: !thread, catalogDefaultPolicy, secretsKeyFile, peers, catalogNode, tls,
  });
  if (thread) {
    try {
      await listen(engine, thread.addresses, 'join');
    } catch (err) {
      await engine.close();
      throw err;
    }
    await serveInThread(() => reloadServer(engine));
    await engine.close();
    return 0;
  }
  let urls;
  let threads: ServerThreads | undefined;
  try {
    const swept = await sweepPartialUploads(engine);
    if (swept > 0) logger.info({ files: swept }, 'removed the partial files of interrupted uploads');
    urls = await listen(engine, addresses, shared && 'first');
    if (shared) {
      const bound = { registry: hostPort(urls.registry), secrets: hostPort(urls.secrets), catalog: hostPort(urls.catalog) };
      threads = await ServerThreads.start({ ...shared, dataDir, devRootToken, addresses: bound }, logger);
    }
  } catch (err) {
    await engine.close();
    throw err;
  }
  // The server is a node of the catalog (with the consul service and serfHealth), kept alive by a heartbeat.
  const { startServerNode } = require('../../engine/catalog/servers') as typeof import('../../engine/catalog/servers');
  await startServerNode(engine);
  engine.scheduler.start();
  // What starting left behind is garbage now, in good part outside V8's heap (the unpacked CLI's
  // buffer, 7 MB): V8 would keep it until its first full collection, which an idle server may never
  // reach. One collection here, a few milliseconds, gives it back (docs/performance.md).
  v8Collector()?.({ type: 'major' });
  logger.info({ urls, storage: kind, dataDir, dev, workers }, 'hangar is ready');
  const note = (line: string) => process.stderr.write(`${line}\n`);
  const banner = [`Data: ${kind === 'postgres' ? 'PostgreSQL' : join(dataDir, 'hangar.db')}`];
  if (workers > 1) banner.push(`Workers: ${workers} threads`);
  if (dev) {
    banner.push(`Root token: ${devRootToken}`);
    if (devTlsFiles) banner.push(`CA certificate: ${devTlsFiles.ca} (the listeners' certificate is for localhost, 127.0.0.1 and ::1)`);
    banner.push('The public services\' tools and clients work with:', ...devExports(urls, devRootToken!, devTlsFiles?.ca).map((line) => `    ${line}`));
    banner.push('DEV MODE: not for production. Data is temporary unless --data is given.');
    if (catalogDefaultPolicy === 'allow') banner.push('The catalog lets anonymous callers read and write everything (--catalog-default-policy allow).');
  } else {
    if (engine.createdRootToken) banner.push(`A root token was created and written to ${join(dataDir, ROOT_TOKEN_FILE)} (mode 0600).`);
    for (const warning of startupWarnings({ dataDir, sqlite: kind === 'sqlite', secretsKeyFile })) {
      logger.warn(warning);
      banner.push(`Warning: ${warning}`);
    }
  }
  // The "ready" line comes last: whoever waits for it has the rest already.
  banner.push(`Hangar ${dev ? '(dev mode) ' : ''}is ready: registry ${urls.registry}, secrets ${urls.secrets}, catalog ${urls.catalog}`);
  process.stderr.write(`${banner.join('\n')}\n`);

  await new Promise<void>((done) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) {
        note(`${signal} again: exiting at once`);
        process.exit(1);
      }
      stopping = true;
      logger.info({ signal }, 'shutting down: finishing requests in flight');
      Promise.all([threads?.stop(), engine.close()]).then(() => done(), (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        done();
      });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
    // Reloads, never stops (a terminal closing sends it too): certificates and keys are read again.
    process.on('SIGHUP', () => {
      logger.info({ signal: 'SIGHUP' }, 'reloading');
      reloadServer(engine);
      threads?.reload();
    });
  });
  if (temporary) rmSync(temporary, { recursive: true, force: true });
  logger.info('stopped');
  return 0;
}

/**
 * What SIGHUP reloads in one thread's engine (each worker thread runs it on the main thread's word):
 * the TLS listeners' certificates and keys. Another part that SIGHUP must reload adds its call here.
 */
function reloadServer(engine: import('../../engine/engine').Engine): void {
  const { reloadListenersTls } = require('../../engine/http/server') as typeof import('../../engine/http/server');
  reloadListenersTls(engine);
}

/** The dev banner's `export` lines for the public services' tools (vault, consul, vagrant) and their clients. */
export function devExports(urls: Record<'registry' | 'secrets' | 'catalog', string>, rootToken: string, caFile?: string): string[] {
  const quote = (value: string) => `'${value.replace(/'/g, "'\\''")}'`;
  const vars: Array<[string, string]> = [
    ['VAULT_ADDR', urls.secrets],
    ['VAULT_TOKEN', rootToken],
    ['CONSUL_HTTP_ADDR', urls.catalog],
    ['CONSUL_HTTP_TOKEN', rootToken],
    ['VAGRANT_SERVER_URL', urls.registry],
  ];
  // The Vagrant CLI reads its trust from SSL_CERT_FILE (its Ruby API calls) and CURL_CA_BUNDLE (the curl it runs for
  // box uploads and downloads); both replace the system's CAs for such programs in that shell.
  if (caFile) vars.push(['VAULT_CACERT', caFile], ['CONSUL_CACERT', caFile], ['SSL_CERT_FILE', caFile], ['CURL_CA_BUNDLE', caFile]);
  return vars.map(([name, value]) => `export ${name}=${quote(value)}`);
}

/** "http://HOST:PORT" as listen() reports it, back to the HOST:PORT it listens on. */
function hostPort(url: string): string {
  return new URL(url).host;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** --log-level and --log-format, checked; --dev shows each request (debug) unless told otherwise. */
function logOptions(options: ParsedOptions, dev: boolean): { level: string; format?: 'json' | 'pretty' } {
  const level = (options['log-level'] as string | undefined) ?? (dev ? 'debug' : 'info');
  if (!LOG_LEVELS.includes(level)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, not "${level}"`);
  const format = options['log-format'] as string | undefined;
  if (format !== undefined && format !== 'json' && format !== 'pretty') throw new UsageError(`--log-format must be json or pretty, not "${format}"`);
  return { level, format };
}

/** The address of this server in the catalog: --advertise-addr, else the catalog listener's host unless it listens on all. */
function advertiseAddress(options: ParsedOptions, catalogAddr: string): string {
  const given = options['advertise-addr'] as string | undefined;
  if (given !== undefined) {
    if (isIP(given) === 0) throw new UsageError(`--advertise-addr must be an IP address, not "${given}"`);
    return given;
  }
  const { host } = parseHostPort(catalogAddr);
  return isIP(host) !== 0 && host !== '0.0.0.0' && host !== '::' ? host : '127.0.0.1';
}
