import { z } from 'zod';

const UNITS: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600, d: 86400 };

/**
 * A duration in whole seconds from what Vault clients send: integer seconds (number or numeric
 * string) or a Go duration string such as `1h`, `90m`, `1h30m`, `10s`, plus `d` for days.
 * Undefined when the text is not a duration.
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (text === '') return 0;
  if (/^-?\d+$/.test(text)) return Number(text);
  const negative = text.startsWith('-');
  const body = negative ? text.slice(1) : text;
  const parts = [...body.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== body) return undefined;
  const seconds = Math.floor(parts.reduce((sum, p) => sum + Number(p[1]) * UNITS[p[2]], 0));
  return negative ? -seconds : seconds;
}

/** zod: a duration field (seconds); `min` defaults to 0. */
export function duration(min = 0) {
  return z.unknown().transform((value, ctx) => {
    const seconds = parseDuration(value);
    if (seconds === undefined) {
      // Not String(value): an object's own `toString` (`{"toString": 0}`) would throw (a 500).
      const given = typeof value === 'string' || typeof value === 'number' ? `"${value}"` : Array.isArray(value) ? 'a list' : value === null ? 'null' : `a${typeof value === 'object' ? 'n object' : ` ${typeof value}`}`;
      ctx.addIssue({ code: 'custom', message: `${given} is not a duration: use integer seconds or a string such as "30m" or "1h"` });
      return z.NEVER;
    }
    if (seconds < min) {
      ctx.addIssue({ code: 'custom', message: `must be at least ${min}${min === 0 ? '' : ' seconds'}, not ${seconds}` });
      return z.NEVER;
    }
    return seconds;
  });
}

/** zod: a list of strings, also accepted as one comma-separated string. */
export const commaList = z
  .union([z.array(z.string()), z.string()])
  .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter((s) => s !== ''));

/** zod: a boolean, also accepted as the strings "true"/"false" (form posts, query strings). */
export const flexibleBoolean = z.union([z.boolean(), z.enum(['true', 'false', '1', '0'])]).transform((v) => v === true || v === 'true' || v === '1');

/** zod: an integer, also accepted as a numeric string. */
export const flexibleInt = z.union([z.number().int(), z.string().regex(/^-?\d+$/, 'must be an integer')]).transform(Number);

/** A time as Vault shows it: RFC 3339 in UTC, sub-second digits kept and trailing zeros trimmed (Go's RFC3339Nano). */
export const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z');

/**
 * Whole seconds left until an instant (0 once past), rounded as Vault's lease TTLs are: times are
 * kept in milliseconds, so a 60 s TTL still reads 60 a few milliseconds after it was issued.
 */
export const secondsLeft = (until: number, now: number): number => Math.max(0, Math.round((until - now) / 1000));
