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
