import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { LoadOptions, LoadResult, Measured, PUBLIC_SERVICE_WARM_UP_SECONDS, record, reqs, Runner, runnerFor } from './autocannon';
import { until } from '../test/helpers/until';
import { freePort } from '../test/setup/postgres';

/**
 * The public services Hangar's secrets and catalog APIs answer for, run side by side with Hangar
 * as dev servers when the environment names their binaries (built from their public sources with
 * Go: scripts/build-public-services):
 *
 *   HANGAR_BENCH_VAULT=/path/to/vault HANGAR_BENCH_CONSUL=/path/to/consul npm run bench
 *
 * Each is optional; a bench compares with those it is given and says so when it is given none.
 */

export interface PublicService {
  /** "Vault v1.21.4 dev", as printed in rows. */
  readonly label: string;
  readonly url: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/** A public service's binary and the version it prints. */
export interface ServiceBinary {
  readonly path: string;
  readonly version: string;
}

/** The binary an environment variable names, or undefined; a named binary that does not run is an error. */
function binary(variable: 'HANGAR_BENCH_VAULT' | 'HANGAR_BENCH_CONSUL'): ServiceBinary | undefined {
  const path = process.env[variable];
  if (!path) return undefined;
  const out = execFileSync(path, ['version'], { encoding: 'utf8' });
  const version = /v\d+\.\d+\.\d+\S*/.exec(out)?.[0];
  if (!version) throw new Error(`${variable}=${path}: \`version\` printed no version: ${out}`);
  return { path, version };
}

export const vaultBinary = () => binary('HANGAR_BENCH_VAULT');
export const consulBinary = () => binary('HANGAR_BENCH_CONSUL');

/** Starts a dev server and waits until `ready` holds; its output is kept for the error if it never does. */
async function startDev(label: string, path: string, args: string[], url: string, ready: () => Promise<boolean>): Promise<PublicService> {
  const child: ChildProcess = spawn(path, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  child.stderr!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await once(child, 'exit');
    clearTimeout(timer);
  };
  try {
    await until(`${label} to serve`, async () => {
      if (child.exitCode !== null) throw new Error(`${label} exited with ${child.exitCode}: ${output}`);
      return ready().catch(() => false);
    }, { ms: 60_000, detail: () => output });
  } catch (err) {
    await stop();
    throw err;
  }
  return { label, url, pid: child.pid!, stop };
}

/** `vault server -dev` on a free loopback port, with the given root token (in memory, as Vault's dev mode is). */
export async function startVaultDev(bin: ServiceBinary, rootToken: string): Promise<PublicService> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  return startDev(`Vault ${bin.version} dev`, bin.path, ['server', '-dev', `-dev-root-token-id=${rootToken}`, `-dev-listen-address=127.0.0.1:${port}`], url,
    async () => (await fetch(`${url}/v1/sys/health`)).status === 200);
}

/** This process's limit of open files (its children inherit it). */
function openFilesLimit(): number {
  const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  return m ? Number(m[1]) : 1024;
}

/**
 * `consul agent -dev` on free loopback ports, ready once it has a leader. Its per-client limit of
 * 200 HTTP connections is raised as far as its open files allow (it wants 20 to spare), as in the
 * fan-out every watcher comes from one address. Its DNS interface is off unless `dnsPort` is given.
 */
export async function startConsulDev(bin: ServiceBinary, options: { dnsPort?: number } = {}): Promise<PublicService> {
  const [http, server, lan, wan] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const url = `http://127.0.0.1:${http}`;
  const perClient = Math.max(200, openFilesLimit() - 100);
  const args = ['agent', '-dev', '-bind', '127.0.0.1', '-client', '127.0.0.1', '-log-level', 'warn',
    '-http-port', String(http), '-server-port', String(server), '-serf-lan-port', String(lan), '-serf-wan-port', String(wan),
    '-dns-port', String(options.dnsPort ?? -1), '-grpc-port', '-1', '-grpc-tls-port', '-1', '-hcl', `limits { http_max_conns_per_client = ${perClient} }`];
  return startDev(`Consul ${bin.version} dev`, bin.path, args, url, async () => {
    const leader = await (await fetch(`${url}/v1/status/leader`)).json();
    return typeof leader === 'string' && leader !== '';
  });
}

/**
 * Records Hangar's result for a row next to a public service's for the same requests: the rate
 * ratio, and the CPU ratio (the public service's CPU per request ÷ Hangar's). The goal is to be ahead.
 */
function recordVersus(group: string, name: string, hangar: LoadResult, service: PublicService, theirs: LoadResult): void {
  if (theirs.non2xx || theirs.errors) throw new Error(`${service.label} ${name}: ${theirs.non2xx} non-2xx answers, ${theirs.errors} errors`);
  record({
    group: `${group} vs ${service.label}`,
    name,
    figure: `Hangar ${reqs(hangar)}`,
    baseline: reqs(theirs),
    ratio: hangar.rps / theirs.rps,
    ...(hangar.cpuUs && theirs.cpuUs ? { cpuRatio: theirs.cpuUs / hangar.cpuUs } : {}),
    goal: 'ahead (ratio > 1)',
    met: hangar.rps > theirs.rps,
  });
}

/**
 * Runs `measure` (the rows Hangar gave `ours`, in the same order) against a started public service,
 * records each row's ratio, and stops the service.
 */
export async function compareWith(
  service: PublicService,
  load: LoadOptions,
  group: string,
  ours: readonly Measured[],
  measure: (url: string, run: Runner) => Promise<Measured[]>,
): Promise<void> {
  try {
    const theirs = await measure(service.url, runnerFor(service.pid, load, PUBLIC_SERVICE_WARM_UP_SECONDS));
    theirs.forEach((row, i) => recordVersus(group, row.name, ours[i].result, service, row.result));
  } finally {
    await service.stop();
  }
}
