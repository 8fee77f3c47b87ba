import { z } from 'zod';
import { TopicPermission, VhostPermission } from './management';
import { badInput, missing } from '../../core/request';
import { EngineRoute, SecretsRequest } from '../../core/types';

/** The public service's role names (framework.GenericNameRegex), case-sensitive. */
const NAME = /^\w([\w.-]{0,126}\w)?$/;

/** A role: what the issued users get. Permission patterns are the broker's regular expressions. */
export interface RabbitmqRole {
  /** Comma-separated user tags (`management`, `administrator`, ...), passed to the broker as written. */
  readonly tags: string;
  readonly vhosts: Record<string, VhostPermission> | null;
  readonly vhost_topics: Record<string, Record<string, TopicPermission>> | null;
}

const pattern = z.string({ message: 'must be a string (a regular expression)' }).optional().default('');
const VhostsJson = z.record(z.string(), z.object({ configure: pattern, write: pattern, read: pattern }));
const TopicsJson = z.record(z.string(), z.record(z.string(), z.object({ write: pattern, read: pattern })));
const jsonString = z.string({ message: 'must be a JSON-encoded string' });

const RoleBody = z.object({ tags: z.string().optional(), vhosts: jsonString.optional(), vhost_topics: jsonString.optional() });

/** Decodes a JSON-encoded map field; a clear 400 naming the field when it is not JSON or not the shape. */
function decode<T>(field: string, raw: string, schema: z.ZodType<T>, shape: string): T | null {
  if (raw.trim() === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw badInput(`failed to unmarshal ${field}: ${(err as Error).message}; expected ${shape}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw badInput(`failed to unmarshal ${field}: ${[field, ...issue.path.map(String)].join('.')}: ${issue.message}; expected ${shape}`);
  }
  return parsed.data;
}

export function roleName(req: SecretsRequest): string {
  const name = req.params.name;
  if (!NAME.test(name)) throw badInput(`role name "${name}" is invalid: use letters, digits, "_", "-" and "." (not first or last)`);
  return name;
}

export const readRole = (store: SecretsRequest['store'], name: string) => store.get<RabbitmqRole>(`role/${name}`);

async function writeRole(req: SecretsRequest<z.infer<typeof RoleBody>>): Promise<undefined> {
  const name = roleName(req);
  const tags = req.body.tags ?? '';
  const rawVhosts = req.body.vhosts ?? '';
  // As the public service: tags or vhosts; topic permissions alone grant nothing to connect with.
  if (tags === '' && rawVhosts === '') throw badInput('both tags and vhosts not specified');
  const role: RabbitmqRole = {
    tags,
    vhosts: decode('vhosts', rawVhosts, VhostsJson, '{"<vhost>": {"configure": "<regex>", "write": "<regex>", "read": "<regex>"}}'),
    vhost_topics: decode('vhost_topics', req.body.vhost_topics ?? '', TopicsJson, '{"<vhost>": {"<exchange>": {"write": "<regex>", "read": "<regex>"}}}'),
  };
  await req.store.put(`role/${name}`, role);
  return undefined;
}

/** `roles` (LIST) and `roles/:name`. A write replaces the whole role, as the public service does. */
export const roleRoutes: EngineRoute[] = [
  {
    pattern: 'roles',
    readOnly: true,
    list: async (req) => {
      const keys = (await req.store.list('role/')).filter((k) => !k.endsWith('/'));
      // An empty list is a 404, as the public service answers it.
      if (keys.length === 0) throw missing();
      return { data: { keys } };
    },
  },
  {
    pattern: 'roles/:name',
    body: RoleBody,
    write: writeRole,
    read: async (req) => {
      const role = await readRole(req.store, roleName(req));
      if (!role) throw missing();
      return { data: { tags: role.tags, vhosts: role.vhosts, vhost_topics: role.vhost_topics } };
    },
    delete: async (req) => {
      await req.store.delete(`role/${roleName(req)}`);
      return undefined;
    },
  },
];
