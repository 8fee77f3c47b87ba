import { z } from 'zod';
import { Clients } from './clients';
import { differences, Outcome, ResourceKind } from './kind';
import { fromEnv } from './secrets-kinds';
import { named, pathKind } from './secrets-path-kind';

/**
 * The message broker engine's managed objects: its connection and lease settings (one per mount)
 * and its roles. The administrator's password never travels in a payload: the payload names an
 * environment variable, read here at deploy time.
 */

const ConfigDesired = z.object({
  connectionUri: z.string().min(1),
  username: z.string().min(1),
  passwordEnv: z.string().min(1),
  verifyConnection: z.boolean().default(true),
  passwordPolicy: z.string().default(''),
  leaseTtl: z.number().int().min(0).default(0),
  leaseMaxTtl: z.number().int().min(0).default(0),
});
type ConfigDesired = z.infer<typeof ConfigDesired>;

async function readLease(clients: Clients, mount: string) {
  const lease = await clients.secrets.read(`${mount}/config/lease`);
  return { leaseTtl: Number(lease?.data?.ttl ?? 0), leaseMaxTtl: Number(lease?.data?.max_ttl ?? 0) };
}

export const secretsRabbitmqConfigKind: ResourceKind<ConfigDesired> = {
  kind: 'secrets.rabbitmq-config',
  deleteOrder: 20,
  desired: ConfigDesired,
  async read(clients, key, desired) {
    const conn = await clients.secrets.read(`${key}/config/connection`);
    if (!conn?.data) return undefined;
    return {
      connectionUri: conn.data.connection_uri,
      username: conn.data.username,
      // The password is never shown: taken as given.
      passwordEnv: desired?.passwordEnv ?? '',
      verifyConnection: conn.data.verify_connection,
      passwordPolicy: conn.data.password_policy ?? '',
      ...(await readLease(clients, key)),
    };
  },
  async upsert(clients, key, desired): Promise<Outcome> {
    const existed = (await clients.secrets.read(`${key}/config/connection`)) !== undefined;
    // The password cannot be read back to compare, so the connection is always written.
    await clients.secrets.write(`${key}/config/connection`, {
      connection_uri: desired.connectionUri,
      username: desired.username,
      password: fromEnv(desired.passwordEnv, 'passwordEnv'),
      verify_connection: desired.verifyConnection,
      password_policy: desired.passwordPolicy,
    });
    const lease = { leaseTtl: desired.leaseTtl, leaseMaxTtl: desired.leaseMaxTtl };
    if (differences(lease, await readLease(clients, key)).length) {
      await clients.secrets.write(`${key}/config/lease`, { ttl: desired.leaseTtl, max_ttl: desired.leaseMaxTtl });
    }
    return existed ? 'updated' : 'created';
  },
  // The settings go with their mount; the API has no delete for them.
  delete: async () => true,
};

/** Maps with their keys sorted, so that a role compares equal however its maps were ordered. */
function sorted<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted((value as Record<string, unknown>)[k])])) as T;
}

const permission = z.object({ configure: z.string().default(''), write: z.string().default(''), read: z.string().default('') });
const topic = z.object({ write: z.string().default(''), read: z.string().default('') });
const RoleDesired = z
  .object({
    tags: z.string().default(''),
    vhosts: z.record(z.string(), permission).nullable().default(null),
    vhostTopics: z.record(z.string(), z.record(z.string(), topic)).nullable().default(null),
  })
  .transform(sorted);
type RoleDesired = z.infer<typeof RoleDesired>;

export const secretsRabbitmqRoleKind = pathKind<RoleDesired>({
  kind: 'secrets.rabbitmq-role',
  deleteOrder: 30,
  desired: RoleDesired,
  path: named('roles'),
  fromApi: (d) => sorted({ tags: d.tags ?? '', vhosts: d.vhosts ?? null, vhostTopics: d.vhost_topics ?? null }),
  toApi: (d) => ({
    tags: d.tags,
    vhosts: d.vhosts ? JSON.stringify(d.vhosts) : '',
    vhost_topics: d.vhostTopics ? JSON.stringify(d.vhostTopics) : '',
  }),
});

export const SECRETS_RABBITMQ_KINDS = [secretsRabbitmqConfigKind, secretsRabbitmqRoleKind] as const;
