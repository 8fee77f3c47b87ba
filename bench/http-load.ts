import { Pool } from 'undici';
import { Engine, EngineOptions } from '../src/engine/engine';
import { ApiName } from '../src/engine/http/api';
import { listen } from '../src/engine/http/server';
import { tempDir } from '../test/helpers/storage';

/** Closed-loop load for the HTTP benchmarks: N concurrent loops for a fixed time. */

export interface LoadResult {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly count: number;
}

/** Runs `once` from `concurrency` loops for `seconds`; returns requests per second and p50/p99 in ms. */
export async function load(seconds: number, concurrency: number, once: () => Promise<void>): Promise<LoadResult> {
  const times: number[] = [];
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        const start = process.hrtime.bigint();
        await once();
        times.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
    }),
  );
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))];
  return { rps: times.length / seconds, p50: at(50), p99: at(99), count: times.length };
}

/** One result line, with its share of the baseline's rate. */
export function line(name: string, r: { rps: number; p50: number; p99: number }, baseline?: { rps: number }): void {
  const ratio = baseline ? `  ${((r.rps / baseline.rps) * 100).toFixed(1)}% of baseline` : '';
  console.log(`${name.padEnd(40)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2).padStart(6)} ms  p99 ${r.p99.toFixed(2).padStart(6)} ms${ratio}`);
}

/** A JSON client of the secrets API (`/v1/<path>` with a token) over one connection pool. */
export interface SecretsCaller {
  /** The parsed response body (undefined when empty); throws on a status of 300 or more. */
  call(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<any>;
  close(): Promise<void>;
}

export function secretsCaller(url: string, token: string, connections: number): SecretsCaller {
  const pool = new Pool(url, { connections });
  return {
    async call(method, path, body) {
      const res = await pool.request({
        method,
        path: `/v1/${path}`,
        headers: { 'content-type': 'application/json', 'x-vault-token': token },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.body.text();
      if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
      return text ? JSON.parse(text) : undefined;
    },
    close: () => pool.close(),
  };
}

/** An engine in this process (SQLite in a temporary directory, `--dev` root token) serving on loopback. */
export async function inProcessEngine(
  rootToken: string,
  options: Partial<EngineOptions> = {},
): Promise<{ engine: Engine; urls: Record<ApiName, string> }> {
  const dataDir = tempDir();
  const engine = await Engine.open({ storage: { kind: 'sqlite', dataDir }, dataDir, devRootToken: rootToken, ...options });
  const urls = await listen(engine, { registry: '127.0.0.1:0', secrets: '127.0.0.1:0', catalog: '127.0.0.1:0' });
  return { engine, urls };
}

/** Runs a benchmark's main and exits (0, or 1 after printing the error). */
export function runBenchmark(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
