import { DEFAULT_ADDRESSES, parseHostPort } from '../../engine/http/server';
import { CommandSpec, OptionSpec, ParsedOptions } from '../options';
import { TLS_OPTIONS } from './server-tls';
import { UsageError } from '../usage';

/**
 * The server's certificate flags (and their variables, which a container sets for both commands):
 * a listener with one is checked over https.
 */
const STATUS_TLS_OPTIONS: Record<string, OptionSpec> = Object.fromEntries(
  ['tls', 'registry-tls', 'secrets-tls', 'catalog-tls'].map((prefix) => [
    `${prefix}-cert-file`,
    { ...TLS_OPTIONS[`${prefix}-cert-file`], help: `${TLS_OPTIONS[`${prefix}-cert-file`].help}: check over https (the certificate is not verified)` },
  ]),
);

export const statusCommand: CommandSpec = {
  name: 'status',
  summary: 'Checks that a running server answers on its three listeners and reads its storage; exit code 0 when healthy, 1 when not.',
  usage: 'hangar status [options]',
  options: {
    'registry-addr': { type: 'string', env: 'HANGAR_REGISTRY_ADDR', placeholder: 'HOST:PORT', help: `Registry listener (default ${DEFAULT_ADDRESSES.registry})` },
    'secrets-addr': { type: 'string', env: 'HANGAR_SECRETS_ADDR', placeholder: 'HOST:PORT', help: `Secrets listener (default ${DEFAULT_ADDRESSES.secrets})` },
    'catalog-addr': { type: 'string', env: 'HANGAR_CATALOG_ADDR', placeholder: 'HOST:PORT', help: `Catalog listener (default ${DEFAULT_ADDRESSES.catalog})` },
    ...STATUS_TLS_OPTIONS,
    'timeout': { type: 'string', placeholder: 'SECONDS', help: 'Time allowed for each check (default 5)' },
    'json': { type: 'boolean', help: 'Print the result as JSON' },
  },
};

/**
 * One cheap request per listener that also reads the database (a search, the health endpoint with
 * its mount lookup, the leader endpoint with its token lookup): a broken storage fails them too.
 */
const CHECKS = {
  registry: '/api/v1/search?limit=1',
  secrets: '/v1/sys/health',
  catalog: '/v1/status/leader',
} as const;

interface Check {
  readonly url: string;
  readonly ok: boolean;
  readonly status?: number;
  readonly ms: number;
  readonly error?: string;
}

export async function runStatus(options: ParsedOptions): Promise<number> {
  const seconds = Number((options.timeout as string | undefined) ?? '5');
  if (!(seconds > 0 && seconds <= 300)) throw new UsageError(`--timeout must be a number of seconds between 0 and 300, not "${options.timeout}"`);
  const targets = Object.entries(CHECKS).map(([name, path]) => {
    const value = (options[`${name}-addr`] as string | undefined) ?? DEFAULT_ADDRESSES[name as keyof typeof CHECKS];
    let hostPort;
    try {
      hostPort = parseHostPort(value);
    } catch (err) {
      throw new UsageError(`--${name}-addr: ${(err as Error).message}`);
    }
    const scheme = options[`${name}-tls-cert-file`] !== undefined || options['tls-cert-file'] !== undefined ? 'https' : 'http';
    return { name, url: `${scheme}://${connectHost(hostPort.host)}:${hostPort.port}`, path };
  });

  const checks = await Promise.all(
    targets.map(async ({ url, path }): Promise<Check> => {
      const start = performance.now();
      const ms = () => Math.round(performance.now() - start);
      try {
        const status = await probe(`${url}${path}`, seconds);
        return { url, ok: status === 200, status, ms: ms() };
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        return { url, ok: false, ms: ms(), error: e.code ?? e.message };
      }
    }),
  );
  const listeners = Object.fromEntries(targets.map((t, i) => [t.name, checks[i]]));
  const healthy = checks.every((c) => c.ok);
  // Each check reads the database: an internal error says the storage fails, one success that it answers.
  const storage = checks.some((c) => (c.status ?? 0) >= 500) ? 'failing' : checks.some((c) => c.ok) ? 'ok' : 'unknown';
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ healthy, listeners, storage })}\n`);
  } else {
    for (const t of targets) {
      const c = listeners[t.name];
      const detail = c.ok ? 'ok' : c.status ? `answered ${c.status}` : c.error;
      process.stdout.write(`${t.name.padEnd(9)} ${c.url.padEnd(28)} ${detail} (${c.ms} ms)\n`);
    }
    process.stdout.write(`storage   ${storage}\n`);
    process.stdout.write(healthy ? 'healthy\n' : 'unhealthy\n');
  }
  return healthy ? 0 : 1;
}

/**
 * The status code of a GET, its body read and dropped. node:http, not undici: a container's health
 * check runs this command every few seconds, and loading undici cost more CPU than the checks.
 */
function probe(url: string, seconds: number): Promise<number> {
  // A probe sends no token: it need not trust the certificate it is served (the listener may be
  // reached on loopback, a name its certificate does not have).
  const get = url.startsWith('https:')
    ? (u: string, cb: Parameters<typeof import('node:https').get>[2]) => (require('node:https') as typeof import('node:https')).get(u, { rejectUnauthorized: false }, cb)
    : (require('node:http') as typeof import('node:http')).get;
  return new Promise((resolve, reject) => {
    const req = get(url, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${seconds} s`)), seconds * 1000);
    req.on('close', () => clearTimeout(timer));
    req.on('error', reject);
  });
}

/** A server listening on every address is reached on loopback. */
function connectHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}
