import { z } from 'zod';
import { badRequest, HangarError } from '../http/errors';
import { RequestContext, route } from '../http/routes';
import type { Authorizer, Need, Resource } from './acl/authorizer';

/** The caller of a catalog request: always a token (the anonymous one when none was sent). */
export interface CatalogActor {
  readonly accessorId: string;
  /** The secret the caller presented (token/self answers it back); empty when none was sent. */
  readonly secretId: string;
  /** The namespace of the token: where its requests go when they name none. */
  readonly ns: string;
  readonly authz: Authorizer;
  /** The stored token row, unless the caller is the root token or the local administrator. */
  readonly stored: boolean;
}

/**
 * The spec's ACL column of a route (`acl:write`, `session:read`, ...). Most checks need the
 * request's namespace or segment (the node of a session, the key), so handlers enforce them with
 * `requirePermission`; the table states them so that a reader sees each endpoint's rule.
 */
export type CatalogPermission = string;

export type CatalogContext = RequestContext<CatalogActor>;

export const catalogRoute = route<CatalogActor, CatalogPermission>();

export const LOCAL_DATACENTER = 'dc1';
export const ANONYMOUS_ACCESSOR = '00000000-0000-0000-0000-000000000002';
export const GLOBAL_MANAGEMENT_ID = '00000000-0000-0000-0000-000000000001';

export function actorOf(ctx: CatalogContext): CatalogActor {
  return ctx.actor!;
}

/** Consul's "Permission denied: token with AccessorID '…' lacks permission 'key:write' on "a/b"". */
export function permissionDenied(actor: CatalogActor, resource: Resource, need: Need, segment?: string): HangarError {
  const who = actor.accessorId === ANONYMOUS_ACCESSOR ? 'anonymous token' : `token with AccessorID '${actor.accessorId}'`;
  const on = segment !== undefined && segment !== '' ? ` on ${JSON.stringify(segment)}` : '';
  return new HangarError(403, [`Permission denied: ${who} lacks permission '${resource}:${need}'${on}`]);
}

export function requirePermission(ctx: CatalogContext, resource: Resource, need: Need, segment?: string, ns = 'default'): void {
  const actor = actorOf(ctx);
  if (!actor.authz.allowed(resource, need, segment, ns)) throw permissionDenied(actor, resource, need, segment);
}

export const aclNotFound = () => new HangarError(403, ['ACL not found']);
export { badRequest };

// ---------------------------------------------------------------------------------------------
// Request decoding: the public service decodes bodies strictly (an unknown field is a 400) and
// matches field names without regard to case, as Go's encoding/json does.

/**
 * A body object: unknown fields refused, names matched case-insensitively, and a `null` field is
 * "not given" (Go clients send null for every nil slice, map and pointer). `snakeCase`: names also
 * match without their underscores (`tagged_addresses`), as the public service's agent endpoints
 * translate them (lib.TranslateKeys; py-consul sends them so).
 */
export function consulObject<S extends z.ZodRawShape>(shape: S, options: { snakeCase?: boolean } = {}) {
  const names = Object.keys(shape);
  const strict = z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? `unknown field ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}` : undefined,
  });
  return z.preprocess((value) => canonicalKeys(value, names, options.snakeCase === true), strict);
}

function canonicalKeys(value: unknown, names: readonly string[], snakeCase: boolean): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === null) continue;
    const wanted = (snakeCase ? key.replace(/_/g, '') : key).toLowerCase();
    const name = names.includes(key) ? key : (names.find((n) => n.toLowerCase() === wanted) ?? key);
    out[name] = v;
  }
  return out;
}

/** A field the public service knows but Hangar does not use: accepted whatever its value, ignored. */
export const ignored = z.unknown().optional();

/**
 * Fields the public service's structs carry that it computes itself, which a client may send back
 * unchanged (Go clients send the whole struct, `"Hash": null` included): accepted and ignored.
 */
export const READ_ONLY_FIELDS = {
  CreateIndex: ignored,
  ModifyIndex: ignored,
  Hash: ignored,
  Partition: ignored,
};

export const LinkBody = consulObject({ ID: z.string().optional(), Name: z.string().optional() });
export const ServiceIdentityBody = consulObject({ ServiceName: z.string(), Datacenters: z.array(z.string()).nullish() });
export const NodeIdentityBody = consulObject({ NodeName: z.string(), Datacenter: z.string() });
export const TemplatedPolicyBody = consulObject({
  TemplateName: z.string(),
  TemplateVariables: consulObject({ Name: z.string().optional() }).optional(),
  Datacenters: z.array(z.string()).optional(),
});

/** Query parameters every catalog endpoint accepts (others are ignored, as the public service does). */
export const CommonQuery = z.object({
  dc: z.string().optional(),
  ns: z.string().optional(),
  token: z.string().optional(),
  index: z
    .string()
    .regex(/^\d+$/, 'Invalid index')
    .transform(Number)
    .optional(),
  wait: z.string().optional(),
  stale: z.string().optional(),
  consistent: z.string().optional(),
  pretty: z.string().optional(),
  filter: z.string().optional(),
});
export type CommonQuery = z.infer<typeof CommonQuery>;

// ---------------------------------------------------------------------------------------------
// Unsigned 64-bit integers (KV flags): exact as decimal text in storage, as bare numbers in JSON.

const UINT64_MAX = 18446744073709551615n;

/** A uint64 from a decimal string, a number or a bigint, as canonical decimal text; undefined when not one. */
export function toUint64(value: string | number | bigint): string | undefined {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) return undefined;
  if (typeof value === 'string' && !/^\d{1,20}$/.test(value)) return undefined;
  const n = BigInt(value);
  return n >= 0n && n <= UINT64_MAX ? n.toString() : undefined;
}

/** A decimal integer that JSON.stringify writes as a bare number, exactly (no float rounding). */
export function jsonInteger(decimal: string): unknown {
  return (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON(decimal);
}

// ---------------------------------------------------------------------------------------------
// Durations in Go's syntax ("1h30m", "15s", "500ms"), as the public service reads them.

const UNITS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

/** A Go duration to nanoseconds, or undefined when it does not parse. */
export function parseDuration(text: string): number | undefined {
  if (text === '0') return 0;
  const m = /^([+-]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/.exec(text);
  if (!m) return undefined;
  let total = 0;
  for (const part of text.replace(/^[+-]/, '').matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) {
    total += Number(part[1]) * UNITS[part[2]];
  }
  return m[1] === '-' ? -total : Math.round(total);
}

/** Nanoseconds as Go prints a duration ("1m30s", "15s", "24h0m0s"). */
export function formatDuration(ns: number): string {
  if (ns === 0) return '0s';
  if (ns < 1e9) return ns % 1e6 === 0 ? `${ns / 1e6}ms` : `${ns}ns`;
  const totalSeconds = ns / 1e9;
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const s = +(totalSeconds % 60).toFixed(9);
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

// ---------------------------------------------------------------------------------------------
// Names

export const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** Service and node identity names: lowercase letters, digits, '-' and '_'. */
export const IDENTITY_NAME = /^[a-z0-9]([a-z0-9\-_]*[a-z0-9])?$/;
export const POLICY_NAME = /^[A-Za-z0-9\-_]{1,128}$/;
export const ROLE_NAME = /^[A-Za-z0-9\-_]{1,256}$/;
export const AUTH_METHOD_NAME = /^[A-Za-z0-9\-_]{1,128}$/;
/** Namespace names are DNS labels. */
export const NAMESPACE_NAME = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
