import type { z } from 'zod';
import type { Clients } from './clients';
import { differences, Outcome, ResourceKind } from './kind';

/**
 * The common shape of a secrets object kind that lives at one API path: read it, compare it with
 * the desired state, write it when it differs, delete it when it exists. The engines' kinds
 * (`secrets-*-kinds.ts`) describe only their paths and field mappings.
 */

export interface PathKindSpec<D> {
  readonly kind: string;
  readonly deleteOrder: number;
  readonly desired: z.ZodType<D>;
  /** The API path of a key (see `named` and `atMount`). */
  readonly path: (key: string) => string;
  /**
   * The live object (API `data`) in the desired shape; `desired` fills what cannot be read back;
   * undefined when the data shows no object. @default the data as it is
   */
  readonly fromApi?: (data: Record<string, any>, desired?: D) => D | undefined;
  /** The write body; `created` tells a first write (secrets sent only then). @default the desired state */
  readonly toApi?: (desired: D, created: boolean) => Record<string, unknown>;
  /** Where writes go when not `path(key)` (typed write endpoints). */
  readonly writePath?: (key: string, desired: D) => string;
  /** Whether the live object must be deleted and written anew (a field the API cannot change). */
  readonly replace?: (desired: D, actual: D) => boolean;
  /** Writes even when nothing readable differs (a password that cannot be read back). */
  readonly alwaysWrite?: boolean;
  /** Runs after each write (a follow-up operation on the object). */
  readonly afterWrite?: (clients: Clients, key: string, desired: D) => Promise<void>;
}

/** `mount/name` of a role's key. */
export function splitRoleKey(key: string): [string, string] {
  const at = key.lastIndexOf('/');
  if (at <= 0 || at === key.length - 1) throw new Error(`role key "${key}" is not of the form mount/name`);
  return [key.slice(0, at), key.slice(at + 1)];
}

/** A named object under a mount: key `<mount>/<name>` at `<prefix><mount>/<dir>/<name>`. */
export function named(dir: string, prefix = ''): (key: string) => string {
  return (key) => {
    const [mount, name] = splitRoleKey(key);
    return `${prefix}${mount}/${dir}/${name}`;
  };
}

/** A mount's settings object: key `<mount>` at `<mount>/<path>`. */
export function atMount(path: string): (key: string) => string {
  return (key) => `${key}/${path}`;
}

export function pathKind<D extends object>(spec: PathKindSpec<D>): ResourceKind<D> {
  const read = async (clients: Clients, key: string, desired?: D) => {
    const data = (await clients.secrets.read(spec.path(key)))?.data;
    if (!data) return undefined;
    return spec.fromApi ? spec.fromApi(data, desired) : (data as D);
  };
  return {
    kind: spec.kind,
    deleteOrder: spec.deleteOrder,
    desired: spec.desired,
    read,
    async upsert(clients, key, desired): Promise<Outcome> {
      const actual = await read(clients, key, desired);
      if (actual && !spec.alwaysWrite && differences(desired, actual).length === 0) return 'unchanged';
      const replaced = actual !== undefined && spec.replace?.(desired, actual) === true;
      if (replaced) await clients.secrets.delete(spec.path(key));
      const body = spec.toApi ? spec.toApi(desired, actual === undefined || replaced) : (desired as Record<string, unknown>);
      await clients.secrets.write(spec.writePath?.(key, desired) ?? spec.path(key), body);
      await spec.afterWrite?.(clients, key, desired);
      return actual ? 'updated' : 'created';
    },
    async delete(clients, key) {
      const existed = (await read(clients, key)) !== undefined;
      if (existed) await clients.secrets.delete(spec.path(key));
      return existed;
    },
  };
}
