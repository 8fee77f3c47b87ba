import { createHmac } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { HangarError } from '../../http/errors';
import { LeakWatch, leakWatch, recordSecret, secretKindOfField } from '../../leak-watch';
import type { Db } from '../../storage';
import type { SecretsCore } from '../core/core';
import { MountStore } from '../core/store';
import type { Caller, MountEntry, Operation, TokenEntry } from '../core/types';

/** An enabled audit device as stored (sealed by the barrier, salt included). */
export interface AuditDeviceConfig {
  /** With a trailing slash, as Vault shows it: `file/`. */
  readonly path: string;
  readonly type: 'file';
  readonly description: string;
  readonly options: Readonly<Record<string, string>>;
  readonly local: boolean;
  /** The HMAC key of this device (base64), never shown. */
  readonly salt: string;
}

/** Devices live in the sealed store beside the mounts' data, one entry per device. */
const PREFIX = 'core/audit/';
/** How long a server trusts its list of devices before reading it again (another server may have changed it). */
const REFRESH_MS = 1000;

const storeOf = (core: SecretsCore, db: Db) => new MountStore(db, core.barrier, PREFIX);
const keyOf = (path: string) => encodeURIComponent(path);

export async function readDevices(core: SecretsCore, db: Db): Promise<AuditDeviceConfig[]> {
  const store = storeOf(core, db);
  const devices: AuditDeviceConfig[] = [];
  for (const key of await store.list('')) {
    const device = await store.get<AuditDeviceConfig>(key);
    if (device) devices.push(device);
  }
  return devices.sort((a, b) => a.path.localeCompare(b.path));
}

export async function readDevice(core: SecretsCore, db: Db, path: string): Promise<AuditDeviceConfig | undefined> {
  return storeOf(core, db).get<AuditDeviceConfig>(keyOf(path));
}

export async function writeDevice(core: SecretsCore, db: Db, device: AuditDeviceConfig): Promise<void> {
  await storeOf(core, db).put(keyOf(device.path), device);
}

export async function deleteDevice(core: SecretsCore, db: Db, path: string): Promise<boolean> {
  return storeOf(core, db).delete(keyOf(path));
}

/** Go's strconv.ParseBool, which Vault uses for the devices' options. */
export function parseBoolOption(options: Readonly<Record<string, string>>, name: string, fallback: boolean): boolean {
  const v = options[name];
  if (v === undefined || v === '') return fallback;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  throw new HangarError(400, [`options.${name}: must be a boolean, got "${v}"`]);
}

/** The file mode of `options.mode` (octal, Vault's default 0600). */
export function fileModeOption(options: Readonly<Record<string, string>>): number {
  const v = options.mode ?? '0600';
  if (!/^0?[0-7]{3}$/.test(v)) throw new HangarError(400, [`options.mode: must be an octal file mode such as 0600, got "${v}"`]);
  return parseInt(v, 8);
}

/** A device ready to log: its options parsed once, its key loaded. */
export class AuditDevice {
  readonly logRaw: boolean;
  readonly hmacAccessor: boolean;
  private readonly key: Buffer;
  private readonly mode: number;

  constructor(readonly config: AuditDeviceConfig) {
    this.logRaw = parseBoolOption(config.options, 'log_raw', false);
    this.hmacAccessor = parseBoolOption(config.options, 'hmac_accessor', true);
    this.mode = fileModeOption(config.options);
    this.key = Buffer.from(config.salt, 'base64');
  }

  /** Vault's identified HMAC: `hmac-sha256:<hex>` of the value under this device's salt. */
  hash(value: string): string {
    return `hmac-sha256:${createHmac('sha256', this.key).update(value).digest('hex')}`;
  }

  /**
   * Appends one line. The file is opened for each line (append mode), so a log rotated away by
   * logrotate is re-created without a signal; a failure throws, and the caller decides.
   */
  write(entry: object): void {
    const line = `${this.config.options.prefix ?? ''}${JSON.stringify(entry)}\n`;
    const target = this.config.options.file_path;
    // The test suite's leak watch reads what a device writes; a log_raw device is plaintext by the operator's choice.
    if (!this.logRaw) leakWatch()?.audit(line);
    if (target === 'discard') return;
    if (target === 'stdout') {
      process.stdout.write(line);
      return;
    }
    appendFileSync(target, line, { mode: this.mode });
  }
}

/** Each core's enabled devices, cached for REFRESH_MS. */
class AuditBroker {
  private cached?: { devices: AuditDevice[]; readAt: number };
  private loading?: Promise<AuditDevice[]>;

  constructor(private readonly core: SecretsCore) {}

  async devices(): Promise<AuditDevice[]> {
    const now = Date.now();
    if (this.cached && now - this.cached.readAt < REFRESH_MS) return this.cached.devices;
    this.loading ??= this.core.engine.storage
      .tx((db) => readDevices(this.core, db), { readOnly: true })
      .then((configs) => {
        const devices = configs.map((c) => new AuditDevice(c));
        this.cached = { devices, readAt: Date.now() };
        return devices;
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }

  /** After a device was enabled or disabled here: the next request reads the list again. */
  invalidate(): void {
    this.cached = undefined;
  }
}

const brokers = new WeakMap<SecretsCore, AuditBroker>();

export function auditBroker(core: SecretsCore): AuditBroker {
  let broker = brokers.get(core);
  if (!broker) {
    broker = new AuditBroker(core);
    brokers.set(core, broker);
  }
  return broker;
}

/**
 * Vault's HashStructure: every string value, at any depth, replaced by its HMAC; object keys are
 * kept, and so are the values of the keys a mount lists in `audit_non_hmac_*_keys`.
 */
export function hashStrings(value: unknown, hash: (s: string) => string, keep: readonly string[], key = ''): unknown {
  if (typeof value === 'string') return keep.includes(key) ? value : hash(value);
  if (Array.isArray(value)) return value.map((v) => hashStrings(v, hash, keep, key));
  if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: hashStrings(v, hash, keep, k), enumerable: true });
    return out;
  }
  return value;
}

/** Drops what Go's `omitempty` drops, so the lines look like Vault's. */
function compact<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(
    Object.entries(o).filter(([, v]) => v !== undefined && v !== null && v !== '' && v !== false && v !== 0 && !(Array.isArray(v) && v.length === 0)),
  ) as T;
}

/** What the audit trail knows of a request once the pipeline has planned it. */
export interface AuditedRequest {
  readonly mount?: MountEntry;
  readonly operation: Operation | 'write';
  readonly caller?: Caller;
  readonly data?: unknown;
}

/** What the trail needs of the incoming request (a subset of core/request.ts's IncomingRequest). */
export interface AuditedIncoming {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly ip: string;
  readonly token?: string;
}

function authOf(caller: Caller | undefined): Record<string, unknown> | undefined {
  if (!caller) return undefined;
  const e: TokenEntry = caller.entry;
  return compact({
    client_token: caller.token,
    accessor: e.accessor,
    display_name: e.displayName,
    policies: [...e.policies],
    token_policies: [...e.policies],
    metadata: Object.keys(e.meta).length ? e.meta : undefined,
    token_type: e.type,
    token_ttl: e.creationTtl,
    token_issue_time: e.creationTime ? new Date(e.creationTime).toISOString() : undefined,
    remaining_uses: e.numUses > 0 ? e.numUses : undefined,
  });
}

/** The `auth` of a response envelope (a login, a token create) in the audit entry's shape. */
function responseAuthOf(auth: Record<string, unknown> | null | undefined): Record<string, unknown> | undefined {
  if (!auth) return undefined;
  return compact({
    client_token: auth.client_token,
    accessor: auth.accessor,
    policies: auth.policies,
    token_policies: auth.token_policies,
    identity_policies: auth.identity_policies,
    metadata: auth.metadata,
    entity_id: auth.entity_id,
    token_type: auth.token_type,
    token_ttl: auth.lease_duration,
    num_uses: auth.num_uses,
  });
}

/**
 * One request's audit trail: a `request` line before the handler runs, a `response` line after
 * (or with `error` when it failed). A request that no enabled device can log is refused with
 * Vault's 500 "internal error": an operator who enabled auditing relies on every request being logged.
 */
export class AuditTrail {
  private planned?: AuditedRequest;
  private requestLogged = false;
  private skip = false;

  constructor(
    private readonly core: SecretsCore,
    private readonly devices: readonly AuditDevice[],
    private readonly incoming: AuditedIncoming,
    /** The test suite's leak watch: the entry's credentials in plaintext, recorded (not a device: it never refuses a request). */
    private readonly watch?: LeakWatch,
  ) {}

  /** The request line; throws 500 when no device could write it (the handler then never runs). */
  request(req: AuditedRequest): void {
    // Once, even when a transaction that lost a race (PostgreSQL) plans the request again.
    if (this.requestLogged) return;
    // Vault serves health, seal status and init outside its core: they are not audited.
    if (req.mount?.type === 'system' && !req.caller) this.skip = true;
    this.planned = req;
    this.requestLogged = true;
    this.emit('request');
  }

  /** The response line of a successful request. */
  response(status: number, body: unknown, contentType?: string): void {
    this.emit('response', undefined, { status, body, contentType });
  }

  /** The lines of a failed request; never throws (the request's own error is what the client gets). */
  failed(err: unknown): void {
    const message = err instanceof HangarError ? err.messages.join('; ') || `status ${err.status}` : 'internal error';
    try {
      if (!this.requestLogged) this.emit('request', message);
      this.emit('response', message);
    } catch {
      // already logged by emit
    }
  }

  private emit(type: 'request' | 'response', error?: string, answer?: { status: number; body: unknown; contentType?: string }): void {
    if (this.skip) return;
    const time = new Date(this.core.engine.clock.now()).toISOString();
    let written = 0;
    for (const device of this.devices) {
      try {
        device.write(this.entry(device, type, time, error, answer));
        written++;
      } catch (err) {
        // The device's path and the system error only: never the entry.
        this.core.engine.logger.error({ device: device.config.path, error: (err as NodeJS.ErrnoException).code ?? (err as Error).message }, 'audit device could not log a request');
      }
    }
    if (this.watch) recordEntrySecrets(this.entry(WITNESS, type, time, error, answer), this.planned?.mount?.type === 'kv');
    if (written === 0 && this.devices.length > 0) throw new HangarError(500, ['internal error']);
  }

  private entry(device: AuditDevice, type: 'request' | 'response', time: string, error?: string, answer?: { status: number; body: unknown; contentType?: string }): object {
    const raw = device.logRaw;
    const h = (s: string | undefined) => (s === undefined || s === '' || raw ? s : device.hash(s));
    const ha = (s: string | undefined) => (device.hmacAccessor ? h(s) : s);
    const hashAuth = (auth: Record<string, unknown> | undefined) =>
      auth && compact({ ...auth, client_token: h(auth.client_token as string | undefined), accessor: ha(auth.accessor as string | undefined) });
    const hashData = (data: unknown, keep: readonly string[] | undefined) =>
      data === undefined || data === null || raw ? data : hashStrings(data, (s) => device.hash(s), keep ?? []);
    const { mount, caller, operation, data } = this.planned ?? { operation: undefined };
    const path = decodeSafely(this.incoming.url.split('?')[0].replace(/^\/v1\/?/, ''));
    const token = caller?.token || this.incoming.token;
    const request = compact({
      id: this.incoming.id,
      operation: operation === 'write' ? 'update' : operation ?? methodOperation(this.incoming.method),
      mount_type: mount?.type,
      mount_accessor: mount?.accessor,
      mount_point: mount?.path,
      client_token: h(token),
      client_token_accessor: ha(caller?.entry.accessor),
      namespace: { id: 'root' },
      path,
      data: hashData(data, mount?.tune?.audit_non_hmac_request_keys),
      remote_address: this.incoming.ip,
    });
    const entry: Record<string, unknown> = { time, type, auth: hashAuth(authOf(caller)), request, error };
    if (type === 'response') {
      // A JSON envelope (an object), or a raw answer (PEM, a CRL) logged as Vault logs `http_raw_body`.
      const body = answer?.body;
      const envelope = body && typeof body === 'object' && !Buffer.isBuffer(body) ? (body as Record<string, unknown>) : undefined;
      const rawBody =
        answer && !envelope && body !== undefined
          ? { http_content_type: answer.contentType, http_status_code: answer.status, http_raw_body: bodyText(body) }
          : undefined;
      const wrap = envelope?.wrap_info as Record<string, unknown> | null | undefined;
      entry.response = compact({
        mount_type: mount?.type,
        mount_accessor: mount?.accessor,
        mount_point: mount?.path,
        auth: hashAuth(responseAuthOf(envelope?.auth as Record<string, unknown> | null)),
        secret: envelope?.lease_id ? { lease_id: envelope.lease_id } : undefined,
        data: hashData(envelope?.data ?? rawBody, mount?.tune?.audit_non_hmac_response_keys),
        warnings: envelope?.warnings,
        wrap_info: wrap && compact({
          ...wrap,
          token: h(wrap.token as string),
          accessor: ha(wrap.accessor as string),
          wrapped_accessor: ha(wrap.wrapped_accessor as string),
        }),
      });
    }
    return compact(entry);
  }
}

/** A device that hashes nothing, for the leak watch to read an entry's values from. */
const WITNESS = new AuditDevice({ path: 'leak-watch/', type: 'file', description: '', options: { file_path: 'discard', log_raw: 'true' }, local: false, salt: '' });

/**
 * Records the credentials an unhashed entry carries: tokens, wrapping tokens, in request and
 * response data the fields that name a secret (passwords, private keys, secret IDs...), and every
 * string value written to a KV mount. Accessors are not recorded: like Vault, Hangar treats
 * them as references that can be shown (token lookups list them), not as credentials.
 */
function recordEntrySecrets(entry: Record<string, any>, kv: boolean): void {
  recordSecret('token', entry.auth?.client_token);
  recordSecret('token', entry.request?.client_token);
  recordSecret('token', entry.response?.auth?.client_token);
  recordSecret('wrapping token', entry.response?.wrap_info?.token);
  const walk = (value: unknown, key: string, all: boolean): void => {
    if (typeof value === 'string') {
      const kind = all ? 'secret value' : secretKindOfField(key);
      if (kind) recordSecret(kind, value);
    } else if (Array.isArray(value)) {
      for (const v of value) walk(v, key, all);
    } else if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
      for (const [k, v] of Object.entries(value)) walk(v, k, all);
    }
  };
  // What a caller writes to a KV mount is secret as a whole; answers only echo it (or carry metadata).
  walk(entry.request?.data, '', kv);
  walk(entry.response?.data, '', false);
}

function bodyText(body: unknown): string {
  if (Buffer.isBuffer(body)) return body.toString('base64');
  return typeof body === 'string' ? body : JSON.stringify(body);
}

function decodeSafely(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

function methodOperation(method: string): string {
  return ({ GET: 'read', HEAD: 'read', LIST: 'list', DELETE: 'delete' } as Record<string, string>)[method] ?? 'update';
}

/** The trail of one request, or undefined when no device is enabled (the common case costs one cached lookup). */
export async function auditTrail(core: SecretsCore, incoming: AuditedIncoming): Promise<AuditTrail | undefined> {
  const devices = await auditBroker(core).devices();
  const watch = leakWatch();
  return devices.length || watch ? new AuditTrail(core, devices, incoming, watch) : undefined;
}
