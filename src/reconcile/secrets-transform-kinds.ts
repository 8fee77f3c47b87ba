import { z } from 'zod';
import { fromEnv } from './secrets-kinds';
import { named, pathKind } from './secrets-path-kind';

/**
 * The transform engine's managed objects (alphabets, templates, transformations, roles, stores),
 * keyed `<mount>/<name>`. Deletion order: roles, then transformations, then templates and stores,
 * then alphabets, which is the order the engine's deletion guards need. Store passwords never travel
 * in a payload: the payload names environment variables, read here at deploy time.
 */

const AlphabetDesired = z.object({ alphabet: z.string().min(2) });
const TemplateDesired = z.object({ type: z.literal('regex').default('regex'), pattern: z.string().min(1), alphabet: z.string().default('') });
const TransformationDesired = z.object({
  type: z.enum(['fpe', 'masking', 'tokenization']),
  template: z.string().default(''),
  tweakSource: z.string().default(''),
  maskingCharacter: z.string().default(''),
  allowedRoles: z.array(z.string()).default([]),
  mappingMode: z.string().default(''),
  maxTtl: z.number().int().min(0).default(0),
  stores: z.array(z.string()).default([]),
});
type TransformationDesired = z.infer<typeof TransformationDesired>;
const RoleDesired = z.object({ transformations: z.array(z.string()).default([]) });
const StoreDesired = z.object({
  connectionString: z.string().min(1),
  username: z.string().min(1),
  passwordEnv: z.string().min(1),
  schema: z.string().default('public'),
  maxOpenConnections: z.number().int().default(4),
  maxIdleConnections: z.number().int().default(4),
  maxConnectionLifetime: z.number().int().min(0).default(0),
  schemaUsername: z.string().default(''),
  schemaPasswordEnv: z.string().default(''),
});
type StoreDesired = z.infer<typeof StoreDesired>;

export const secretsTransformAlphabetKind = pathKind({
  kind: 'secrets.transform-alphabet',
  path: named('alphabet'),
  deleteOrder: 41,
  desired: AlphabetDesired,
  fromApi: (d) => ({ alphabet: d.alphabet }),
  toApi: (d) => ({ alphabet: d.alphabet }),
});

export const secretsTransformTemplateKind = pathKind({
  kind: 'secrets.transform-template',
  path: named('template'),
  deleteOrder: 42,
  desired: TemplateDesired,
  fromApi: (d) => ({ type: d.type, pattern: d.pattern, alphabet: d.alphabet ?? '' }),
  toApi: (d) => ({ type: d.type, pattern: d.pattern, alphabet: d.alphabet }),
});

export const secretsTransformStoreKind = pathKind<StoreDesired>({
  kind: 'secrets.transform-store',
  path: named('store'),
  deleteOrder: 42,
  desired: StoreDesired,
  fromApi: (d, desired) => ({
    connectionString: d.connection_string,
    schema: d.schema,
    maxOpenConnections: d.max_open_connections,
    maxIdleConnections: d.max_idle_connections,
    maxConnectionLifetime: d.max_connection_lifetime,
    // Not shown by the API: taken as given.
    username: desired?.username ?? '',
    passwordEnv: desired?.passwordEnv ?? '',
    schemaUsername: desired?.schemaUsername ?? '',
    schemaPasswordEnv: desired?.schemaPasswordEnv ?? '',
  }),
  toApi: (d) => ({
    type: 'sql',
    driver: 'postgres',
    supported_transformations: ['tokenization'],
    connection_string: d.connectionString,
    username: d.username,
    password: fromEnv(d.passwordEnv, 'passwordEnv'),
    schema: d.schema,
    max_open_connections: d.maxOpenConnections,
    max_idle_connections: d.maxIdleConnections,
    max_connection_lifetime: d.maxConnectionLifetime,
  }),
  // The password cannot be read back to compare, so the store is always written.
  alwaysWrite: true,
  afterWrite: async (clients, key, d) => {
    if (!d.schemaUsername) return;
    await clients.secrets.write(`${named('store')(key)}/schema`, {
      username: d.schemaUsername,
      password: fromEnv(d.schemaPasswordEnv, 'schemaPasswordEnv'),
      transformation_type: 'tokenization',
    });
  },
});

export const secretsTransformTransformationKind = pathKind<TransformationDesired>({
  kind: 'secrets.transform-transformation',
  path: named('transformation'),
  deleteOrder: 43,
  desired: TransformationDesired,
  fromApi: (d) => ({
    type: d.type,
    template: d.templates?.[0] ?? '',
    tweakSource: d.tweak_source ?? '',
    maskingCharacter: d.masking_character ?? '',
    allowedRoles: d.allowed_roles ?? [],
    mappingMode: d.mapping_mode ?? '',
    maxTtl: d.max_ttl ?? 0,
    stores: d.stores ?? [],
  }),
  toApi: (d) => {
    switch (d.type) {
      case 'fpe':
        return { template: d.template, tweak_source: d.tweakSource, allowed_roles: d.allowedRoles };
      case 'masking':
        return { template: d.template, masking_character: d.maskingCharacter, allowed_roles: d.allowedRoles };
      default:
        return { mapping_mode: d.mappingMode, max_ttl: d.maxTtl, stores: d.stores, allowed_roles: d.allowedRoles };
    }
  },
  writePath: (key, d) => named(`transformations/${d.type}`)(key),
  // The type is immutable in the engine: a changed type replaces the transformation.
  replace: (desired, actual) => desired.type !== actual.type,
});

export const secretsTransformRoleKind = pathKind({
  kind: 'secrets.transform-role',
  path: named('role'),
  deleteOrder: 44,
  desired: RoleDesired,
  fromApi: (d) => ({ transformations: d.transformations ?? [] }),
  toApi: (d) => ({ transformations: d.transformations }),
});

export const SECRETS_TRANSFORM_KINDS = [
  secretsTransformAlphabetKind,
  secretsTransformTemplateKind,
  secretsTransformStoreKind,
  secretsTransformTransformationKind,
  secretsTransformRoleKind,
] as const;
