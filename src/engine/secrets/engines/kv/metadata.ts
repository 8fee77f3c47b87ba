import { z } from 'zod';
import { folder, goDuration, KvSecret, listKeys, mergePatch, newSecret, readConfig, readSecret, secretExists, trim, V2_PREFIX, viewSecret, writeConfig, writeSecret } from './secret';
import { duration, flexibleBoolean, flexibleInt, rfc3339 } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { EngineRoute, SecretsRequest } from '../../core/types';

const maxVersions = flexibleInt.pipe(z.number().int().min(0, 'must be 0 (the default of 10) or more'));

const ConfigBody = z.object({
  max_versions: maxVersions.optional(),
  cas_required: flexibleBoolean.optional(),
  delete_version_after: duration().optional(),
});

/** Vault's limits on `custom_metadata`: 64 keys, keys up to 128 bytes, values up to 512. */
const CustomMetadata = z
  .record(z.string().min(1, 'keys must not be empty').max(128, 'keys must be at most 128 characters'), z.string().max(512, 'values must be at most 512 characters'))
  .refine((m) => Object.keys(m).length <= 64, 'at most 64 keys');

const MetadataBody = ConfigBody.extend({ custom_metadata: CustomMetadata.optional() });

/** A merge patch of the metadata: `null` resets a field to its default, or removes a custom_metadata key. */
const MetadataPatch = z.object({
  max_versions: maxVersions.nullable().optional(),
  cas_required: flexibleBoolean.nullable().optional(),
  delete_version_after: duration().nullable().optional(),
  custom_metadata: z.record(z.string(), z.string().nullable(), { message: 'must be an object of strings' }).nullable().optional(),
});

/**
 * Sets the metadata fields given (`undefined` keeps, `null` resets); a lower `max_versions`
 * drops the oldest versions at once. Serves POST (replace the given fields) and PATCH.
 */
function withMetadata(s: KvSecret, b: z.infer<typeof MetadataPatch>, now: number): KvSecret {
  const next: KvSecret = {
    ...s,
    maxVersions: b.max_versions === undefined ? s.maxVersions : b.max_versions ?? 0,
    casRequired: b.cas_required === undefined ? s.casRequired : b.cas_required ?? false,
    deleteVersionAfter: b.delete_version_after === undefined ? s.deleteVersionAfter : b.delete_version_after ?? 0,
    custom: b.custom_metadata === undefined ? s.custom : (b.custom_metadata as Record<string, string>) ?? {},
    updated: now,
  };
  if (next.maxVersions > 0) trim(next, next.maxVersions);
  return next;
}

function metadataData(s: Readonly<KvSecret>) {
  const versions: Record<string, unknown> = {};
  for (const [n, v] of Object.entries(s.versions)) {
    versions[n] = { created_time: rfc3339(v.created), deletion_time: v.deletion ? rfc3339(v.deletion) : '', destroyed: v.destroyed };
  }
  return {
    cas_required: s.casRequired,
    created_time: rfc3339(s.created),
    current_version: s.current,
    custom_metadata: Object.keys(s.custom).length ? s.custom : null,
    delete_version_after: goDuration(s.deleteVersionAfter),
    max_versions: s.maxVersions,
    oldest_version: s.oldest,
    updated_time: rfc3339(s.updated),
    versions,
  };
}

/** KV v2 `config` and `metadata/` (the mount's `version` is 2). */
export const metadataRoutes: EngineRoute[] = [
  {
    pattern: 'config',
    readOnly: true,
    read: async (req) => {
      const c = await readConfig(req.store);
      return { data: { cas_required: c.casRequired, delete_version_after: goDuration(c.deleteVersionAfter), max_versions: c.maxVersions } };
    },
  },
  {
    pattern: 'config',
    body: ConfigBody,
    write: async (req: SecretsRequest<z.infer<typeof ConfigBody>>) => {
      const c = await readConfig(req.store);
      const b = req.body;
      await writeConfig(req.store, {
        maxVersions: b.max_versions ?? c.maxVersions,
        casRequired: b.cas_required ?? c.casRequired,
        deleteVersionAfter: b.delete_version_after ?? c.deleteVersionAfter,
      });
      return undefined;
    },
  },
  { pattern: 'metadata', readOnly: true, list: (req) => listKeys(req.store, V2_PREFIX) },
  {
    pattern: 'metadata/*path',
    readOnly: true,
    read: async (req) => {
      const secret = await viewSecret(req);
      if (!secret) throw missing();
      return { data: metadataData(secret) };
    },
    list: (req) => listKeys(req.store, folder(V2_PREFIX, req.params.path)),
  },
  {
    pattern: 'metadata/*path',
    body: MetadataBody,
    exists: secretExists,
    // Given fields replace the stored ones (a secret without versions yet is created).
    write: async (req: SecretsRequest<z.infer<typeof MetadataBody>>) => {
      await writeSecret(req as SecretsRequest, withMetadata((await readSecret(req as SecretsRequest)) ?? newSecret(req.now), req.body, req.now));
      return undefined;
    },
    // Every version and the metadata.
    delete: async (req) => {
      await req.store.delete(V2_PREFIX + req.params.path);
      return undefined;
    },
  },
  {
    // PATCH: only an existing secret; custom_metadata is merged key by key.
    pattern: 'metadata/*path',
    body: MetadataPatch,
    patch: async (req: SecretsRequest<z.infer<typeof MetadataPatch>>) => {
      const s = await readSecret(req as SecretsRequest);
      if (!s) throw missing();
      const b = req.body;
      const custom = b.custom_metadata ? mergePatch(s.custom, b.custom_metadata) : b.custom_metadata;
      const checked = custom ? CustomMetadata.safeParse(custom) : undefined;
      if (checked && !checked.success) {
        // zod reports a bad record key as "Invalid key in record" with the key's own issue inside.
        const issue = checked.error.issues[0] as { message: string; issues?: Array<{ message: string }> };
        throw badInput(`custom_metadata: ${issue.issues?.[0]?.message ?? issue.message}`);
      }
      const next = withMetadata(s, { ...b, custom_metadata: custom as Record<string, string> | null | undefined }, req.now);
      await writeSecret(req as SecretsRequest, next);
      return undefined;
    },
  },
];
