import { badRequest } from './errors';

/**
 * Throws a 400 naming the first string (key or value) of a decoded request input that is not
 * well-formed Unicode. JSON's `\ud800` escape yields a lone UTF-16 surrogate, which no handler can
 * represent: `encodeURIComponent` throws on it, PostgreSQL refuses it, SQLite stores U+FFFD. Strict
 * UTF-8 decoding of the body cannot produce one, so only such escapes reach here.
 *
 * Iterative, not recursive: a 1 MiB body may nest arrays 500,000 deep.
 */
export function assertWellFormed(value: unknown, where: string): void {
  if (typeof value === 'object' && value !== null && knownWellFormed.has(value)) return;
  if (typeof value === 'string') {
    if (!isWellFormed(value)) throw notWellFormed(where);
    return;
  }
  if (!isContainer(value)) return;
  const stack: Entry[] = [{ value, key: where }];
  while (stack.length > 0) {
    const entry = stack.pop()!;
    for (const [key, child] of Object.entries(entry.value as object)) {
      if (!isWellFormed(key)) throw notWellFormed(`${pathOf(entry)} (a field name)`);
      if (typeof child === 'string') {
        if (!isWellFormed(child)) throw notWellFormed(pathOf(entry, key));
      } else if (isContainer(child)) {
        stack.push({ value: child, key, parent: entry });
      }
    }
  }
}

/** Decoded inputs that cannot hold a lone surrogate (see `markWellFormed`): not walked again. */
const knownWellFormed = new WeakSet<object>();

/**
 * Spares `assertWellFormed` the walk of a value its decoder proved well-formed: a JSON body decoded
 * from strict UTF-8 without any `\u` escape (a transit batch's 140 KB of base64 cost 40 µs to walk).
 */
export function markWellFormed(value: unknown): void {
  if (typeof value === 'object' && value !== null) knownWellFormed.add(value);
}

/** Each entry remembers its parent, so the path is built only for the error. */
interface Entry {
  readonly value: unknown;
  readonly key: string;
  readonly parent?: Entry;
}

function pathOf(entry: Entry, key?: string): string {
  const parts = key === undefined ? [] : [key];
  for (let e: Entry | undefined = entry; e; e = e.parent) parts.push(e.key);
  parts.reverse();
  // A path thousands of levels deep is shown by its ends.
  return (parts.length > 12 ? [...parts.slice(0, 6), '…', ...parts.slice(-5)] : parts).join('.');
}

/** With the `u` flag a surrogate pair is one code point, so this class matches lone surrogates only. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** `String.prototype.isWellFormed` (ES2024; the jsii build targets ES2022's library). */
export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** Plain objects and arrays, as JSON and query parsing make them (not Buffers or streams). */
export function isContainer(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function notWellFormed(field: string): Error {
  return badRequest(`${field}: must be well-formed Unicode (it holds a lone UTF-16 surrogate)`);
}
