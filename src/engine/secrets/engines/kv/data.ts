import { z } from 'zod';
import { addVersion, isDeleted, KvConfig, KvSecret, KvVersion, mergePatch, newSecret, readConfig, readSecret, secretExists, versionMetadata, viewSecret, writeSecret } from './secret';
import { flexibleInt } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { EngineRoute, SecretsRequest, SecretsResponse } from '../../core/types';

const version = flexibleInt.pipe(z.number().int().min(0, 'must be 0 (the current version) or more'));

const DataBody = z.object({
  data: z.record(z.string(), z.unknown(), { message: 'must be a JSON object' }),
  options: z.object({ cas: flexibleInt.pipe(z.number().int().min(0, 'must be 0 or more')).optional() }).optional(),
});
/** A JSON merge patch of the current version's data (`null` removes a key). */
const PatchBody = z.object({
  data: z.record(z.string(), z.unknown(), { message: 'must be a JSON object' }),
  options: z.object({ cas: flexibleInt.pipe(z.number().int().min(0, 'must be 0 or more')).nullable().optional() }).nullable().optional(),
});
const VersionQuery = z.object({ version: version.optional() });
const SubkeysQuery = z.object({ version: version.optional(), depth: flexibleInt.pipe(z.number().int().min(0, 'must be 0 (all) or more')).optional() });
/** `versions`: a list of numbers, also one number or a comma-separated string (form posts). */
const VersionsBody = z.object({
  versions: z.preprocess(
    (v) => (typeof v === 'string' ? v.split(',').map((x) => x.trim()) : typeof v === 'number' ? [v] : v),
    z.array(version.pipe(z.number().min(1, 'version numbers start at 1')), { message: 'must be a list of version numbers' }).min(1, 'no version number provided'),
  ),
});

/** The version a read asks for (0 or none is the current one), its entry when it still exists. */
function pick(secret: Readonly<KvSecret>, asked: number | undefined): [number, KvVersion | undefined] {
  const n = asked || secret.current;
  return [n, secret.versions[String(n)]];
}

/**
 * The version a read serves, or Vault's answers when there is none: 404 without a body for an
 * unknown secret or version, 404 with the version's metadata (and `null` data) when it is deleted
 * or destroyed, which clients read to tell the cases apart.
 */
async function readable(req: SecretsRequest<unknown, { version?: number }>): Promise<[Readonly<KvSecret>, number, KvVersion] | SecretsResponse> {
  const secret = await viewSecret(req as SecretsRequest);
  const [n, v] = secret ? pick(secret, req.query.version) : [0, undefined];
  if (!secret || !v) throw missing();
  if (v.destroyed || isDeleted(v, req.now)) return { status: 404, data: { data: null, metadata: versionMetadata(secret, n, v) } };
  return [secret, n, v];
}

/** Vault's check-and-set rules for a new version: required by the mount or the secret, and must name the current version. */
function checkCas(config: KvConfig, secret: KvSecret, cas: number | null | undefined): void {
  if (cas == null && (config.casRequired || secret.casRequired)) {
    throw badInput('check-and-set parameter required for this call: options.cas (the current version, 0 for a new secret)');
  }
  if (cas != null && cas !== secret.current) {
    throw badInput(`check-and-set parameter did not match the current version: options.cas is ${cas}, the current version is ${secret.current}`);
  }
}

/** Stores a new version and answers as a write does: the new version's metadata. */
async function newVersion(req: SecretsRequest, secret: KvSecret, config: KvConfig, data: Record<string, unknown>): Promise<SecretsResponse> {
  const n = addVersion(secret, config, data, req.now);
  await writeSecret(req, secret);
  return { data: versionMetadata(secret, n, secret.versions[String(n)]) };
}

/** Nested keys of a JSON object with every leaf `null`, down to `depth` levels (0: all). */
function subkeys(value: Record<string, unknown>, depth: number, level = 1): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const nested = v !== null && typeof v === 'object' && !Array.isArray(v) && (depth === 0 || level < depth);
    out[k] = nested ? subkeys(v as Record<string, unknown>, depth, level + 1) : null;
  }
  return out;
}

/** Applies a change to the listed versions of a secret that exists; nothing happens for one that does not. */
function changeVersions(change: (v: KvVersion, now: number) => void) {
  return async (req: SecretsRequest<z.infer<typeof VersionsBody>>) => {
    const secret = await readSecret(req as SecretsRequest);
    if (!secret) return undefined;
    for (const n of req.body.versions) {
      const v = secret.versions[String(n)];
      if (v) change(v, req.now);
    }
    secret.updated = req.now;
    await writeSecret(req as SecretsRequest, secret);
    return undefined;
  };
}

const softDelete = (v: KvVersion, now: number) => {
  if (!v.destroyed && !isDeleted(v, now)) v.deletion = now;
};

/** KV v2 `data/`, `delete/`, `undelete/`, `destroy/`, `subkeys/` (the mount's `version` is 2). */
export const dataRoutes: EngineRoute[] = [
  {
    pattern: 'data/*path',
    query: VersionQuery,
    readOnly: true,
    read: async (req) => {
      const found = await readable(req);
      if (!Array.isArray(found)) return found;
      const [secret, n, v] = found;
      return { data: { data: v.data ?? {}, metadata: versionMetadata(secret, n, v) } };
    },
  },
  {
    pattern: 'data/*path',
    body: DataBody,
    exists: secretExists,
    write: async (req: SecretsRequest<z.infer<typeof DataBody>>) => {
      const config = await readConfig(req.store);
      const secret = (await readSecret(req as SecretsRequest)) ?? newSecret(req.now);
      checkCas(config, secret, req.body.options?.cas);
      return newVersion(req as SecretsRequest, secret, config, req.body.data);
    },
    // DELETE on `data/` soft-deletes the current version.
    delete: async (req) => {
      const secret = await readSecret(req);
      const current = secret?.versions[String(secret.current)];
      if (!secret || !current) return undefined;
      softDelete(current, req.now);
      await writeSecret(req, secret);
      return undefined;
    },
  },
  {
    // PATCH: a new version from the current one and a merge patch; only a live current version can be patched (404 otherwise).
    pattern: 'data/*path',
    body: PatchBody,
    patch: async (req: SecretsRequest<z.infer<typeof PatchBody>>) => {
      const config = await readConfig(req.store);
      const secret = await readSecret(req as SecretsRequest);
      const current = secret?.versions[String(secret.current)];
      if (!secret || !current || current.destroyed || isDeleted(current, req.now)) throw missing();
      checkCas(config, secret, req.body.options?.cas);
      return newVersion(req as SecretsRequest, secret, config, mergePatch(current.data ?? {}, req.body.data));
    },
  },
  {
    pattern: 'subkeys/*path',
    query: SubkeysQuery,
    readOnly: true,
    read: async (req: SecretsRequest<unknown, z.infer<typeof SubkeysQuery>>) => {
      const found = await readable(req);
      if (!Array.isArray(found)) return found;
      const [secret, n, v] = found;
      return { data: { subkeys: subkeys(v.data ?? {}, req.query.depth ?? 0), metadata: versionMetadata(secret, n, v) } };
    },
  },
  { pattern: 'delete/*path', body: VersionsBody, write: changeVersions(softDelete) },
  {
    pattern: 'undelete/*path',
    body: VersionsBody,
    write: changeVersions((v) => {
      if (!v.destroyed) v.deletion = 0;
    }),
  },
  {
    pattern: 'destroy/*path',
    body: VersionsBody,
    write: changeVersions((v) => {
      v.destroyed = true;
      delete v.data;
    }),
  },
];
