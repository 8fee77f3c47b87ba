import { z } from 'zod';
import { duration, flexibleBoolean } from '../core/durations';
import { BUILTIN_MOUNTS, normalizeMountPath } from '../core/mounts';
import { badInput, missing } from '../core/request';
import { SYSTEM_MAX_TTL } from '../core/tokens';
import { EngineRoute, MountEntry, SecretsRequest, SecretsResponse } from '../core/types';
import { identityStore } from '../identity/store';

const MountConfig = z
  .object({
    default_lease_ttl: duration().optional(),
    max_lease_ttl: duration().optional(),
    force_no_cache: flexibleBoolean.optional(),
  })
  .loose();

const EnableBody = z.object({
  type: z.string({ message: 'type is required' }).min(1, 'type is required'),
  description: z.string().max(1024).optional(),
  config: MountConfig.optional(),
  options: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String)).nullish(),
  local: flexibleBoolean.optional(),
  seal_wrap: flexibleBoolean.optional(),
  plugin_name: z.string().optional(),
});

const TuneBody = z.object({
  default_lease_ttl: duration().optional(),
  max_lease_ttl: duration().optional(),
  description: z.string().max(1024).optional(),
  options: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String)).nullish(),
});

/** Vault's shape of one mount in `sys/mounts` and `sys/auth`. */
export function mountInfo(m: MountEntry): Record<string, unknown> {
  return {
    accessor: m.accessor,
    config: { default_lease_ttl: m.defaultLeaseTtl, max_lease_ttl: m.maxLeaseTtl, force_no_cache: false },
    description: m.description,
    external_entropy_access: false,
    local: m.local,
    options: Object.keys(m.options).length ? m.options : null,
    plugin_version: '',
    running_plugin_version: '',
    running_sha256: '',
    seal_wrap: m.sealWrap,
    type: m.type,
    uuid: m.uuid,
  };
}

function tuneInfo(m: MountEntry): Record<string, unknown> {
  return {
    default_lease_ttl: m.defaultLeaseTtl || SYSTEM_MAX_TTL,
    max_lease_ttl: m.maxLeaseTtl || SYSTEM_MAX_TTL,
    force_no_cache: false,
    description: m.description,
    options: Object.keys(m.options).length ? m.options : null,
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

function checkTtls(defaultTtl: number, maxTtl: number): void {
  if (maxTtl > SYSTEM_MAX_TTL) throw badInput(`max_lease_ttl: ${maxTtl}s is above the system maximum of ${SYSTEM_MAX_TTL}s`);
  if (defaultTtl > (maxTtl || SYSTEM_MAX_TTL)) throw badInput('default_lease_ttl: cannot be greater than max_lease_ttl');
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
  if (tune) return tuneMount(req as unknown as SecretsRequest<z.infer<typeof TuneBody>>, path);
  const b = req.body;
  const existing = await req.core.mounts.all(req.db);
  const clash = existing.find((m) => path.startsWith(m.path) || m.path.startsWith(path));
  if (clash) throw badInput(`path is already in use at ${clash.path}`);
  if (kind === 'secret' && (path === 'auth/' || path.startsWith('auth/') || path.startsWith('sys/'))) {
    throw badInput(`cannot mount a secrets engine under "${path.split('/')[0]}/"`);
  }
  const typeName = b.type === 'plugin' && b.plugin_name ? b.plugin_name : b.type;
  const type = req.core.engineType(kind, typeName);
  if (!type || BUILTIN_MOUNTS.some((m) => m.type === typeName)) {
    throw badInput(`plugin not found in the catalog: ${typeName} (available: ${req.core.typeNames(kind).join(', ')})`);
  }
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
      options: b.options ?? {},
      local: b.local ?? false,
      sealWrap: b.seal_wrap ?? false,
    },
    req.now,
  );
  await req.core.mounts.put(req.db, entry);
  if (type.mounted) await type.mounted(req.core.contextIn(req.db, entry, req.now));
  return undefined;
}

async function tuneMount(req: SecretsRequest<z.infer<typeof TuneBody>>, path: string): Promise<undefined> {
  const m = await req.core.mounts.get(req.db, path);
  if (!m) throw badInput(`no mount at ${path}`);
  const parsed = TuneBody.safeParse(req.body);
  if (!parsed.success) throw badInput(...parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  const b = parsed.data;
  const defaultTtl = b.default_lease_ttl ?? m.defaultLeaseTtl;
  const maxTtl = b.max_lease_ttl ?? m.maxLeaseTtl;
  checkTtls(defaultTtl, maxTtl);
  await req.core.mounts.put(req.db, {
    ...m,
    defaultLeaseTtl: defaultTtl,
    maxLeaseTtl: maxTtl,
    description: b.description ?? m.description,
    options: b.options ? { ...m.options, ...b.options } : m.options,
  });
  return undefined;
}

async function read(req: SecretsRequest, kind: 'secret' | 'auth', rest: string): Promise<SecretsResponse> {
  const { path, tune } = target(kind, rest);
  const m = await req.core.mounts.get(req.db, path);
  if (!m || m.kind !== kind) {
    if (tune) throw badInput(`cannot fetch tune configuration of ${path}: no mount there`);
    throw missing();
  }
  return { data: tune ? tuneInfo(m) : mountInfo(m), topLevel: tune };
}

/** Disables a mount: its leases are revoked through its engine first, then its storage goes. */
async function disable(req: SecretsRequest, kind: 'secret' | 'auth', rest: string): Promise<undefined> {
  const { path, tune } = target(kind, rest);
  if (tune) throw badInput('a tune configuration cannot be deleted');
  if (BUILTIN_MOUNTS.some((b) => b.path === path)) throw badInput(`cannot unmount "${path}"`);
  const m = await req.core.mounts.get(req.db, path);
  if (!m || m.kind !== kind) return undefined;
  const leases = await req.core.leases.idsWithPrefix(req.db, path);
  if (kind === 'auth') {
    const rows = await req.db.all<{ id_hash: string }>('SELECT id_hash FROM secrets_tokens');
    for (const { id_hash } of rows) {
      const t = await req.core.tokens.byHash(req.db, id_hash);
      if (t && t.path.startsWith(path)) leases.push(...(await req.core.revokeToken(req.db, id_hash, req.now)));
    }
    // Its group aliases go too (Vault), so their groups can be aliased at another mount.
    await (await identityStore(req.core, req.db))?.deleteAliasesOfMount(m.accessor, req.now);
  }
  await req.core.leases.markRevoking(req.db, leases, req.now);
  await req.core.store(req.db, m).clear();
  await req.core.mounts.delete(req.db, path);
  req.afterCommit(async () => void (await req.core.revokeLeases(leases)));
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
