import type { X509Certificate } from 'node:crypto';
import type { z } from 'zod';
import type { SecretsCore } from './core';
import type { MountStore } from './store';
import type { Engine } from '../../engine';
import type { Db, TxOptions } from '../../storage';

/** What a request does, as the ACL sees it (Vault's logical operations; `patch` is HTTP PATCH, a JSON merge patch). */
export type Operation = 'create' | 'read' | 'update' | 'patch' | 'delete' | 'list';
export type Capability = Operation | 'sudo' | 'deny';
export const CAPABILITIES: readonly Capability[] = ['create', 'read', 'update', 'patch', 'delete', 'list', 'sudo', 'deny'];

/** A mounted secrets engine or auth method (`sys/mounts`, `sys/auth`). */
export interface MountEntry {
  /** Full path with a trailing slash: `pki/`, `auth/jwt/`, `sys/`, `auth/token/`. */
  readonly path: string;
  readonly kind: 'secret' | 'auth';
  readonly type: string;
  readonly description: string;
  readonly accessor: string;
  readonly uuid: string;
  /** Seconds; 0 means the system default (768h). */
  readonly defaultLeaseTtl: number;
  readonly maxLeaseTtl: number;
  readonly options: Readonly<Record<string, string>>;
  readonly local: boolean;
  readonly sealWrap: boolean;
  /** Set at mount time only, as in Vault (absent: false). */
  readonly externalEntropyAccess?: boolean;
  readonly forceNoCache?: boolean;
  readonly createdAt: number;
  /** Tune settings Vault stores and shows back under their own names (absent: not set). */
  readonly tune?: MountTune;
}

/** The tune fields of a mount beyond its TTLs, in Vault's names (`sys/mounts/:path/tune`). */
export interface MountTune {
  readonly listing_visibility?: string;
  readonly audit_non_hmac_request_keys?: readonly string[];
  readonly audit_non_hmac_response_keys?: readonly string[];
  readonly passthrough_request_headers?: readonly string[];
  readonly allowed_response_headers?: readonly string[];
  readonly allowed_managed_keys?: readonly string[];
  readonly delegated_auth_accessors?: readonly string[];
  readonly identity_token_key?: string;
  /** Auth mounts: the type of the tokens logins issue (`default-service`, `default-batch`, `service`, `batch`). */
  readonly token_type?: string;
}

/** A token as the core knows it (service tokens are stored; batch tokens carry this sealed). */
export interface TokenEntry {
  /** SHA-256 of the token. */
  readonly idHash: string;
  readonly accessor: string;
  readonly parentHash?: string;
  readonly policies: readonly string[];
  readonly meta: Readonly<Record<string, string>>;
  readonly displayName: string;
  /** Uses left; 0 is unlimited. */
  readonly numUses: number;
  readonly creationTime: number;
  readonly creationTtl: number;
  /** Epoch ms; 0 never expires. */
  readonly expireAt: number;
  /** Epoch ms beyond which renewals cannot go; 0 unbounded. */
  readonly maxExpireAt: number;
  readonly explicitMaxTtl: number;
  readonly period: number;
  readonly renewable: boolean;
  readonly type: 'service' | 'batch';
  readonly orphan: boolean;
  readonly path: string;
  readonly boundCidrs: readonly string[];
  readonly role?: string;
  readonly lastRenewalTime?: number;
  /** External groups of the identity store the login matched: their policies apply too. */
  readonly groupIds?: readonly string[];
}

/** The authenticated caller of a request. */
export interface Caller {
  /** The token as presented (needed for lookup-self, never stored). */
  readonly token: string;
  readonly entry: TokenEntry;
  readonly root: boolean;
}

/** An auth method's answer to a login: the core turns it into a token. */
export interface AuthSpec {
  readonly policies: readonly string[];
  readonly metadata?: Readonly<Record<string, string>>;
  readonly displayName: string;
  readonly ttl?: number;
  readonly maxTtl?: number;
  readonly explicitMaxTtl?: number;
  readonly period?: number;
  readonly numUses?: number;
  readonly boundCidrs?: readonly string[];
  readonly noDefaultPolicy?: boolean;
  readonly type?: 'service' | 'batch' | 'default';
  readonly renewable?: boolean;
  readonly role?: string;
  /** Group names from the login (a groups claim): matched against the mount's group aliases. */
  readonly groups?: readonly string[];
}

/** A lease-bearing answer: the core registers a lease whose revocation goes back to the engine. */
export interface LeaseSpec {
  /** Requested TTL in seconds; 0 uses the mount's default. Capped by the mount's max. */
  readonly ttl?: number;
  readonly maxTtl?: number;
  readonly renewable?: boolean;
  /** Stored sealed with the lease and handed to the engine's revoke and renew hooks. */
  readonly internal?: unknown;
}

export interface SecretsResponse {
  readonly status?: number;
  readonly data?: Record<string, unknown>;
  /** A login: the core issues an orphan token from it (policies, TTLs under the auth mount's tuning). */
  readonly auth?: AuthSpec;
  /** A token the handler issued itself (the token store), rendered as `auth`. */
  readonly issued?: { readonly token: string; readonly entry: TokenEntry };
  readonly lease?: LeaseSpec;
  /** A lease the handler renewed (`sys/leases/renew`): shown in the envelope's lease fields. */
  readonly renewed?: { readonly id: string; readonly ttl: number; readonly renewable: boolean };
  readonly warnings?: readonly string[];
  /** Also copy `data`'s keys to the top level (Vault's older `sys/` responses, which clients read). */
  readonly topLevel?: boolean;
  /** A response that is not the JSON envelope (raw PEM, text/plain keys). */
  readonly raw?: { readonly contentType: string; readonly body: string | Buffer };
  readonly headers?: Readonly<Record<string, string>>;
  /** `lease_duration` shown without registering a lease (KV v1's `ttl` hint). */
  readonly leaseDuration?: number;
  /**
   * Writes to the mount's storage made in the response's transaction, together with its lease: how a
   * route that runs outside transactions (`ownTransactions`) stores what it made, in one transaction.
   */
  readonly writes?: (store: MountStore) => Promise<void>;
}

/** What a route handler gets. */
export interface SecretsRequest<B = Record<string, unknown>, Q = Record<string, unknown>> {
  readonly operation: Operation;
  readonly method: string;
  /** Path relative to the mount, without leading or trailing slash. */
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly body: B;
  /** The body as sent (JSON, `null`s dropped), before the route's schema: for the few answers that echo a write verbatim. */
  readonly rawBody?: unknown;
  readonly query: Q;
  readonly mount: MountEntry;
  /** Sealed key-value storage of this mount. */
  readonly store: MountStore;
  readonly db: Db;
  readonly now: number;
  readonly core: SecretsCore;
  readonly engine: Engine;
  readonly caller?: Caller;
  readonly clientIp: string;
  readonly requestId: string;
  /** Scheme, host and port the client used. */
  readonly baseUrl: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The client certificate the listener verified against its client CA (mTLS), if any: what certificate login reads. */
  readonly clientCertificate?: () => X509Certificate | undefined;
  /** Runs after the request's transaction committed (revocations through engines). */
  afterCommit(task: () => Promise<void>): void;
}

export type Handler<B = any, Q = any> = (req: SecretsRequest<B, Q>) => Promise<SecretsResponse | undefined>;

/** One path of an engine's route table (relative to its mount), Vault's framework.Path. */
export interface EngineRoute {
  /** `role/:name`, `config`, `creds/:name`, `cert/*serial`; `:x` is one segment, `*x` one or more (all up to the fixed segments after it). */
  readonly pattern: string;
  /** Input of writes (POST, PUT, PATCH): the JSON body (or form fields). */
  readonly body?: z.ZodType;
  /** Input of reads, lists and deletes: the query string; handlers get it as `body` too. */
  readonly query?: z.ZodType;
  /** Handlers by operation; `write` serves create and update, told apart by `exists`. */
  readonly read?: Handler;
  readonly list?: Handler;
  readonly delete?: Handler;
  readonly write?: Handler;
  readonly create?: Handler;
  readonly update?: Handler;
  /** PATCH with `application/merge-patch+json`; its body keeps JSON `null` (a merge patch's "remove"). */
  readonly patch?: Handler;
  /** Whether the target exists: a write then needs `update`, else `create`. Without it a write is an update. */
  readonly exists?: (req: SecretsRequest) => Promise<boolean>;
  /** No token needed (login, OIDC callback, public keys). */
  readonly unauthenticated?: boolean;
  /** With `unauthenticated`: a token given is still checked and its caller passed on, without an ACL check (`sys/internal/ui/mounts`). */
  readonly optionalToken?: boolean;
  /** Also needs the `sudo` capability. */
  readonly sudo?: boolean;
  /** Handlers that write nothing run in a read-only transaction: `true` for every operation, else those listed. */
  readonly readOnly?: boolean | readonly Operation[];
  /**
   * Operations whose handlers do slow external work (HTTP to a provider, a database): they run
   * outside any transaction and open their own through `req.core.context(req.mount).tx`.
   */
  readonly ownTransactions?: readonly Operation[];
}

/** A stored lease as the engine's hooks see it. */
export interface LeaseRecord {
  readonly id: string;
  readonly mountPath: string;
  readonly path: string;
  readonly issueTime: number;
  readonly expireAt: number;
  readonly maxExpireAt: number;
  readonly renewable: boolean;
  readonly lastRenewalTime?: number;
  readonly internal: unknown;
}

/** What an engine's hooks outside a request get. */
export interface EngineContext {
  readonly engine: Engine;
  readonly core: SecretsCore;
  readonly mount: MountEntry;
  readonly now: number;
  /** Runs fn in a transaction with this mount's storage (`readOnly`: one that takes no write lock). */
  tx<T>(fn: (store: MountStore, db: Db) => Promise<T>, options?: TxOptions): Promise<T>;
}

/** A kind of secrets engine or auth method: the plug-in interface. */
export interface EngineType {
  readonly type: string;
  readonly kind: 'secret' | 'auth';
  readonly description: string;
  readonly routes: readonly EngineRoute[];
  /** The routes of one mount when they depend on its options (KV's `version`); `routes` otherwise. */
  routesFor?(mount: MountEntry): readonly EngineRoute[];
  /**
   * Revokes what a lease stands for (drops the database user, deletes the account...). Runs outside
   * any transaction (use `ctx.tx`), and must be idempotent: after a crash, or with several servers,
   * it may run again for a lease it already revoked. Throwing leaves the lease marked for a retry.
   */
  revoke?(lease: LeaseRecord, ctx: EngineContext, prepared?: unknown): Promise<void>;
  /**
   * Reads what `revoke` needs inside the transaction that marks the lease (`sys/leases/revoke`),
   * which hands it to `revoke` as `prepared`: the revocation then opens no transaction of its own.
   * Undefined (nothing to read, or a row gone) leaves the reading to `revoke`.
   */
  prepareRevoke?(lease: LeaseRecord, ctx: EngineContext): Promise<unknown>;
  /** Checks a renewal; throw to refuse it. */
  renew?(lease: LeaseRecord, ctx: EngineContext): Promise<void>;
  /** Mounted for the first time (defaults, keys). */
  mounted?(ctx: EngineContext): Promise<void>;
  /** Tuned through `sys/mounts/:path/tune` (`ctx.mount` is the new entry): upgrades in place. */
  retuned?(ctx: EngineContext, before: MountEntry): Promise<void>;
  /** Tokens were revoked (inside the revoking transaction): drops what belonged to them (cubbyholes). */
  tokensRevoked?(ctx: EngineContext, idHashes: readonly string[]): Promise<void>;
}
