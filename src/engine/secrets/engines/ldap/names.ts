import { badInput } from '../../core/request';

/** The public service's role and set names: word characters, `-`, `.` and `/` inside (hierarchical). */
const NAME = /^\w(?:[\w.\-/]*\w)?$/;

/** A role or set name from the URL, checked and lowercased as the public service does. */
export function ldapName(kind: string, raw: string): string {
  if (!NAME.test(raw) || raw.length > 512 || raw.includes('//')) {
    throw badInput(`${kind} name "${raw.slice(0, 64)}" is invalid: use letters, digits, "_", "-", "." and "/" between them (at most 512)`);
  }
  return raw.toLowerCase();
}
