import { z } from 'zod';
import { Clients } from './clients';
import { differences, ResourceKind } from './kind';

const VersionDesired = z.object({
  description: z.string().optional(),
  /** Unset: the release state is left alone (the version's own step; its release step sets it). */
  released: z.boolean().optional(),
});
export type VersionDesired = z.infer<typeof VersionDesired>;

/** A version's key is `owner/name/version`. */
export function splitVersionKey(key: string): [string, string, string] {
  const parts = key.split('/');
  if (parts.length !== 3 || parts.some((p) => !p)) throw new Error(`box version key "${key}" is not of the form owner/name/version`);
  return [parts[0], parts[1], parts[2]];
}

/**
 * `registry.box-version`. The construct applies it twice: once with the description only (before
 * its providers exist), then, after its providers, with `released` (see BoxVersion).
 */
export const boxVersionKind: ResourceKind<VersionDesired> = {
  kind: 'registry.box-version',
  deleteOrder: 20,
  desired: VersionDesired,

  async read(clients, key) {
    const version = await clients.registry.getVersion(...splitVersionKey(key));
    return version && { description: version.description_markdown, released: version.status === 'active' };
  },

  async upsert(clients: Clients, key, desired) {
    const [owner, name, number] = splitVersionKey(key);
    const registry = clients.registry;
    const live = await this.read(clients, key);
    if (!live) await registry.createVersion(owner, name, number, desired.description ?? '');
    const actual = live ?? { description: desired.description ?? '', released: false };
    const changed = differences(desired, actual);
    if (changed.includes('description')) await registry.updateVersion(owner, name, number, { description: desired.description });
    if (changed.includes('released')) {
      if (desired.released) await registry.releaseVersion(owner, name, number);
      else await registry.revokeVersion(owner, name, number);
    }
    return !live ? 'created' : changed.length ? 'updated' : 'unchanged';
  },

  async delete(clients, key) {
    return clients.registry.deleteVersion(...splitVersionKey(key));
  },
};
