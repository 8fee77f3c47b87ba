import { createHash } from 'node:crypto';
import http from 'node:http';
import fc from 'fast-check';
import { request } from 'undici';
import type { z } from 'zod';
import { BodyShape, bodyArb, encodeSegment, headerArb, queryArb, segmentArb } from './arbitraries';
import { ApiName } from '../../src/engine/http/api';
import { Route } from '../../src/engine/http/routes';
import { openApiDocument, openApiPath } from '../../src/engine/openapi';
import { secretsCore } from '../../src/engine/secrets/service';
import { captureLog, CapturedLog } from '../helpers/log-capture';
import { ROOT_TOKEN, startTestServer, TestServer } from '../helpers/server';

/** Runs per route: 3 in `npm test`, 100 in `npm run fuzz` (HANGAR_FUZZ_LONG), or HANGAR_FUZZ_RUNS=N. */
export const FUZZ_RUNS = runsFromEnvironment(process.env);
const LONG = !!(process.env.HANGAR_FUZZ_RUNS || process.env.HANGAR_FUZZ_LONG);

function runsFromEnvironment(env: NodeJS.ProcessEnv): number {
  const text = env.HANGAR_FUZZ_RUNS ?? (env.HANGAR_FUZZ_LONG ? '100' : '3');
  if (!/^[1-9]\d{0,6}$/.test(text)) throw new Error(`HANGAR_FUZZ_RUNS: a positive number of requests per route, got "${text}"`);
  return Number(text);
}
/** The time a test may take: about 20 s per run of every route, at least 10 minutes. */
export const FUZZ_TIMEOUT_MS = Math.max(600_000, FUZZ_RUNS * 20_000);
/** A fixed seed in CI (reproducible), a random one in long runs unless HANGAR_FUZZ_SEED is set. */
export const FUZZ_SEED = process.env.HANGAR_FUZZ_SEED ? Number(process.env.HANGAR_FUZZ_SEED) : LONG ? undefined : 18;

/**
 * 5xx answers the public services give themselves, so clients expect them, each a decision recorded
 * in docs/compatibility.md. Every other 5xx is a bug.
 */
export const EXPECTED_5XX: ReadonlyArray<{ api: ApiName; status: number; text: RegExp; why: string }> = [
  { api: 'catalog', status: 500, text: /^No path to datacenter/, why: 'Consul answers 500 for an unknown ?dc= (structs.ErrNoDCPath)' },
  { api: 'registry', status: 503, text: /maintenance/i, why: 'the admin maintenance switch (fuzzed too) makes the registry answer 503, as Vagrant Cloud does' },
];

/** One endpoint to fuzz: how to build its URL, which methods, and the schemas of its input. */
export interface FuzzTarget {
  readonly label: string;
  readonly methods: readonly string[];
  /** The operations of the API's OpenAPI document it covers (`get /v1/kv/{path}`). */
  readonly operations: readonly string[];
  /** The URL path (already encoded). */
  readonly path: fc.Arbitrary<string>;
  readonly query?: z.ZodType;
  readonly body?: z.ZodType;
  /** Methods whose input is the query string rather than the body. */
  readonly queryMethods?: readonly string[];
}

export interface AuthMode {
  readonly name: string;
  readonly headers: Record<string, string>;
}

export interface FuzzServer {
  readonly server: TestServer;
  readonly log: CapturedLog;
}

/** One server per fuzzed API, SQLite, with its log kept for the failure messages (stack traces). */
export async function startFuzzServer(): Promise<FuzzServer> {
  const log = captureLog('warn');
  const server = await startTestServer('sqlite', { logger: log.logger });
  // The secrets core creates its keyring and built-in mounts on first use (the catalog's ACL uses it
  // too): done before the first digest, so that lazy start-up does not count as a change.
  await secretsCore(server.engine);
  return { server, log };
}

/** The URL path of a Fastify route path (`/api/v1/box/:username/:name`, `/v1/kv/*`), segments fuzzed. */
export function fastifyPathArb(path: string): fc.Arbitrary<string> {
  const parts = path.split('/').map((part) => {
    if (part === '*') return fc.array(fc.tuple(segmentArb, fc.boolean()), { minLength: 0, maxLength: 3 }).map((xs) => xs.map(([s, raw]) => encodeSegment(s, raw)).join('/'));
    if (part.startsWith(':')) return fc.tuple(segmentArb, fc.boolean()).map(([s, raw]) => encodeSegment(s, raw));
    return fc.constant(part);
  });
  return fc.tuple(...parts).map((xs) => xs.join('/'));
}

/** The targets of one API's route table: every route, every method it has, and HEAD where it has GET (as Fastify serves it). */
export function routeTargets<Actor, Permission>(routes: ReadonlyArray<Route<Actor, Permission>>): FuzzTarget[] {
  return routes.map((r) => {
    const declared = Array.isArray(r.method) ? (r.method as string[]) : [r.method as string];
    const methods = declared.includes('GET') && !declared.includes('HEAD') ? [...declared, 'HEAD'] : declared;
    const operations = declared.map((m) => `${m.toLowerCase()} ${openApiPath(r.path)}`);
    return { label: `${methods.join(',')} ${r.path}`, methods, operations, path: fastifyPathArb(r.path), query: r.query, body: r.body };
  });
}

/** The operations of the API's OpenAPI document (docs/openapi) that no target covers. */
export function uncoveredOperations(api: ApiName, targets: readonly FuzzTarget[]): string[] {
  const doc = openApiDocument(api) as { paths: Record<string, Record<string, unknown>> };
  const covered = new Set(targets.flatMap((t) => t.operations));
  return Object.entries(doc.paths)
    .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`))
    .filter((op) => !covered.has(op));
}

/**
 * A digest per table of the whole database: a failed request must leave every table as it was.
 * `ignored` names tables a failed request may touch by design (each with its reason at the caller).
 */
export async function tableDigests(server: TestServer, ignored: ReadonlySet<string> = new Set()): Promise<Map<string, string>> {
  return server.engine.storage.tx(
    async (db) => {
      const tables = await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
      const out = new Map<string, string>();
      for (const { name } of tables) {
        if (ignored.has(name)) continue;
        // Rows sorted by their text, not by rowid: some tables (FTS5 shadow tables) have none.
        const rows = (await db.all(`SELECT * FROM "${name}"`)).map((row) =>
          JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v)),
        );
        const hash = createHash('sha256');
        for (const row of rows.sort()) hash.update(row);
        out.set(name, hash.digest('hex'));
      }
      return out;
    },
    { readOnly: true },
  );
}

function changedTables(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...new Set([...before.keys(), ...after.keys()])].filter((t) => before.get(t) !== after.get(t));
}

interface Sent {
  readonly method: string;
  readonly url: string;
  readonly auth: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
}

export interface FuzzOptions {
  readonly api: ApiName;
  readonly auth: readonly AuthMode[];
  /** Tables a failed request may change by design. */
  readonly ignoredTables?: ReadonlySet<string>;
  /** Last word on a generated request (drop a blocking query's index, say); may return undefined to skip it. */
  readonly adjust?: (method: string, query: Record<string, string>) => Record<string, string> | undefined;
  /** Requests per target (FUZZ_RUNS unless given). */
  readonly runs?: number;
  /** Runs after every request's checks (undo a switch that would stop the rest of the run, say). */
  readonly afterEach?: () => Promise<void>;
}

/** The standard auth modes: the root token (handlers are reached), none, and a token that does not exist. */
export const AUTH_MODES = (header: string): AuthMode[] => [
  { name: 'root', headers: { [header]: header === 'authorization' ? `Bearer ${ROOT_TOKEN}` : ROOT_TOKEN } },
  { name: 'anonymous', headers: {} },
  { name: 'bogus', headers: { [header]: "nope' OR 1=1 --" } },
];

/**
 * Fuzzes each target with FUZZ_RUNS generated requests. Every failing route is reported, not
 * only the first, so that one run shows them all.
 */
export async function fuzzTargets(fz: FuzzServer, targets: readonly FuzzTarget[], options: FuzzOptions): Promise<FuzzResult> {
  const failures: string[] = [];
  const statuses: Record<string, number> = {};
  const expected5xx: Record<string, number> = {};
  let requests = 0;
  const started = Date.now();
  const base = fz.server.urls[options.api];
  for (const target of targets) {
    const property = fc.asyncProperty(
      fc.constantFrom(...target.methods),
      target.path,
      queryArb(target.query),
      bodyArb(target.body),
      headerArb,
      fc.constantFrom(...options.auth),
      async (method, path, query0, body, extraHeaders, auth) => {
        const query = options.adjust ? options.adjust(method, query0) : query0;
        if (!query) return;
        const qs = new URLSearchParams(query).toString();
        const headers: Record<string, string> = { ...extraHeaders, ...auth.headers };
        const payload = encodeBody(method, target, body, headers);
        const url = `${path}${qs ? `${path.includes('?') ? '&' : '?'}${qs}` : ''}`;
        const sent: Sent = { method, url, auth: auth.name, headers: extraHeaders, body: payload && summarize(payload) };
        const before = await tableDigests(fz.server, options.ignoredTables);
        const logMark = fz.log.records().length;
        let status: number;
        let text: string;
        requests++;
        try {
          if (method === 'HEAD') {
            status = await head(`${base}${url}`, headers, sent);
            // A HEAD answer has no text: a 5xx is told apart (EXPECTED_5XX) by the GET of the same request.
            text = status >= 500 ? await (await request(`${base}${url}`, { headers, headersTimeout: 15_000 })).body.text() : '';
          } else {
            const res = await request(`${base}${url}`, { method: method as 'GET', headers, body: payload, headersTimeout: 15_000, bodyTimeout: 15_000 });
            status = res.statusCode;
            text = await res.body.text();
          }
        } catch (err) {
          if (err instanceof HeadWithBody) throw err;
          // No answer in time is a failure; otherwise the client refused to send it (an invalid header)
          // or the server closed the connection (a body over the limit is refused before it is read).
          const code = (err as { code?: string }).code ?? (err as Error).name;
          if (/timeout/i.test(code)) throw new Error(`no answer in 15 s\nrequest: ${JSON.stringify(sent)}`);
          await assertAlive(fz, options.api, err as Error, sent);
          statuses[code] = (statuses[code] ?? 0) + 1;
          return;
        }
        statuses[`${Math.floor(status / 100)}xx`] = (statuses[`${Math.floor(status / 100)}xx`] ?? 0) + 1;
        // A HEAD answer's text is not read (it has none): its 5xx are told apart by a GET of the same request.
        const expected = status >= 500 && EXPECTED_5XX.find((e) => e.api === options.api && e.status === status && e.text.test(text));
        if (expected) expected5xx[expected.why] = (expected5xx[expected.why] ?? 0) + 1;
        if (status >= 500 && !expected) {
          const logged = fz.log
            .records()
            .slice(logMark)
            .map((r) => JSON.stringify(r.err ?? r.msg).slice(0, 1500));
          throw new Error(`${status} ${text.slice(0, 300)}\nrequest: ${JSON.stringify(sent)}\nlog: ${logged.join('\n')}`);
        }
        if (status >= 400) {
          const changed = changedTables(before, await tableDigests(fz.server, options.ignoredTables));
          if (changed.length) throw new Error(`failed request (${status} ${text.slice(0, 200)}) changed tables ${changed.join(', ')}\nrequest: ${JSON.stringify(sent)}`);
        }
        await options.afterEach?.();
      },
    );
    const targetStarted = Date.now();
    // No shrinking in short runs: each shrink step is a request, and the first counterexample is enough there.
    const details = await fc.check(property, { numRuns: options.runs ?? FUZZ_RUNS, seed: FUZZ_SEED, endOnFailure: !LONG });
    if (process.env.HANGAR_FUZZ_TRACE) console.log(`${options.api} ${target.label}: ${Date.now() - targetStarted} ms`);
    if (details.failed) failures.push(`${options.api} ${target.label} (seed ${details.seed}, path ${details.counterexamplePath}): ${(details.errorInstance as Error)?.message ?? String(details.errorInstance)}`);
  }
  const result = { failures, statuses, requests, expected5xx, ms: Date.now() - started };
  if (LONG) console.log(summary(options.api, result));
  return result;
}

/** One line of figures: requests, answers by class, the expected 5xx by reason, failures, duration. */
export function summary(label: string, r: FuzzResult): string {
  const unexpected = r.failures.filter((f) => /: 5\d\d /.test(f)).length;
  return `fuzz ${label}: ${r.requests} requests in ${(r.ms / 1000).toFixed(0)} s, answers ${JSON.stringify(r.statuses)}, expected 5xx ${JSON.stringify(r.expected5xx)}, routes with an unexpected 5xx ${unexpected}, failed routes ${r.failures.length}`;
}

export interface FuzzResult {
  /** One line per failed property, with its counterexample and seed. */
  readonly failures: string[];
  /** Answers by class (`2xx`, `4xx`, ...) and refused sends by error code: a run that never reaches a handler proves little. */
  readonly statuses: Record<string, number>;
  /** Requests sent (shrinking included). */
  readonly requests: number;
  /** The 5xx of EXPECTED_5XX, by their reason. */
  readonly expected5xx: Record<string, number>;
  readonly ms: number;
}

function encodeBody(method: string, target: FuzzTarget, body: BodyShape, headers: Record<string, string>): string | Buffer | undefined {
  if (method === 'GET' || method === 'HEAD' || (target.queryMethods ?? []).includes(method)) return undefined;
  if (body.kind === 'raw') {
    if (body.contentType) headers['content-type'] = body.contentType;
    return body.bytes;
  }
  if (body.value === undefined) return undefined;
  headers['content-type'] ??= 'application/json';
  return JSON.stringify(body.value);
}

function summarize(payload: string | Buffer): string {
  const text = typeof payload === 'string' ? payload : payload.toString('latin1');
  return text.length > 400 ? `${text.slice(0, 400)}... (${text.length} bytes)` : text;
}

async function assertAlive(fz: FuzzServer, api: ApiName, err: Error, sent: Sent): Promise<void> {
  const probe = { registry: '/api/v1/search', secrets: '/v1/sys/health', catalog: '/v1/status/leader' }[api];
  const res = await request(`${fz.server.urls[api]}${probe}`).catch((e: Error) => e);
  if (res instanceof Error) throw new Error(`server does not answer after ${JSON.stringify(sent)} (${err.message}): ${res.message}`);
  await res.body.text();
}

/** A HEAD answer that carries a body: the client reads it as the start of the next response. */
class HeadWithBody extends Error {}

/**
 * A HEAD request through node:http, whose parser (unlike undici's, which drops the connection) fails
 * on bytes after a HEAD answer's headers: the way a body sent with one shows.
 */
function head(url: string, headers: Record<string, string>, sent: Sent): Promise<number> {
  return new Promise((resolve, reject) => {
    let status: number | undefined;
    const req = http.request(url, { method: 'HEAD', headers, agent: false, timeout: 15_000 }, (res) => {
      status = res.statusCode!;
      res.resume();
      // Bytes after the headers show up on the socket once the answer is complete.
      res.on('end', () => setImmediate(() => resolve(status!)));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'UND_ERR_HEADERS_TIMEOUT' })));
    // The parser's error may come before the answer it follows is handed out: judged a turn later.
    req.on('error', (err: Error & { code?: string }) =>
      setImmediate(() => {
        if (status !== undefined && err.code?.startsWith('HPE_')) reject(new HeadWithBody(`HEAD answered ${status} with a body (${err.code})\nrequest: ${JSON.stringify(sent)}`));
        else reject(err);
      }),
    );
    req.end();
  });
}
