import { z } from 'zod';

/**
 * Owner and box names appear in URL paths and in `owner/name` tags: letters, digits and a few
 * separators, never starting with one, so no name can be `..` or contain a slash.
 */
export const USERNAME = z
  .string()
  .min(1, 'must not be empty')
  .max(40, 'must be at most 40 characters')
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'may contain only letters, digits, "-" and "_", and must start with a letter or digit');

export const BOX_NAME = z
  .string()
  .min(1, 'must not be empty')
  .max(100, 'must be at most 100 characters')
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'may contain only letters, digits, ".", "-" and "_", and must start with a letter or digit');

export const SHORT_DESCRIPTION = z.string().max(1000, 'must be at most 1000 characters');
export const DESCRIPTION = z.string().max(64 * 1024, 'must be at most 65536 characters');
export const EMAIL = z.string().max(254).regex(/^[^\s@]+@[^\s@]+$/, 'must be an e-mail address');
export const PHONE = z.string().max(32).regex(/^\+?[0-9 ()-]{4,}$/, 'must be a phone number');

/**
 * Version numbers as the public registry accepts them: MAJOR[.MINOR[.PATCH]], digits only.
 * Each part is compared as a number, so "1.10.0" is newer than "1.9.0".
 */
export const VERSION = z
  .string()
  .min(1, 'must not be empty')
  .max(32, 'must be at most 32 characters')
  .regex(/^\d{1,9}(\.\d{1,9}){0,2}$/, 'must be a version number of the form MAJOR.MINOR.PATCH (digits, e.g. 1.0.0)');

/** Provider (virtualization target) names: virtualbox, vmware_desktop, libvirt, hyperv, ... */
export const PROVIDER_NAME = z
  .string()
  .min(1, 'must not be empty')
  .max(64, 'must be at most 64 characters')
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'may contain only letters, digits, "-" and "_", and must start with a letter or digit');

/**
 * The architectures the public registry's API v2 lists, and `unknown`: the architecture of
 * providers published without one (through API v1, or before architectures existed).
 */
export const ARCHITECTURES = ['amd64', 'i386', 'arm', 'arm64', 'ppc64le', 'ppc64', 'mips64le', 'mips64', 'mipsle', 'mips', 's390x', 'unknown'] as const;
export const ARCHITECTURE = z.enum(ARCHITECTURES, { error: `must be one of ${ARCHITECTURES.join(', ')}` });

export const BOX_URL = z
  .string()
  .max(2048, 'must be at most 2048 characters')
  .regex(/^https?:\/\/[^\s/?#]+[^\s]*$/i, 'must be an http or https URL');
