import { badInput } from '../../core/request';
import { EngineRoute, SecretsRequest } from '../../core/types';
import { listResponse } from '../directory/names';

/** The public service's role and set names: word characters, `-`, `.` and `/` inside (hierarchical). */
const NAME = /^\w(?:[\w.\-/]*\w)?$/;

/** A role or set name from the URL, checked and lowercased as the public service does. */
export function ldapName(kind: string, raw: string): string {
  if (!NAME.test(raw) || raw.length > 512 || raw.includes('//')) {
    throw badInput(`${kind} name "${raw.slice(0, 64)}" is invalid: use letters, digits, "_", "-", "." and "/" between them (at most 512)`);
  }
  return raw.toLowerCase();
}

/**
 * The `exists` and `list` handlers of a role path stored at `<prefix>/<name>` (`role`, `static-role`):
 * a name that is not valid exists as nothing, and a list shows the sub-folders of hierarchical names.
 */
export function roleLookups(prefix: string): Pick<EngineRoute, 'exists' | 'list'> {
  return {
    exists: async (req: SecretsRequest) => {
      try {
        return await req.store.exists(`${prefix}/${ldapName('role', req.params.name)}`);
      } catch {
        return false;
      }
    },
    list: (req: SecretsRequest) => listResponse(req.store, `${prefix}/${req.params.name.toLowerCase()}/`, true),
  };
}
