import { isIP } from 'node:net';

/**
 * Rules of the public service that the constructs also check, at synth time: metadata
 * (structs.ValidateMetadata) and addresses. Only Node.js built-ins here: the constructs import this module.
 */

const META_MAX_PAIRS = 64;
const META_KEY_MAX = 128;
const META_VALUE_MAX = 512;
const META_KEY = /^[a-zA-Z0-9_-]+$/;

/** Why metadata is invalid (the public service's reason for its first bad pair), undefined when it is valid. */
export function metadataProblem(meta: Record<string, string>, allowConsulPrefix: boolean): string | undefined {
  const pairs = Object.entries(meta);
  if (pairs.length > META_MAX_PAIRS) return `Node metadata cannot contain more than ${META_MAX_PAIRS} key/value pairs`;
  for (const [key, value] of pairs) {
    const reason =
      key === '' ? 'Key cannot be blank'
        : !META_KEY.test(key) ? 'Key contains invalid characters'
          : key.length > META_KEY_MAX ? `Key is too long (limit: ${META_KEY_MAX} characters)`
            : !allowConsulPrefix && key.startsWith('consul-') ? "Key prefix 'consul-' is reserved for internal use"
              : value.length > META_VALUE_MAX ? `Value is too long (limit: ${META_VALUE_MAX} characters)`
                : undefined;
    if (reason) return `Couldn't load metadata pair ('${key.slice(0, META_KEY_MAX)}', '${value.slice(0, 64)}'): ${reason}`;
  }
  return undefined;
}

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_-]{0,62})(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,62}))*\.?$/;

/** An IP address (bracketed IPv6 too) or a DNS name; "" is "not given". */
export function isAddress(text: string): boolean {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  return isIP(bare) !== 0 || HOSTNAME.test(text);
}

/** The "any" addresses, which the public service refuses as a service's address. */
export const ANY_ADDRESSES: ReadonlySet<string> = new Set(['0.0.0.0', '::', '[::]']);
