import { mkdtempSync, rmSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_DNS_ADDRESS } from '../../engine/catalog/dns/address';
import type { DnsConfig } from '../../engine/catalog/dns/config';
import { prepareDataDir } from '../../engine/data-dir';
import type { ApiName } from '../../engine/http/api';
import { DEFAULT_ADDRESSES, parseHostPort } from '../../engine/http/server';
import { CommandSpec, ParsedOptions } from '../options';
import { dataDirOption, secretsKeyFileOption, storageConfig, storageOptions, storageSettings } from '../storage-options';
import { UsageError } from '../usage';
import { newThreadShared, serveInThread, ServerThreads, threadData, workerCount } from './server-threads';
import { TLS_OPTIONS, tlsFilesOf } from './server-tls';

export const serverCommand: CommandSpec = {
  name: 'server',
  summary:
    'Runs the box registry, secrets and catalog APIs. Data lives in SQLite under --data (the default) or in PostgreSQL.',
  usage: 'hangar server [options]',
  options: {
    'config': {
      type: 'string',
      env: 'HANGAR_CONFIG',
      placeholder: 'FILE',
      configFile: true,
      commandLineOnly: true,
      help: 'Configuration file (HCL or JSON, docs/hangar.hcl.example): sets any option below; flags and environment win over it',
    },
    'check': { type: 'boolean', commandLineOnly: true, help: 'Check the configuration (flags, environment, --config), print "configuration is valid" and exit' },
    ...storageOptions,
    'registry-addr': { type: 'string', env: 'HANGAR_REGISTRY_ADDR', placeholder: 'HOST:PORT', help: `Registry listener (default ${DEFAULT_ADDRESSES.registry})` },
    'secrets-addr': { type: 'string', env: 'HANGAR_SECRETS_ADDR', placeholder: 'HOST:PORT', help: `Secrets listener (default ${DEFAULT_ADDRESSES.secrets})` },
    'catalog-addr': { type: 'string', env: 'HANGAR_CATALOG_ADDR', placeholder: 'HOST:PORT', help: `Catalog listener (default ${DEFAULT_ADDRESSES.catalog})` },
    'catalog-default-policy': { type: 'string', env: 'HANGAR_CATALOG_DEFAULT_POLICY', placeholder: 'allow|deny', help: 'Catalog ACL default policy for what no rule decides (default deny; --dev: allow)' },
    'dns-addr': { type: 'string', env: 'HANGAR_DNS_ADDR', placeholder: 'HOST:PORT|off', help: `The catalog's DNS interface, UDP and TCP (default ${DEFAULT_DNS_ADDRESS}; off: none)` },
    'dns-domain': { type: 'string', env: 'HANGAR_DNS_DOMAIN', placeholder: 'DOMAIN', help: 'The domain DNS answers (default consul)' },
    'dns-token': { type: 'string', env: 'HANGAR_DNS_TOKEN', placeholder: 'TOKEN', help: 'Catalog token whose service:read and node:read DNS answers with (default: the anonymous token; prefer the environment variable)' },
    'dns-recursors': { type: 'string', env: 'HANGAR_DNS_RECURSORS', placeholder: 'IP[:PORT],...', help: 'Upstream DNS servers for names outside the domain (default none: such names are REFUSED)' },
    'dns-node-ttl': { type: 'string', env: 'HANGAR_DNS_NODE_TTL', placeholder: 'DURATION', help: 'TTL of node answers (default 0s)' },
    'dns-service-ttl': { type: 'string', env: 'HANGAR_DNS_SERVICE_TTL', placeholder: 'DURATION|NAME=DURATION,...', help: 'TTL of service answers, for all or by name (prefix* matches by prefix; default: the node TTL)' },
    'dns-only-passing': { type: 'boolean', env: 'HANGAR_DNS_ONLY_PASSING', help: 'DNS leaves out instances with a warning check too (default: only critical ones)' },
    'dns-udp-answer-limit': { type: 'string', env: 'HANGAR_DNS_UDP_ANSWER_LIMIT', placeholder: 'N', help: 'At most N answers in a UDP reply to a client without EDNS (default 3, at most 8)' },
    'node-name': { type: 'string', env: 'HANGAR_NODE_NAME', placeholder: 'NAME', help: 'This server\'s node in the catalog (default: the host name); unique per server on one database' },
    'advertise-addr': { type: 'string', env: 'HANGAR_ADVERTISE_ADDR', placeholder: 'IP', help: 'This server\'s address in the catalog (default: the catalog listener\'s host, 127.0.0.1 if it listens on all)' },
    ...secretsKeyFileOption,
    'workers': {
      type: 'string',
      env: 'HANGAR_WORKERS',
      placeholder: 'N|auto',
      help: 'Threads serving requests, each with its own engine on the same data and ports (default 1; auto: one per core)',
    },
    'dev': { type: 'boolean', env: 'HANGAR_DEV', commandLineOnly: true, help: 'Development mode: temporary data, a known root token, ready at once' },
    ...TLS_OPTIONS,
    'dev-root-token': { type: 'string', env: 'HANGAR_DEV_ROOT_TOKEN', commandLineOnly: true, placeholder: 'TOKEN', help: 'Root token in --dev (default: a random one, printed)' },
    'log-level': { type: 'string', env: 'HANGAR_LOG_LEVEL', placeholder: 'LEVEL', help: 'fatal, error, warn, info (default; --dev: debug, one line per request), debug, trace' },
    'log-format': { type: 'string', env: 'HANGAR_LOG_FORMAT', placeholder: 'json|pretty', help: 'Log lines as JSON or readable text (default: pretty on a terminal, JSON otherwise)' },
  },
};

export async function runServer(options: ParsedOptions): Promise<number> {
  const { dev, devTls, addresses, kind, catalogDefaultPolicy, workers, log, advertise, dns, flagTls } = serverSettings(options);
  if (options.check === true) {
    process.stdout.write('configuration is valid\n');
    return 0;
  }
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
  // In a worker thread of a server with several (server-threads.ts), the main thread decided these.
  const thread = threadData();
  const temporary = !thread && dev && !options.data ? mkdtempSync(join(tmpdir(), 'hangar-dev-')) : undefined;
  const dataDir = thread?.dataDir ?? temporary ?? dataDirOption(options);
  const shared = thread ?? newThreadShared(workers);
  // TLS: the flags' files were loaded by serverSettings; --dev-tls's are made by the main thread, read by the others.
  const devTlsFiles = devTls ? devTlsPaths(dataDir) : undefined;
  let tls = flagTls;
  if (devTlsFiles) {
    try {
      const tlsFiles = tlsFilesOf(options, addresses, devTlsFiles);
      if (!thread) {
        prepareDataDir(dataDir);
        await makeDevTls(dataDir);
      }
      tls = Object.fromEntries(Object.entries(tlsFiles).map(([name, files]) => [name, loadTls(files)]));
    } catch (err) {
      if (temporary) rmSync(temporary, { recursive: true, force: true });
      throw err instanceof TlsFileError ? new UsageError(err.message) : err;
    }
  }
  const storage = storageConfig(options, dataDir, shared?.writeLock);
  const devRootToken = dev ? (thread?.devRootToken ?? (options['dev-root-token'] as string | undefined) ?? newRootToken()) : undefined;
  // A worker thread's lines say which thread wrote them.
  const baseLogger = createLogger(log);
  const logger = thread ? baseLogger.child({ thread: thread.index }) : baseLogger;

  const secretsKeyFile = options['secrets-key-file'] as string | undefined;
  const peers = shared && { channel: shared.channel, count: shared.count, index: thread?.index ?? 0 };
  const catalogNode = { name: options['node-name'] as string | undefined, address: advertise };
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
  let dnsServer: import('../../engine/catalog/dns/server').DnsServer | undefined;
  let dnsWarning: string | undefined;
  try {
    const swept = await sweepPartialUploads(engine);
    if (swept > 0) logger.info({ files: swept }, 'removed the partial files of interrupted uploads');
    urls = await listen(engine, addresses, shared && 'first');
    if (shared) {
      const bound = { registry: hostPort(urls.registry), secrets: hostPort(urls.secrets), catalog: hostPort(urls.catalog) };
      threads = await ServerThreads.start({ ...shared, dataDir, devRootToken, addresses: bound }, logger);
    }
    // Only the main thread serves DNS: its answers are cached per catalog state, one cache serves them all.
    if (dns.address) ({ server: dnsServer, warning: dnsWarning } = await startDns(engine, dns, logger));
  } catch (err) {
    await Promise.all([threads?.stop(), engine.close()]);
    throw err;
  }
  // The server is a node of the catalog (with the consul service and serfHealth), kept alive by a heartbeat.
  const { startServerNode } = require('../../engine/catalog/servers') as typeof import('../../engine/catalog/servers');
  await startServerNode(engine);
  // Health checks run in the main thread only (one checker per server, whatever --workers says).
  const { startChecker } = require('../../engine/catalog/checker') as typeof import('../../engine/catalog/checker');
  await startChecker(engine);
  engine.scheduler.start();
  // What starting left behind is garbage now, in good part outside V8's heap (the unpacked CLI's
  // buffer, 7 MB): V8 would keep it until its first full collection, which an idle server may never
  // reach. One collection here, a few milliseconds, gives it back (docs/performance.md).
  v8Collector()?.({ type: 'major' });
  logger.info({ urls, storage: kind, dataDir, dev, workers }, 'hangar is ready');
  const note = (line: string) => process.stderr.write(`${line}\n`);
  const banner = [`Data: ${kind === 'postgres' ? 'PostgreSQL' : join(dataDir, 'hangar.db')}`];
  if (workers > 1) banner.push(`Workers: ${workers} threads`);
  if (dnsServer) banner.push(`DNS: ${dnsServer.address} (UDP and TCP), domain ${dns.config.domain}.`);
  if (dnsWarning) {
    logger.warn(dnsWarning);
    banner.push(`Warning: ${dnsWarning}`);
  }
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
      Promise.all([threads?.stop(), dnsServer?.close().then(() => engine.close()) ?? engine.close()]).then(() => done(), (err: unknown) => {
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
 * Every option of the server checked, before anything starts: what `--check` validates. A check that
 * an option needs (a file that must load, a value that must parse) belongs here, not after the start.
 */
function serverSettings(options: ParsedOptions) {
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
  const { kind } = storageSettings(options);

  // Anonymous catalog callers may do nothing outside dev mode (the public service's production guidance).
  const catalogDefaultPolicy = (options['catalog-default-policy'] as string | undefined) ?? (dev ? 'allow' : 'deny');
  if (catalogDefaultPolicy !== 'allow' && catalogDefaultPolicy !== 'deny') {
    throw new UsageError(`--catalog-default-policy must be allow or deny, not "${catalogDefaultPolicy}"`);
  }
  const workers = workerCount(options.workers as string | undefined);
  const log = logOptions(options, dev);
  const advertise = advertiseAddress(options, addresses.catalog);
  const dns = dnsOptions(options);
  // The TLS flags' files, loaded now so that --check finds their problems (--dev-tls makes its own at start).
  const flagTls = devTls ? undefined : tlsOfFlags(options, addresses);
  return { dev, devTls, addresses, kind, catalogDefaultPolicy, workers, log, advertise, dns, flagTls } as const;
}

/** Each listener's TLS (certificate, key, versions, client CA) from the flags, checked; a UsageError names the flag and the file. */
function tlsOfFlags(options: ParsedOptions, addresses: Record<ApiName, string>) {
  const { loadTls, TlsFileError } = require('../../engine/http/tls') as typeof import('../../engine/http/tls');
  try {
    return Object.fromEntries(Object.entries(tlsFilesOf(options, addresses)).map(([name, files]) => [name, loadTls(files)]));
  } catch (err) {
    throw err instanceof TlsFileError ? new UsageError(err.message) : err;
  }
}

/** The DNS flags, checked: where to listen (none with `off`) and how to answer. */
function dnsOptions(options: ParsedOptions): { address?: { host: string; port: number }; explicit: boolean; config: DnsConfig } {
  const given = options['dns-addr'] as string | undefined;
  let address: { host: string; port: number } | undefined;
  if (given !== 'off') {
    try {
      address = parseHostPort(given ?? DEFAULT_DNS_ADDRESS);
    } catch (err) {
      throw new UsageError(`--dns-addr: ${(err as Error).message}`);
    }
  }
  const { dnsConfigOf } = require('../../engine/catalog/dns/config') as typeof import('../../engine/catalog/dns/config');
  try {
    const config = dnsConfigOf({
      domain: options['dns-domain'] as string | undefined,
      token: options['dns-token'] as string | undefined,
      nodeTtl: options['dns-node-ttl'] as string | undefined,
      serviceTtl: options['dns-service-ttl'] as string | undefined,
      onlyPassing: options['dns-only-passing'] === true,
      udpAnswerLimit: options['dns-udp-answer-limit'] as string | undefined,
      recursors: options['dns-recursors'] as string | undefined,
    });
    return { address, explicit: given !== undefined, config };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/**
 * Starts the DNS interface. Its default port in use (another server on this machine) leaves the
 * server without DNS, with a warning; an address given explicitly must be served.
 */
async function startDns(
  engine: import('../../engine/engine').Engine,
  dns: ReturnType<typeof dnsOptions>,
  logger: import('../../engine/logger').Logger,
): Promise<{ server?: import('../../engine/catalog/dns/server').DnsServer; warning?: string }> {
  const { DnsServer } = require('../../engine/catalog/dns/server') as typeof import('../../engine/catalog/dns/server');
  try {
    return { server: await DnsServer.start(engine, dns.config, dns.address!, logger) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (dns.explicit || code !== 'EADDRINUSE') throw new Error(`--dns-addr ${dns.address!.host}:${dns.address!.port}: ${(err as Error).message}`);
    return { warning: `DNS is off: ${DEFAULT_DNS_ADDRESS} is in use (another server?); give --dns-addr HOST:PORT, or --dns-addr off` };
  }
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
