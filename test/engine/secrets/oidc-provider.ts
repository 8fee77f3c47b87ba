import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** A real OIDC provider (`oidc-provider` from npm) on loopback, with its development login pages. */
export interface TestProvider {
  readonly issuer: string;
  close(): Promise<void>;
}

export interface ProviderClient {
  readonly client_id: string;
  readonly client_secret?: string;
  readonly redirect_uris: string[];
  readonly response_types?: string[];
  readonly grant_types?: string[];
  readonly token_endpoint_auth_method?: string;
  readonly application_type?: string;
}

/** The provider in this process. */
export async function startProvider(clients: ProviderClient[]): Promise<TestProvider> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const fixture = require('./fixtures/oidc-provider.cjs') as { startProvider(c: ProviderClient[]): Promise<TestProvider> };
  return fixture.startProvider(clients);
}

/** The provider in a process of its own (for tests whose process blocks, e.g. on Terraform). */
export async function startProviderProcess(clients: ProviderClient[]): Promise<TestProvider> {
  const child = spawn(process.execPath, [join(__dirname, 'fixtures', 'oidc-provider.cjs'), JSON.stringify(clients)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const issuer = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
    child.once('exit', (code) => reject(new Error(`the OIDC provider process exited with ${code}`)));
  });
  return {
    issuer,
    close: () => new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

/** A loopback page that records what a provider redirected to it (as the CLI's local listener does). */
export async function redirectCatcher(): Promise<{ url: string; next(): Promise<URLSearchParams>; close(): Promise<void> }> {
  let resolve: (p: URLSearchParams) => void = () => undefined;
  let pending = new Promise<URLSearchParams>((r) => (resolve = r));
  const server = createServer((req, res) => {
    res.end('ok');
    resolve(new URL(req.url ?? '/', 'http://x').searchParams);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/oidc/callback`,
    next: async () => {
      const p = await pending;
      pending = new Promise<URLSearchParams>((r) => (resolve = r));
      return p;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Debian's Chromium, or undefined outside CI when it is missing (under CI a missing browser fails). */
export function chromiumPath(): string | undefined {
  const path = process.env.HANGAR_CHROMIUM ?? '/usr/bin/chromium';
  if (existsSync(path)) return path;
  if (process.env.CI) throw new Error(`${path} not found: install Debian's chromium (apt-get install chromium)`);
  return undefined;
}

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
