import { z } from 'zod';
import { badInput, missing } from '../../core/request';
import { MountStore } from '../../core/store';
import { EngineRoute, Handler, SecretsRequest } from '../../core/types';
import { globMatch } from '../jwt/claims';

/**
 * What the transform engine's object kinds (alphabets, templates, transformations, roles, stores)
 * share: names, the reserved `builtin/` prefix, LIST with a `filter` glob, read/delete by name.
 */

export type Kind = 'alphabet' | 'template' | 'transformation' | 'role' | 'store';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/;
export const BUILTIN = 'builtin/';

/** A name from the URL that may be written: not reserved, letters, digits, `_.@-`. */
export function writableName(kind: Kind, name: string): string {
  if (name.startsWith(BUILTIN)) throw badInput(`${kind} name "${name}": the "${BUILTIN}" prefix is reserved for built-in ${kind}s`);
  if (!NAME.test(name)) throw badInput(`${kind} name "${name}" is invalid: use letters, digits, ".", "_", "-", "@" (up to 128)`);
  return name;
}

/** A stored object of a kind, undefined when absent. */
export function getObject<T>(store: MountStore, kind: Kind, name: string): Promise<T | undefined> {
  return NAME.test(name) ? store.get<T>(`${kind}/${name}`) : Promise.resolve(undefined);
}

/** Every stored object of a kind with its name (for the deletion guards and the encoders). */
export async function allObjects<T>(store: MountStore, kind: Kind): Promise<Array<[string, T]>> {
  const names = (await store.list(`${kind}/`)).filter((k) => !k.endsWith('/'));
  const out: Array<[string, T]> = [];
  for (const name of names) {
    const value = await store.get<T>(`${kind}/${name}`);
    if (value !== undefined) out.push([name, value]);
  }
  return out;
}

const ListQuery = z.object({ filter: z.string().max(1024).optional() }).passthrough();

/** LIST `<kind>` with Vault's optional `filter` glob (`*` matches any run of characters). */
export function listRoute(kind: Kind, pattern: string = kind): EngineRoute {
  return {
    pattern,
    query: ListQuery,
    readOnly: true,
    list: async (req: SecretsRequest<{ filter?: string }>) => {
      const filter = req.body.filter || '*';
      const keys = (await req.store.list(`${kind}/`)).filter((k) => !k.endsWith('/') && globMatch(filter, k));
      return { data: { keys } };
    },
  };
}

/**
 * `<kind>/*name`: read (built-ins too, from `builtins`), write, delete guarded by `inUse` (the
 * message naming what still uses the object).
 */
export function objectRoute<T>(options: {
  kind: Kind;
  pattern?: string;
  body: z.ZodType;
  builtins?: Readonly<Record<string, T>>;
  show: (value: T) => Record<string, unknown>;
  write: Handler;
  inUse?: (req: SecretsRequest, name: string) => Promise<string | undefined>;
  /** Runs before the object is deleted (its tokens, its pools). */
  cleanup?: (req: SecretsRequest, name: string, value: T) => Promise<void>;
}): EngineRoute {
  const { kind } = options;
  return {
    pattern: options.pattern ?? `${kind}/*name`,
    body: options.body,
    exists: async (req) => (await getObject(req.store, kind, req.params.name)) !== undefined,
    read: async (req) => {
      const name = req.params.name;
      const value = options.builtins?.[name] ?? (await getObject<T>(req.store, kind, name));
      if (value === undefined) throw missing();
      return { data: options.show(value) };
    },
    write: options.write,
    delete: async (req) => {
      const name = writableName(kind, req.params.name);
      const value = await getObject<T>(req.store, kind, name);
      if (value === undefined) return undefined;
      const user = await options.inUse?.(req, name);
      if (user) throw badInput(`${kind} "${name}" cannot be deleted: it is used by ${user}`);
      await options.cleanup?.(req, name, value);
      await req.store.delete(`${kind}/${name}`);
      return undefined;
    },
  };
}

/** The one object a reference names (built-in or stored), or a 400 naming the field. */
export async function resolve<T>(store: MountStore, kind: Kind, name: string, field: string, builtins?: Readonly<Record<string, T>>): Promise<T> {
  const value = builtins?.[name] ?? (await getObject<T>(store, kind, name));
  if (value === undefined) throw badInput(`${field}: ${kind} "${name}" does not exist`);
  return value;
}
