import { z } from 'zod';
import { commaList, duration, flexibleBoolean } from '../core/durations';
import { BUILTIN_MOUNTS, normalizeMountPath } from '../core/mounts';
import { badInput, missing } from '../core/request';
import { SYSTEM_MAX_TTL } from '../core/tokens';
import { EngineRoute, MountEntry, MountTune, SecretsRequest, SecretsResponse } from '../core/types';
import { SECRETS_API_VERSION } from '../core/version';
import { identityStore } from '../identity/store';

/** A mount TTL: a duration, or "system" (and "" from the Go client's unset fields) for the system's. */
const mountTtl = () => z.preprocess((v) => (v === 'system' ? 0 : v), duration());

/** Tune fields stored and shown back as given (Vault's names). */
const TuneFields = {
  listing_visibility: z.enum(['', 'unauth', 'hidden'], { message: 'must be "unauth", "hidden" or ""' }).optional(),
  audit_non_hmac_request_keys: commaList.optional(),
  audit_non_hmac_response_keys: commaList.optional(),
  passthrough_request_headers: commaList.optional(),
  allowed_response_headers: commaList.optional(),
  allowed_managed_keys: commaList.optional(),
  delegated_auth_accessors: commaList.optional(),
  identity_token_key: z.string().optional(),
  token_type: z.enum(['default-service', 'default-batch', 'service', 'batch', 'default', ''], {
    message: 'must be default-service, default-batch, service or batch',
  }).optional(),
};

const options = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String)).optional();

const MountConfig = z
  .object({
    default_lease_ttl: mountTtl().optional(),
    max_lease_ttl: mountTtl().optional(),
    force_no_cache: flexibleBoolean.optional(),
    ...TuneFields,
  })
  .loose();

const EnableBody = z.object({
  type: z.string({ message: 'type is required' }).min(1, 'type is required'),
  description: z.string().max(1024).optional(),
  config: MountConfig.optional(),
  options,
  local: flexibleBoolean.optional(),
  seal_wrap: flexibleBoolean.optional(),
  external_entropy_access: flexibleBoolean.optional(),
  plugin_name: z.string().optional(),
  // Vault's plugin catalog pins versions of external plugins; Hangar's engines are built in (only "" is theirs).
  plugin_version: z.string().optional(),
});

/** In a tune, an empty TTL (the Go client's unset field) leaves the TTL as it is (Vault). */
const tuneTtl = () => z.preprocess((v) => (v === '' ? undefined : v === 'system' ? 0 : v), duration().optional());

const TuneBody = z.object({
  default_lease_ttl: tuneTtl(),
  max_lease_ttl: tuneTtl(),
  description: z.string().max(1024).optional(),
  options,
  ...TuneFields,
});
type TuneInput = Partial<Record<keyof typeof TuneFields, string | string[]>>;

/** The tune fields of a request merged over a mount's: a given value replaces, an empty one clears. */
function mergeTune(kind: 'secret' | 'auth', current: MountTune | undefined, given: TuneInput): MountTune | undefined {
  const out: Record<string, unknown> = { ...current };
  for (const key of Object.keys(TuneFields) as (keyof typeof TuneFields)[]) {
    const v = given[key];
    if (v === undefined) continue;
    if (key === 'token_type' && kind !== 'auth') {
      if (v !== '' && v !== 'default') throw badInput('token_type: only auth mounts issue tokens');
      continue;
    }
    const empty = v === '' || v === 'default' || (Array.isArray(v) && v.length === 0);
    if (empty) delete out[key];
    else out[key] = v;
  }
  return Object.keys(out).length ? (out as MountTune) : undefined;
}

/**
 * Vault's shape of one mount (vault/logical_system.go's mountInfo) in `sys/mounts`, `sys/auth` and
 * `sys/internal/ui/mounts`; `systemTtls` shows unset TTLs as the system's (the latter's form).
 */
export function mountInfo(m: MountEntry, systemTtls = false): Record<string, unknown> {
  const ttl = (t: number) => (systemTtls && t === 0 ? SYSTEM_MAX_TTL : t);
  const builtin = BUILTIN_MOUNTS.some((b) => b.type === m.type);
  return {
    accessor: m.accessor,
    config: {
      default_lease_ttl: ttl(m.defaultLeaseTtl),
      max_lease_ttl: ttl(m.maxLeaseTtl),
      force_no_cache: m.forceNoCache ?? false,
      ...shownTune(m),
    },
    // Vault's built-in registry: `ad` is deprecated, the others supported; core mounts (sys, token...) have no status.
    ...(builtin ? {} : { deprecation_status: m.type === 'ad' ? 'deprecated' : 'supported' }),
    description: m.description,
    external_entropy_access: m.externalEntropyAccess ?? false,
    local: m.local,
    options: Object.keys(m.options).length ? m.options : null,
    plugin_version: '',
    // Every engine is built into Hangar, as Vault's own built-in plugins are (their version is Vault's).
    running_plugin_version: `v${SECRETS_API_VERSION}+builtin.vault`,
    running_sha256: '',
    seal_wrap: m.sealWrap,
    type: m.type,
    uuid: m.uuid,
  };
}

/** The stored tune fields; an auth mount always shows its token type (Vault's default `default-service`). */
function shownTune(m: MountEntry): MountTune {
  return m.kind === 'auth' ? { token_type: 'default-service', ...m.tune } : { ...m.tune };
}

/** Vault's `sys/mounts/:path/tune` read: `external_entropy_access` and `options` only when set. */
function tuneInfo(m: MountEntry): Record<string, unknown> {
  return {
    default_lease_ttl: m.defaultLeaseTtl || SYSTEM_MAX_TTL,
    max_lease_ttl: m.maxLeaseTtl || SYSTEM_MAX_TTL,
    force_no_cache: m.forceNoCache ?? false,
    description: m.description,
    ...(m.externalEntropyAccess ? { external_entropy_access: true } : {}),
    ...(Object.keys(m.options).length ? { options: m.options } : {}),
    ...shownTune(m),
  };
}

/** `sys/mounts/<path>` or `sys/auth/<path>`, with or without `/tune`. */
function target(kind: 'secret' | 'auth', rest: string): { path: string; tune: boolean } {
  const tune = rest.endsWith('/tune');
  const raw = tune ? rest.slice(0, -'/tune'.length) : rest;
  let path: string;
  try {
    path = normalizeMountPath(raw);
  } catch (err) {
    throw badInput((err as Error).message);
  }
  return { path: kind === 'auth' ? `auth/${path}` : path, tune };
}

/** As Vault: a mount's own maximum may exceed the system's (it replaces it for the mount). */
function checkTtls(defaultTtl: number, maxTtl: number): void {
  if (maxTtl === 0 && defaultTtl > SYSTEM_MAX_TTL) {
    throw badInput(`default_lease_ttl: ${defaultTtl}s is above the system maximum of ${SYSTEM_MAX_TTL}s`);
  }
  if (maxTtl !== 0 && defaultTtl > maxTtl) throw badInput('default_lease_ttl: cannot be greater than max_lease_ttl');
}

/**
 * The mount a `sys/mounts/...` or `sys/auth/...` path names; `sys/mounts/auth/<path>` also reaches
 * auth mounts (how the Go client and the Terraform provider read and tune them).
 */
async function mountAt(req: SecretsRequest, kind: 'secret' | 'auth', path: string): Promise<MountEntry | undefined> {
  const m = await req.core.mounts.get(req.db, path);
  return m && (m.kind === kind || (kind === 'secret' && m.kind === 'auth')) ? m : undefined;
}

async function list(req: SecretsRequest, kind: 'secret' | 'auth'): Promise<SecretsResponse> {
  const data: Record<string, unknown> = {};
  for (const m of await req.core.mounts.all(req.db)) {
    if (m.kind !== kind) continue;
    data[kind === 'auth' ? m.path.slice('auth/'.length) : m.path] = mountInfo(m);
  }
  return { data, topLevel: true };
}

async function enable(req: SecretsRequest<z.infer<typeof EnableBody>>, kind: 'secret' | 'auth', rest: string): Promise<SecretsResponse | undefined> {
  const { path, tune } = target(kind, rest);
  if (tune) return tuneMount(req as unknown as SecretsRequest<z.infer<typeof TuneBody>>, kind, path);
  const b = req.body;
  const named = b.type === 'plugin' && b.plugin_name ? b.plugin_name : b.type;
  // As Vault: `kv-v2` is the `kv` engine with `version: 2`.
  const typeName = kind === 'secret' && named === 'kv-v2' ? 'kv' : named;
  const mountOptions = named === typeName ? b.options ?? {} : { ...b.options, version: '2' };
  const existing = await req.core.mounts.all(req.db);
  const clash = existing.find((m) => path.startsWith(m.path) || m.path.startsWith(path));
  if (clash) {
    const dev = clash.path === path && req.core.devMount(clash);
    if (dev && clash.type === typeName && sameOptions(clash.options, mountOptions)) return keepDevMount(req, clash);
    const cli = `vault ${kind === 'auth' ? 'auth' : 'secrets'} disable ${kind === 'auth' ? path.slice('auth/'.length) : path}`;
    const hint = dev ? `: Hangar's dev mode mounted ${clash.type} there; disable it first (${cli}) or choose another path` : '';
    throw badInput(`path is already in use at ${clash.path}${hint}`);
  }
  if (kind === 'secret' && (path === 'auth/' || path.startsWith('auth/') || path.startsWith('sys/'))) {
    throw badInput(`cannot mount a secrets engine under "${path.split('/')[0]}/"`);
  }
  const type = req.core.engineType(kind, typeName);
  if (!type || BUILTIN_MOUNTS.some((m) => m.type === typeName)) {
    throw badInput(`plugin not found in the catalog: ${typeName} (available: ${req.core.typeNames(kind).join(', ')})`);
  }
  if (b.plugin_version) throw badInput(`plugin_version: Hangar's engines are built in and have no other version than "" (given "${b.plugin_version}")`);
  const defaultTtl = b.config?.default_lease_ttl ?? 0;
  const maxTtl = b.config?.max_lease_ttl ?? 0;
  checkTtls(defaultTtl, maxTtl);
  const entry = req.core.mounts.newEntry(
    {
      path,
      kind,
      type: typeName,
      description: b.description ?? '',
      defaultLeaseTtl: defaultTtl,
      maxLeaseTtl: maxTtl,
      options: mountOptions,
      local: b.local ?? false,
      sealWrap: b.seal_wrap ?? false,
      ...(b.external_entropy_access ? { externalEntropyAccess: true } : {}),
      ...(b.config?.force_no_cache ? { forceNoCache: true } : {}),
      tune: mergeTune(kind, undefined, (b.config ?? {}) as TuneInput),
    },
    req.now,
  );
  await req.core.mounts.put(req.db, entry);
  if (type.mounted) await type.mounted(req.core.contextIn(req.db, entry, req.now));
  return undefined;
}

const sameOptions = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>) =>
  [...new Set([...Object.keys(a), ...Object.keys(b)])].every((k) => a[k] === b[k]);

/**
 * Dev mode mounts the spec's engines at their default paths, and the public service's tutorials
 * begin with `vault secrets enable pki`: enabling the same type (and options) where dev mode put
 * it keeps that mount, applies the description and config given as a tune, and says so in a warning.
 */
async function keepDevMount(req: SecretsRequest<z.infer<typeof EnableBody>>, m: MountEntry): Promise<SecretsResponse> {
  const { description, config } = req.body;
  const tune = { ...config, ...(description !== undefined ? { description } : {}) };
  await tuneMount({ ...req, body: tune as z.infer<typeof TuneBody> }, m.kind, m.path);
  return { warnings: [`${m.path} was already mounted (${m.type}) by Hangar's dev mode: that mount is kept, tuned with the configuration given`] };
}

async function tuneMount(req: SecretsRequest<z.infer<typeof TuneBody>>, kind: 'secret' | 'auth', path: string): Promise<undefined> {
  const m = await mountAt(req, kind, path);
  if (!m) throw badInput(`no mount at ${path}`);
  const parsed = TuneBody.safeParse(req.body);
  if (!parsed.success) throw badInput(...parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  const b = parsed.data;
  const tune = mergeTune(m.kind, m.tune, b);
  const defaultTtl = b.default_lease_ttl ?? m.defaultLeaseTtl;
  const maxTtl = b.max_lease_ttl ?? m.maxLeaseTtl;
  checkTtls(defaultTtl, maxTtl);
  const updated = {
    ...m,
    defaultLeaseTtl: defaultTtl,
    maxLeaseTtl: maxTtl,
    description: b.description ?? m.description,
    options: b.options ? { ...m.options, ...b.options } : m.options,
    tune,
  };
  await req.core.mounts.put(req.db, updated);
  const type = req.core.engineType(m.kind, m.type);
  if (type?.retuned) await type.retuned(req.core.contextIn(req.db, updated, req.now), m);
  return undefined;
}

async function read(req: SecretsRequest, kind: 'secret' | 'auth', rest: string): Promise<SecretsResponse> {
  const { path, tune } = target(kind, rest);
  const m = await mountAt(req, kind, path);
  if (!m) {
    if (tune) throw badInput(`cannot fetch tune configuration of ${path}: no mount there`);
    throw missing();
  }
  return { data: tune ? tuneInfo(m) : mountInfo(m), topLevel: tune };
}

/**
 * Marks for revocation every lease of a mount, and for an auth method revokes the tokens it issued
 * (their leases marked too), as Vault does before disabling or moving it; the caller revokes the
 * returned leases through their engine once the transaction commits. Leases whose revocation
 * failed before are included: the mount goes (or moves) only once all are revoked.
 */
export async function markLeasesOf(req: SecretsRequest, m: MountEntry): Promise<string[]> {
  const leases = await req.core.leases.idsWithPrefix(req.db, m.path, true);
  if (m.kind === 'auth') leases.push(...(await req.core.revokeTokensUnder(req.db, m.path, req.now)));
  await req.core.leases.markRevoking(req.db, leases, req.now);
  return leases;
}

/** Disables a mount: its leases are revoked through its engine first, then its storage goes. */
async function disable(req: SecretsRequest, kind: 'secret' | 'auth', rest: string): Promise<undefined> {
  const { path, tune } = target(kind, rest);
  if (tune) throw badInput('a tune configuration cannot be deleted');
  if (BUILTIN_MOUNTS.some((b) => b.path === path)) throw badInput(`cannot unmount "${path}"`);
  const m = await req.core.mounts.get(req.db, path);
  if (!m || m.kind !== kind) return undefined;
  const leases = await markLeasesOf(req, m);
  // Its group aliases go too (Vault), so their groups can be aliased at another mount.
  if (kind === 'auth') await (await identityStore(req.core, req.db))?.deleteAliasesOfMount(m.accessor, req.now);
  // The engines' revoke hooks read the mount and its storage (a broker's connection), so these go after.
  req.afterCommit(async () => {
    // As Vault: a lease that cannot be revoked (its system is down) keeps the mount; retried in the background.
    const failures = await req.core.revokeLeases(leases);
    if (failures.length) throw badInput(`failed to revoke ${failures.length} lease(s) of ${path}; the mount stays until they are revoked: ${failures[0].error}`);
    await req.engine.storage.tx(async (db) => {
      await req.core.store(db, m).clear();
      await req.core.mounts.delete(db, path);
    });
  });
  return undefined;
}

function mountRoutes(kind: 'secret' | 'auth', base: string): EngineRoute[] {
  return [
    { pattern: base, readOnly: true, read: (req) => list(req, kind) },
    {
      pattern: `${base}/*rest`,
      body: z.unknown().transform((v) => v ?? {}),
      sudo: kind === 'auth',
      readOnly: false,
      exists: async (req) => {
        const { path, tune } = target(kind, req.params.rest);
        return tune || (await req.core.mounts.get(req.db, path)) !== undefined;
      },
      read: (req) => read(req, kind, req.params.rest),
      write: async (req) => {
        const { tune } = target(kind, req.params.rest);
        if (tune) return enable(req as never, kind, req.params.rest);
        const parsed = EnableBody.safeParse(req.body);
        if (!parsed.success) {
          throw badInput(...parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`));
        }
        return enable({ ...req, body: parsed.data }, kind, req.params.rest);
      },
      delete: (req) => disable(req, kind, req.params.rest),
    },
  ];
}

/** `sys/mounts` and `sys/auth`: enable, disable, list, read, tune. */
export const mountSystemRoutes: EngineRoute[] = [...mountRoutes('secret', 'mounts'), ...mountRoutes('auth', 'auth')];
