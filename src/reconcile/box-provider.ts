import { z } from 'zod';
import { splitVersionKey } from './box-version';
import { Clients } from './clients';
import { differences, ResourceKind } from './kind';
import { ApiError } from '../client/errors';
import { ChecksumType, ProviderId, RegistryProvider } from '../client/registry';

const CHECKSUM_TYPE = z.enum(['', 'md5', 'sha1', 'sha256', 'sha384', 'sha512']);

/**
 * Either an external `url` (checksum optional, "" for none) or a local `file` (an absolute path)
 * with the checksum the construct computed at synth time: the file is uploaded when the hosted
 * one's checksum differs, so a changed file is uploaded again and an unchanged one never.
 */
// `defaultArchitecture` (payloads with an architecture only): true makes it its name's default;
// false asks nothing (the registry makes the first architecture of a name its default).
const defaultArchitecture = { defaultArchitecture: z.boolean().optional() };
const ProviderDesired = z.union([
  z.object({ url: z.string().min(1), checksum: z.string(), checksumType: CHECKSUM_TYPE, ...defaultArchitecture }),
  z.object({ file: z.string().min(1), checksum: z.string().min(1), checksumType: CHECKSUM_TYPE.exclude(['']), ...defaultArchitecture }),
]);
export type ProviderDesired = z.infer<typeof ProviderDesired>;

/**
 * A provider's key is `owner/name/version/provider` (API v1: the name's default architecture, as
 * every payload before architectures) or `owner/name/version/provider/architecture` (API v2).
 */
function splitProviderKey(key: string): [string, string, string, ProviderId] {
  const parts = key.split('/');
  if ((parts.length !== 4 && parts.length !== 5) || parts.some((p) => !p)) {
    throw new Error(`box provider key "${key}" is not of the form owner/name/version/provider[/architecture]`);
  }
  const [owner, name, version] = splitVersionKey(parts.slice(0, 3).join('/'));
  return [owner, name, version, parts.length === 5 ? { name: parts[3], architecture: parts[4] } : parts[3]];
}

/** The live provider in the desired shape; a hosted file whose checksum is the desired one is "the file". */
function liveShape(p: RegistryProvider, desired?: ProviderDesired): ProviderDesired {
  const checksum = p.checksum ?? '';
  const checksumType = p.checksum_type ?? '';
  // Only a requested default is compared (false asks nothing).
  const flag = desired?.defaultArchitecture ? { defaultArchitecture: p.default_architecture === true } : {};
  if (desired && 'file' in desired && p.hosted) {
    const same = checksum === desired.checksum.toLowerCase() && checksumType === desired.checksumType;
    return { file: same ? desired.file : '(another file)', checksum, checksumType, ...flag } as ProviderDesired;
  }
  return { url: p.original_url ?? '', checksum, checksumType, ...flag } as ProviderDesired;
}

/** The desired shape as compared: an unrequested default is no difference. */
function comparable(desired: ProviderDesired): ProviderDesired {
  const { defaultArchitecture: flag, ...rest } = desired;
  return (flag ? desired : rest) as ProviderDesired;
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
    const flag = desired.defaultArchitecture ? { defaultArchitecture: true } : {};
    const identity = typeof provider === 'string' ? { name: provider } : provider;
    if ('url' in desired) {
      if (!live) {
        await registry.createProvider(owner, name, version, { ...identity, url: desired.url, ...checksum, ...flag });
        return 'created';
      }
      if (differences(comparable(desired), liveShape(live, desired)).length === 0) return 'unchanged';
      await registry.updateProvider(owner, name, version, provider, { url: desired.url, ...checksum, ...flag });
      return 'updated';
    }
    if (live && differences(comparable(desired), liveShape(live, desired)).length === 0) return 'unchanged';
    if (!live) {
      await registry.createProvider(owner, name, version, { ...identity, ...checksum, ...flag });
    } else if (!live.hosted) {
      await registry.updateProvider(owner, name, version, provider, { url: '', ...checksum });
    } else {
      // The hosted file is another one, and a declared checksum must match the hosted file: clear
      // it, upload, declare the new one (which the registry checks against the new file).
      await registry.updateProvider(owner, name, version, provider, { checksum: '' });
    }
    await registry.upload(owner, name, version, provider, desired.file, false, `upload ${key}`);
    if (live?.hosted || (live && flag.defaultArchitecture)) await registry.updateProvider(owner, name, version, provider, { ...checksum, ...flag });
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
