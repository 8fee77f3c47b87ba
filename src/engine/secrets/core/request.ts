import { randomUUID, type X509Certificate } from 'node:crypto';
import type { z } from 'zod';
import type { SecretsCore } from './core';
import { secondsLeft } from './durations';
import { ipAllowed, rootEntry, SYSTEM_MAX_TTL } from './tokens';
import { AuthSpec, Caller, EngineRoute, EngineType, MountEntry, Operation, SecretsRequest, SecretsResponse, TokenEntry } from './types';
import { HangarError, ValidationError } from '../../http/errors';
import { NO_TRANSACTION } from '../../http/routes';
import type { Db } from '../../storage';
import { externalGroupIds } from '../identity/store';
import { AuditTrail, auditTrail } from '../system/audit-device';
import { refusalFor, requestedWrapTtl, wrapResponse } from '../system/wrapping';

export interface IncomingRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
  readonly ip: string;
  readonly id: string;
  readonly baseUrl: string;
  /** The token from X-Secrets-Token, X-Vault-Token or Bearer. */
  readonly token?: string;
  /** The in-process transport of this process (the local administrator). */
  readonly localAdmin: boolean;
  /** The client certificate the listener verified (mTLS), if any. */
  readonly clientCertificate?: () => X509Certificate | undefined;
}

export interface OutgoingResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly contentType?: string;
  readonly body?: string | Buffer | object;
}

export const permissionDenied = () => new HangarError(403, ['permission denied']);
export const badInput = (...messages: string[]) => new HangarError(400, messages);
/** Vault's 404 for a missing object: no message. */
export const missing = () => new HangarError(404, []);

/** The request path after `/v1/`, decoded segment by segment, and its query. */
function splitUrl(url: string): { path: string; query: Record<string, string> } {
  const q = url.indexOf('?');
  const rawPath = (q < 0 ? url : url.slice(0, q)).replace(/^\/v1\/?/, '');
  let path: string;
  try {
    path = rawPath.split('/').map(decodeURIComponent).join('/');
  } catch {
    throw badInput('request path is not valid percent-encoding');
  }
  const query: Record<string, string> = {};
  if (q >= 0) for (const [k, v] of new URLSearchParams(url.slice(q + 1))) query[k] = v;
  return { path: path.replace(/\/{2,}/g, '/'), query };
}

function operationOf(method: string, query: Record<string, string>): Operation | 'write' {
  switch (method) {
    case 'GET':
    case 'HEAD':
      // Vault parses `list` with Go's strconv.ParseBool: hvac's client.list sends `list=True`.
      return ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(query.list) ? 'list' : 'read';
    case 'LIST':
      return 'list';
    case 'POST':
    case 'PUT':
      return 'write';
    case 'DELETE':
      return 'delete';
    case 'PATCH':
      return 'patch';
    default:
      throw new HangarError(405, [`unsupported method ${method}`]);
  }
}

/** Matches a path against a route pattern; returns the parameters or undefined. */
export function matchPattern(pattern: string, path: string): Record<string, string> | undefined {
  return matchSegments(patternSegments(pattern), segmentsOf(path));
}

const segmentsOf = (path: string): string[] => path.split('/').filter((s) => s !== '');

/** Route patterns split once: every request tries a mount's patterns in turn. Patterns come from code, so this stays small. */
const PATTERNS = new Map<string, readonly string[]>();

function patternSegments(pattern: string): readonly string[] {
  let segments = PATTERNS.get(pattern);
  if (!segments) PATTERNS.set(pattern, (segments = segmentsOf(pattern)));
  return segments;
}

function matchSegments(want: readonly string[], have: readonly string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i];
    if (w.startsWith('*')) {
      // `*x` takes what the segments after it leave (`library/*name/check-in`): at least one.
      const tail = want.slice(i + 1);
      const end = have.length - tail.length;
      if (end <= i) return undefined;
      const after = matchSegments(tail, have.slice(end));
      if (!after) return undefined;
      params[w.slice(1)] = have.slice(i, end).join('/');
      return { ...params, ...after };
    }
    if (i >= have.length) return undefined;
    if (w.startsWith(':')) params[w.slice(1)] = have[i];
    else if (w !== have[i]) return undefined;
  }
  return want.length === have.length ? params : undefined;
}

type RouteMatch =
  | { readonly route: EngineRoute; readonly params: Record<string, string> }
  /** No route serves the request: its 404 or 405, and whether a route of that path is open to callers without a token. */
  | { readonly refusal: HangarError; readonly open: boolean };

/** The route of a mount that serves a relative path and operation, or the 404/405 to answer. */
function matchRoute(type: EngineType, mount: MountEntry, rel: string, op: Operation | 'write'): RouteMatch {
  let pathMatched = false;
  let open = false;
  const have = segmentsOf(rel);
  for (const route of type.routesFor?.(mount) ?? type.routes) {
    const params = matchSegments(patternSegments(route.pattern), have);
    if (!params) continue;
    pathMatched = true;
    open ||= route.unauthenticated === true;
    const handles = op === 'write' ? route.write ?? route.create ?? route.update : route[op];
    if (handles) return { route, params };
  }
  if (pathMatched) return { refusal: new HangarError(405, ['unsupported operation']), open };
  return { refusal: new HangarError(404, [`unsupported path: ${rel || '/'}`]), open: false };
}

/** The route of a mount that serves a relative path and operation; throws its 404/405. */
function findRoute(type: EngineType, mount: MountEntry, rel: string, op: Operation | 'write'): { route: EngineRoute; params: Record<string, string> } {
  const match = matchRoute(type, mount, rel, op);
  if ('refusal' in match) throw match.refusal;
  return match;
}

function parseInput<T>(schema: z.ZodType<T> | undefined, value: unknown, where: string): T {
  if (!schema) return (value ?? {}) as T;
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  throw new ValidationError(
    result.error.issues.map((issue) => {
      const field = issue.path.map(String).join('.') || where;
      const given = issue.path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined), value);
      if (issue.code === 'invalid_type' && given === undefined) return `${field} is required`;
      if (issue.code === 'invalid_type' && /^Invalid input/.test(issue.message)) {
        return `${field}: must be ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`;
      }
      return `${field}: ${issue.message}`;
    }),
  );
}

interface Plan {
  readonly mount: MountEntry;
  readonly type: EngineType;
  readonly route: EngineRoute;
  readonly params: Record<string, string>;
  readonly rel: string;
  readonly operation: Operation;
  readonly caller?: Caller;
  readonly body: unknown;
  readonly query: unknown;
}

/**
 * The secrets API's request pipeline. Phase one: the mount and its route, the caller's token, the
 * ACL (create or update by the target's existence, sudo where required), then validation, so a
 * caller without the capability learns nothing about the input. Phase two: the handler, with the
 * token's use counted and any token or lease the response carries registered in the same
 * transaction. Both phases share one transaction (a write transaction for requests with a body and
 * deletes, unless their route is read-only; read-only for reads) unless the route opens its own
 * transactions or a read turns out to write. Revocations through engines run after the commit.
 */
export async function dispatch(core: SecretsCore, incoming: IncomingRequest): Promise<OutgoingResponse> {
  // Audit devices (sys/audit): a request line once planned, a response (or error) line at the end.
  const trail = await auditTrail(core, incoming);
  if (!trail) return dispatchPlanned(core, incoming);
  try {
    const out = await dispatchPlanned(core, incoming, trail);
    trail.response(out.status, out.body, out.contentType);
    return out;
  } catch (err) {
    trail.failed(err);
    throw err;
  }
}

async function dispatchPlanned(core: SecretsCore, incoming: IncomingRequest, trail?: AuditTrail): Promise<OutgoingResponse> {
  checkVaultHeaders(incoming.headers);
  // A merge patch's `null` removes a key: only PATCH bodies keep them.
  const req = { ...incoming, body: incoming.method === 'PATCH' ? checkMergePatch(incoming) : withoutNulls(incoming.body) };
  const { storage, clock } = core.engine;
  const { path, query } = splitUrl(req.url);
  const op0 = operationOf(req.method, query);
  const withBody = op0 === 'write' || op0 === 'patch';
  const tasks: Array<() => Promise<void>> = [];
  const afterCommit = (task: () => Promise<void>) => void tasks.push(task);
  /** A transaction's body that first drops the after-commit tasks of an earlier attempt, which rolled back. */
  const attempt = <T>(fn: (db: Db) => Promise<T>) => {
    const mark = tasks.length;
    return (db: Db) => {
      tasks.length = mark;
      return fn(db);
    };
  };
  // A handler's own status for a JSON answer (KV v2's 404 that still shows a deleted version's metadata).
  let status = 200;

  let audited = false;
  const makePlan = async (db: Db): Promise<Plan> => {
    const now = clock.now();
    const mount = await core.mounts.resolve(db, path);
    const type = mount && core.engineType(mount.kind, mount.type);
    if (!mount || !type) {
      // An unknown mount has the same message as the other APIs' unknown endpoints (engine/http/api.ts).
      const message = mount ? `no handler for route "${path}": engine type "${mount.type}" is not available` : `No such endpoint: ${req.method} /v1/${path}`;
      const refusal = new HangarError(404, [message]);
      throw await refusalAfterPermission(core, db, req, now, path, op0, { refusal, open: false });
    }
    const rel = relativePath(mount, path);
    const match = matchRoute(type, mount, rel, op0);
    if ('refusal' in match) throw await refusalAfterPermission(core, db, req, now, path, op0, match);
    const { route, params } = match;
    const anonymous = route.unauthenticated && !(route.optionalToken && (req.token || req.localAdmin));
    const caller = anonymous ? undefined : await authenticate(core, db, req, now, refusalFor(path, req.body));
    let operation: Operation = op0 === 'write' ? 'update' : op0;
    if (op0 === 'write') {
      if (route.exists) {
        const probe = requestFor(core, req, db, now, { mount, rel, params, operation: 'update', caller, body: {}, query }, () => undefined);
        operation = (await route.exists(probe)) ? 'update' : 'create';
      } else if (route.create && !route.update && !route.write) {
        operation = 'create';
      }
    }
    if (caller && !route.unauthenticated) {
      const acl = await core.acl(db, caller.entry, caller.root);
      const aclPath = operation === 'list' ? `${path.replace(/\/+$/, '')}/` : path.replace(/\/+$/, '');
      // A write's body also meets the rule's parameter constraints (allowed, denied, required).
      const input = withBody ? req.body ?? {} : undefined;
      if (!acl.allows(aclPath, operation, input) || (route.sudo && !acl.allows(aclPath, 'sudo'))) throw permissionDenied();
    }
    // Writes carry their input in the body; reads, lists and deletes in the query string.
    const parsedQuery = withBody ? withoutList(query) : parseInput(route.query, withoutList(query), 'query');
    const body = withBody ? parseInput(route.body, req.body, 'body') : parsedQuery;
    // Once, though a transaction that meets a conflict runs again.
    if (!audited) trail?.request({ mount, operation, caller, data: withBody ? req.body : withoutList(query) });
    audited = true;
    return { mount, type, route, params, rel, operation, caller, body, query: parsedQuery };
  };

  /** Counts a use of a limited token; the last use revokes it once the request is done. */
  const countUse = async (db: Db, plan: Plan): Promise<Plan> => {
    if (!plan.caller || plan.caller.entry.numUses <= 0) return plan;
    const left = await core.tokens.use(db, plan.caller.entry);
    if (left < 0) throw permissionDenied();
    const idHash = plan.caller.entry.idHash;
    if (left === 0) afterCommit(() => revokeAfterLastUse(core, idHash));
    return { ...plan, caller: { ...plan.caller, entry: { ...plan.caller.entry, numUses: left } } };
  };

  const run = async (db: Db, plan: Plan): Promise<Rendered | undefined> => {
    const now = clock.now();
    const res = listedOrMissing(plan, await handlerFor(plan.route, plan.operation)(requestFor(core, req, db, now, plan, afterCommit)), wrapping);
    status = res?.status ?? status;
    return res && render(core, db, now, req, plan, res);
  };

  const limited = (plan: Plan) => !!plan.caller && plan.caller.entry.numUses > 0;
  // A route may be read-only for some operations only (transit's encrypt: an `update` writes nothing, a `create` makes the key);
  // a wrapped response writes its wrapping token.
  const wrapping = requestedWrapTtl(req.headers) !== undefined;
  const readOnly = ({ route, operation }: Plan) =>
    !wrapping && (route.readOnly === true || (Array.isArray(route.readOnly) && route.readOnly.includes(operation)));
  const own = (plan: Plan) => plan.route.ownTransactions?.includes(plan.operation) === true;
  // A request that carries a body (POST, PUT, PATCH) or deletes usually writes: it is planned and
  // handled in one write transaction, unless its route (judged from the mount table as last read) is
  // read-only, which never takes a write lock (transit's encrypt), or opens its own transactions
  // (a login), whose planning then takes none either. A read-only route of an unlimited token runs
  // in the planning transaction itself. Only the rest (a read that writes, a limited token's read,
  // an own-transaction route, a wrong guess) takes a second transaction.
  const writing = (withBody || op0 === 'delete') && !writesElsewhereLikely(core, path, op0);
  const first = await storage.tx(
    attempt(async (db) => {
      const plan = await makePlan(db);
      if (own(plan)) return { plan, done: false, result: undefined };
      if (writing) return { plan, done: true, result: await run(db, await countUse(db, plan)) };
      if (readOnly(plan) && !limited(plan)) return { plan, done: true, result: await run(db, plan) };
      return { plan, done: false, result: undefined };
    }),
    { readOnly: !writing },
  );
  let result = first.result;
  if (!first.done && own(first.plan)) {
    // Only a limited token needs a write transaction to count its use before the handler runs.
    const plan = limited(first.plan) ? await storage.tx(attempt((db) => countUse(db, first.plan))) : first.plan;
    const handled = await handlerFor(plan.route, plan.operation)(requestFor(core, req, NO_TRANSACTION, clock.now(), plan, afterCommit));
    const res = listedOrMissing(plan, handled, wrapping);
    status = res?.status ?? status;
    // A response that stores nothing (no writes, lease, token or wrapping) renders without a transaction.
    const stores = res && (res.writes || res.lease || res.auth || res.issued || wrapping);
    const renderIn = (db: Db) => render(core, db, clock.now(), req, plan, res!);
    result = res && (stores ? await storage.tx(attempt(renderIn)) : await renderIn(NO_TRANSACTION));
  } else if (!first.done) {
    result = await storage.tx(attempt(async (db) => run(db, await countUse(db, first.plan))), {
      readOnly: readOnly(first.plan) && !limited(first.plan),
    });
  }
  for (const task of tasks) await task();

  if (!result) return { status: 204, headers: {} };
  if ('raw' in result && result.raw) {
    const raw = result.raw as { contentType: string; body: string | Buffer };
    return { status: (result.status as number) ?? 200, headers: { ...(result.headers as object) }, contentType: raw.contentType, body: raw.body };
  }
  return { status, headers: {}, contentType: 'application/json; charset=utf-8', body: result };
}

/** A request path relative to its mount, without slashes at either end. */
const relativePath = (mount: MountEntry, path: string): string => path.slice(mount.path.length).replace(/^\/+|\/+$/g, '');

/**
 * Whether a request's route is read-only for some operation or opens its own transactions, from
 * the mount table as last read (no storage access): a guess that only picks the planning
 * transaction's kind; the plan decides.
 */
function writesElsewhereLikely(core: SecretsCore, path: string, op: Operation | 'write'): boolean {
  const mount = core.mounts.resolveLastRead(path);
  const type = mount && core.engineType(mount.kind, mount.type);
  if (!mount || !type) return false;
  try {
    const { readOnly, ownTransactions } = findRoute(type, mount, relativePath(mount, path), op).route;
    return readOnly === true || (Array.isArray(readOnly) && readOnly.length > 0) || (ownTransactions?.length ?? 0) > 0;
  } catch {
    return false;
  }
}

type Rendered = Record<string, unknown> | SecretsResponse;

const header = (headers: IncomingRequest['headers'], name: string): string | undefined => {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/**
 * Vault's request headers Hangar cannot honour are refused before anything runs, so a client never
 * mistakes an unwrapped answer for a wrapped one or another namespace's data for its own.
 * (`X-Vault-Request`, which the Go client always sends, needs nothing.)
 */
function checkVaultHeaders(headers: IncomingRequest['headers']): void {
  const ns = header(headers, 'x-vault-namespace')?.replace(/^\/+|\/+$/g, '');
  if (ns && ns !== 'root') throw badInput(`namespaces are not supported by Hangar: only the root namespace exists (X-Vault-Namespace: "${ns}")`);
}

/** PATCH takes only `application/merge-patch+json` (Vault's 415 otherwise); its body is kept as sent. */
function checkMergePatch(req: IncomingRequest): unknown {
  const type = header(req.headers, 'content-type')?.split(';')[0].trim().toLowerCase();
  if (type !== 'application/merge-patch+json') {
    throw new HangarError(415, [`PATCH requires Content-Type of application/merge-patch+json, provided ${type ?? 'none'}`]);
  }
  return req.body;
}

/**
 * JSON `null` means "not given" (Vault's clients send `"config": null`, `"increment": null` for
 * unset struct fields): dropped from objects, at any depth, before the ACL and validation see them.
 * Arrays are kept as they are. Iterative, not recursive: however deep a body nests, no stack overflows.
 */
export function withoutNulls(value: unknown): unknown {
  const isObject = (v: unknown): v is object => v !== null && typeof v === 'object' && !Array.isArray(v) && !Buffer.isBuffer(v);
  if (!isObject(value)) return value;
  const root: Record<string, unknown> = {};
  const pending: Array<[object, Record<string, unknown>]> = [[value, root]];
  while (pending.length > 0) {
    const [from, to] = pending.pop()!;
    for (const [k, v] of Object.entries(from)) {
      if (v === null) continue;
      let copy = v;
      if (isObject(v)) pending.push([v, (copy = {})]);
      // defineProperty: a key named `__proto__` stays a plain key.
      Object.defineProperty(to, k, { value: copy, enumerable: true, writable: true, configurable: true });
    }
  }
  return root;
}

function withoutList(query: Record<string, string>): Record<string, string> {
  const { list: _list, ...rest } = query;
  return rest;
}

/**
 * A list's answer as Vault's HTTP layer judges it (sdk/logical RespondErrorCommon), once for every
 * engine: no answer, no data, or empty `keys` is a 404 without messages; data without `keys`
 * passes as it is. A wrapped list is exempt (its answer goes into the wrapping token).
 */
function listedOrMissing(plan: Pick<Plan, 'operation'>, res: SecretsResponse | undefined, wrapping: boolean): SecretsResponse | undefined {
  if (plan.operation !== 'list' || wrapping || res?.raw) return res;
  const data = res?.data;
  if (!data || Object.keys(data).length === 0) {
    if (res?.warnings?.length) return res;
    throw missing();
  }
  const keys = data.keys;
  if (keys === undefined || keys === null) return res;
  if (Array.isArray(keys) && keys.length === 0) throw missing();
  return res;
}

function handlerFor(route: EngineRoute, op: Operation) {
  const h = op === 'create' ? route.create ?? route.write : op === 'update' ? route.update ?? route.write : route[op];
  if (!h) throw new HangarError(405, ['unsupported operation']);
  return h;
}

function requestFor(
  core: SecretsCore,
  req: IncomingRequest,
  db: Db,
  now: number,
  plan: Pick<Plan, 'mount' | 'rel' | 'params' | 'operation' | 'caller' | 'body' | 'query'>,
  afterCommit: (task: () => Promise<void>) => void,
): SecretsRequest {
  return {
    operation: plan.operation,
    method: req.method,
    path: plan.rel,
    params: plan.params,
    body: plan.body as Record<string, unknown>,
    rawBody: req.body,
    query: plan.query as Record<string, unknown>,
    mount: plan.mount,
    store: core.store(db, plan.mount),
    db,
    now,
    core,
    engine: core.engine,
    caller: plan.caller,
    clientIp: req.ip,
    requestId: req.id,
    baseUrl: req.baseUrl,
    headers: req.headers,
    clientCertificate: req.clientCertificate,
    afterCommit,
  };
}

async function authenticate(core: SecretsCore, db: Db, req: IncomingRequest, now: number, refusal = permissionDenied): Promise<Caller> {
  if (req.localAdmin) return { token: '', entry: rootEntry(undefined, now), root: true };
  const token = req.token;
  const found = token ? await core.tokenEntry(db, token, now) : undefined;
  if (!token || !found || !ipAllowed(req.ip, found.entry.boundCidrs)) throw refusal();
  return { token, ...found };
}

/**
 * The 404 or 405 of a request no route serves, once the caller has shown a token whose policies
 * allow the operation on the path: Vault checks the token and the ACL before it routes, so a caller
 * without them gets 403 and learns nothing of which mounts, paths and operations exist. Paths open
 * to all (sys/health, a login) answer their 405 to anyone, as there.
 */
async function refusalAfterPermission(
  core: SecretsCore,
  db: Db,
  req: IncomingRequest,
  now: number,
  path: string,
  op: Operation | 'write',
  match: { readonly refusal: HangarError; readonly open: boolean },
): Promise<HangarError> {
  if (match.open) return match.refusal;
  const caller = await authenticate(core, db, req, now);
  const acl = await core.acl(db, caller.entry, caller.root);
  const aclPath = op === 'list' ? `${path.replace(/\/+$/, '')}/` : path.replace(/\/+$/, '');
  // A write: either capability (no route tells whether it would create or update).
  const allowed = op === 'write' ? acl.allows(aclPath, 'update') || acl.allows(aclPath, 'create') : acl.allows(aclPath, op);
  return allowed ? match.refusal : permissionDenied();
}

async function revokeAfterLastUse(core: SecretsCore, idHash: string): Promise<void> {
  const { storage, clock } = core.engine;
  const leases = await storage.tx((db) => core.revokeToken(db, idHash, clock.now()));
  await core.revokeLeases(leases);
}

/** The response envelope; stores the response's writes, registers its lease and issues its token. */
async function render(
  core: SecretsCore,
  db: Db,
  now: number,
  req: IncomingRequest,
  plan: Plan,
  res: SecretsResponse,
): Promise<Rendered> {
  if (res.writes) await res.writes(core.store(db, plan.mount));
  if (res.raw) return res;
  const envelope: Record<string, unknown> = {
    request_id: req.id || randomUUID(),
    lease_id: '',
    renewable: false,
    lease_duration: 0,
    data: res.data ?? null,
    wrap_info: null,
    warnings: res.warnings?.length ? res.warnings : null,
    auth: null,
    mount_type: plan.mount.type,
  };
  if (res.topLevel && res.data) for (const [k, v] of Object.entries(res.data)) if (!(k in envelope)) envelope[k] = v;
  if (res.lease) {
    const tokenHash = plan.caller && !plan.caller.root ? plan.caller.entry.type === 'batch' ? plan.caller.entry.parentHash : plan.caller.entry.idHash : undefined;
    const lease = await core.leases.register(db, { mount: plan.mount, path: plan.rel, tokenHash, spec: res.lease, now });
    Object.assign(envelope, { lease_id: lease.id, lease_duration: lease.ttl, renewable: lease.renewable });
  }
  if (res.leaseDuration !== undefined) envelope.lease_duration = res.leaseDuration;
  if (res.renewed) Object.assign(envelope, { lease_id: res.renewed.id, lease_duration: res.renewed.ttl, renewable: res.renewed.renewable });
  const issued = res.issued ?? (res.auth ? await issueLoginToken(core, db, now, plan.mount, plan.rel, res.auth) : undefined);
  if (issued) envelope.auth = authObject(issued.token, issued.entry, now, await core.identityPolicies(db, issued.entry));
  // X-Vault-Wrap-TTL: a successful JSON answer goes into a wrapping token's cubbyhole instead.
  const wrapTtl = (res.status ?? 200) === 200 ? requestedWrapTtl(req.headers) : undefined;
  if (!wrapTtl) return envelope;
  const path = `${plan.mount.path}${plan.rel}`;
  return wrapResponse(core, db, now, { ttl: wrapTtl, path, response: JSON.stringify(envelope), wrappedAccessor: issued?.entry.accessor });
}

/** The orphan token of a login, under the auth mount's TTL tuning. */
export async function issueLoginToken(core: SecretsCore, db: Db, now: number, mount: MountEntry, rel: string, auth: AuthSpec) {
  const mountMax = mount.maxLeaseTtl || SYSTEM_MAX_TTL;
  const maxTtl = auth.maxTtl && auth.maxTtl > 0 ? Math.min(auth.maxTtl, mountMax) : mountMax;
  const ttl = auth.ttl && auth.ttl > 0 ? auth.ttl : mount.defaultLeaseTtl || SYSTEM_MAX_TTL;
  return core.tokens.create(
    db,
    {
      policies: normalizePolicies(auth.policies, auth.noDefaultPolicy === true),
      meta: auth.metadata,
      displayName: auth.displayName,
      numUses: auth.numUses,
      ttl: Math.min(ttl, maxTtl),
      maxTtl,
      explicitMaxTtl: auth.explicitMaxTtl,
      period: auth.period,
      renewable: auth.renewable,
      type: loginTokenType(mount, auth),
      path: `${mount.path}${rel}`,
      boundCidrs: auth.boundCidrs,
      role: auth.role,
      groupIds: await externalGroupIds(core, db, mount.accessor, auth.groups ?? []),
    },
    now,
  );
}

/** The mount's tuned `token_type` decides, or is the default when it starts with `default-` (Vault). */
function loginTokenType(mount: MountEntry, auth: AuthSpec): 'service' | 'batch' {
  const tuned = mount.tune?.token_type ?? 'default-service';
  if (tuned === 'service' || tuned === 'batch') return tuned;
  if (auth.type === 'service' || auth.type === 'batch') return auth.type;
  return tuned === 'default-batch' ? 'batch' : 'service';
}

/** Sorted, de-duplicated, lowercased, with `default` unless refused (never with `root`). */
export function normalizePolicies(policies: readonly string[], noDefault: boolean): string[] {
  const set = new Set(policies.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''));
  if (!noDefault && !set.has('root')) set.add('default');
  return [...set].sort();
}

/** Vault's `auth` object of a response. */
export function authObject(token: string, entry: TokenEntry, now: number, identityPolicies: readonly string[] = []): Record<string, unknown> {
  const ttl = entry.expireAt ? secondsLeft(entry.expireAt, now) : 0;
  return {
    client_token: token,
    accessor: entry.accessor,
    // As Vault: `policies` is the union, `token_policies` and `identity_policies` its two sources.
    policies: [...new Set([...entry.policies, ...identityPolicies])].sort(),
    token_policies: entry.policies,
    identity_policies: identityPolicies.length ? identityPolicies : null,
    metadata: Object.keys(entry.meta).length ? entry.meta : null,
    lease_duration: ttl,
    renewable: entry.renewable,
    entity_id: '',
    token_type: entry.type,
    orphan: entry.orphan,
    mfa_requirement: null,
    num_uses: Math.max(0, entry.numUses),
  };
}
