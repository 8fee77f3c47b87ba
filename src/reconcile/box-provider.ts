import { z } from 'zod';
import { splitVersionKey } from './box-version';
import { Clients } from './clients';
import { differences, ResourceKind } from './kind';
import { ApiError } from '../client/errors';
import { ChecksumType, RegistryProvider } from '../client/registry';

const CHECKSUM_TYPE = z.enum(['', 'md5', 'sha1', 'sha256', 'sha384', 'sha512']);

/**
 * Either an external `url` (checksum optional, "" for none) or a local `file` (an absolute path)
 * with the checksum the construct computed at synth time: the file is uploaded when the hosted
 * one's checksum differs, so a changed file is uploaded again and an unchanged one never.
 */
const ProviderDesired = z.union([
  z.object({ url: z.string().min(1), checksum: z.string(), checksumType: CHECKSUM_TYPE }),
  z.object({ file: z.string().min(1), checksum: z.string().min(1), checksumType: CHECKSUM_TYPE.exclude(['']) }),
]);
export type ProviderDesired = z.infer<typeof ProviderDesired>;

/** A provider's key is `owner/name/version/provider`. */
function splitProviderKey(key: string): [string, string, string, string] {
  const cut = key.lastIndexOf('/');
  const provider = key.slice(cut + 1);
  if (cut < 0 || !provider) throw new Error(`box provider key "${key}" is not of the form owner/name/version/provider`);
  return [...splitVersionKey(key.slice(0, cut)), provider];
}

/** The live provider in the desired shape; a hosted file whose checksum is the desired one is "the file". */
function liveShape(p: RegistryProvider, desired?: ProviderDesired): ProviderDesired {
  const checksum = p.checksum ?? '';
  const checksumType = p.checksum_type ?? '';
  if (desired && 'file' in desired && p.hosted) {
    const same = checksum === desired.checksum.toLowerCase() && checksumType === desired.checksumType;
    return { file: same ? desired.file : '(another file)', checksum, checksumType } as ProviderDesired;
  }
  return { url: p.original_url ?? '', checksum, checksumType } as ProviderDesired;
}

export const boxProviderKind: ResourceKind<ProviderDesired> = {
  kind: 'registry.box-provider',
  deleteOrder: 30,
  desired: ProviderDesired,

  async read(clients, key, desired) {
    const provider = await clients.registry.getProvider(...splitProviderKey(key));
    return provider && liveShape(provider, desired);
  },

  async upsert(clients: Clients, key, desired) {
    const [owner, name, version, provider] = splitProviderKey(key);
    const registry = clients.registry;
    const live = await registry.getProvider(owner, name, version, provider);
    const checksum = { checksum: desired.checksum.toLowerCase(), checksumType: desired.checksumType as ChecksumType | '' };
    if ('url' in desired) {
      if (!live) {
        await registry.createProvider(owner, name, version, { name: provider, url: desired.url, ...checksum });
        return 'created';
      }
      if (differences(desired, liveShape(live)).length === 0) return 'unchanged';
      await registry.updateProvider(owner, name, version, provider, { url: desired.url, ...checksum });
      return 'updated';
    }
    if (live && differences(desired, liveShape(live, desired)).length === 0) return 'unchanged';
    if (!live) {
      await registry.createProvider(owner, name, version, { name: provider, ...checksum });
    } else if (!live.hosted) {
      await registry.updateProvider(owner, name, version, provider, { url: '', ...checksum });
    } else {
      // The hosted file is another one, and a declared checksum must match the hosted file: clear
      // it, upload, declare the new one (which the registry checks against the new file).
      await registry.updateProvider(owner, name, version, provider, { checksum: '' });
    }
    await registry.upload(owner, name, version, provider, desired.file);
    if (live?.hosted) await registry.updateProvider(owner, name, version, provider, checksum);
    return live ? 'updated' : 'created';
  },

  async delete(clients, key) {
    const [owner, name, version, provider] = splitProviderKey(key);
    try {
      return await clients.registry.deleteProvider(owner, name, version, provider);
    } catch (err) {
      // The registry keeps a released version downloadable: the last valid provider of an active
      // version goes only after the version is revoked.
      if (!(err instanceof ApiError && err.status === 422 && /revoke the version first/.test(err.message))) throw err;
      await clients.registry.revokeVersion(owner, name, version);
      return clients.registry.deleteProvider(owner, name, version, provider);
    }
  },
};
