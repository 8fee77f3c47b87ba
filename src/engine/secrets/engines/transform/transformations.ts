import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { allObjects, listRoute, objectRoute, writableName } from './objects';
import { deleteTokens, INTERNAL_STORE } from './tokenization';
import type { TokenKeys } from './tokenization-keys';
import { commaList, duration, flexibleBoolean } from '../../core/durations';
import { badInput } from '../../core/request';
import { EngineRoute, SecretsRequest } from '../../core/types';

export const TYPES = ['fpe', 'masking', 'tokenization'] as const;
export type TransformationType = (typeof TYPES)[number];
export const TWEAK_SOURCES = ['supplied', 'generated', 'internal'] as const;

export interface Transformation {
  readonly type: TransformationType;
  readonly template: string;
  readonly tweak_source: (typeof TWEAK_SOURCES)[number];
  readonly masking_character: string;
  readonly allowed_roles: string[];
  readonly mapping_mode: 'default' | 'exportable';
  /** Seconds; 0 is no expiry. */
  readonly max_ttl: number;
  readonly stores: string[];
  /** AES-256 key (base64), made at creation and sealed with the transformation; never shown. */
  readonly key: string;
  /** The `internal` tweak source's 7 bytes (base64). */
  readonly tweak: string;
  /** Shown as written (Vault 1.12+); deletion is not blocked by Hangar. */
  readonly deletion_allowed?: boolean;
  /** When the transformation (its first key version) was made, epoch ms; absent on older ones. */
  readonly created?: number;
  /** Tokenization: the key's versions after the first (`key`) and their policy, see tokenization-keys.ts. */
  readonly token_keys?: TokenKeys;
  /**
   * Tokenization: a value and expiration always give the same token (tokenization.ts `convergentToken`);
   * chosen at creation (absent on older ones: false).
   */
  readonly convergent?: boolean;
}

const TransformationBody = z.object({
  type: z.string().nullish(),
  template: z.string().max(256).nullish(),
  templates: commaList.nullish(),
  tweak_source: z.enum(TWEAK_SOURCES, { message: 'must be supplied, generated or internal' }).nullish(),
  masking_character: z.string().max(16).nullish(),
  allowed_roles: commaList.nullish(),
  mapping_mode: z.enum(['default', 'exportable'], { message: 'must be default or exportable' }).nullish(),
  max_ttl: duration().nullish(),
  stores: commaList.nullish(),
  deletion_allowed: flexibleBoolean.nullish(),
  convergent: flexibleBoolean.nullish(),
});
type TransformationBody = z.infer<typeof TransformationBody>;

/** Create or update; `fixedType` comes from the typed endpoints' path. */
async function write(req: SecretsRequest<TransformationBody>, fixedType?: string): Promise<undefined> {
  const name = writableName('transformation', req.params.name);
  const b = req.body;
  const old = await req.store.get<Transformation>(`transformation/${name}`);
  const given = fixedType ?? b.type ?? old?.type;
  if (!given) throw badInput('type is required: fpe, masking or tokenization');
  if (!(TYPES as readonly string[]).includes(given)) throw badInput(`type: "${given}" is not supported: use fpe, masking or tokenization`);
  const type = given as TransformationType;
  if (old && old.type !== type) throw badInput(`type cannot be changed (transformation "${name}" is ${old.type}, not ${type}): delete and recreate it`);
  const template = b.template ?? b.templates?.[0] ?? old?.template ?? '';
  const next: Transformation = {
    type,
    template: type === 'tokenization' ? '' : template,
    tweak_source: b.tweak_source ?? old?.tweak_source ?? 'supplied',
    masking_character: Array.from(b.masking_character || old?.masking_character || '*')[0],
    allowed_roles: b.allowed_roles ?? old?.allowed_roles ?? [],
    mapping_mode: b.mapping_mode ?? old?.mapping_mode ?? 'default',
    max_ttl: b.max_ttl ?? old?.max_ttl ?? 0,
    stores: b.stores ?? old?.stores ?? [INTERNAL_STORE],
    key: old?.key ?? randomBytes(32).toString('base64'),
    tweak: old?.tweak ?? randomBytes(7).toString('base64'),
    deletion_allowed: b.deletion_allowed ?? old?.deletion_allowed ?? false,
    created: old ? old.created : req.now,
    ...(old?.token_keys ? { token_keys: old.token_keys } : {}),
    ...(type === 'tokenization' ? { convergent: old ? (old.convergent ?? false) : (b.convergent ?? false) } : {}),
  };
  // Tokens already issued were made one way: the choice is made once, when the transformation is created.
  if (old && type === 'tokenization' && b.convergent != null && b.convergent !== next.convergent) {
    throw badInput(`convergent cannot be changed after the transformation is created (it is ${next.convergent}): delete and recreate it`);
  }
  if (type !== 'tokenization') {
    // The template (and its alphabet) may be made later: Vault looks them up when values are encoded.
    if (!next.template) throw badInput(`template is required for ${type} transformations`);
  } else {
    if (next.stores.length === 0) throw badInput('stores: needs at least one store (builtin/internal is Hangar\'s own storage)');
    // A store may be made later, as a template may: Vault looks the stores up when values are tokenized.
  }
  await req.store.put(`transformation/${name}`, next);
  return undefined;
}

/** The read shape: the spec's fields of the type (`templates` an array), never the key. */
function show(t: Transformation): Record<string, unknown> {
  const templates = t.template ? [t.template] : [];
  const common = { type: t.type, allowed_roles: t.allowed_roles, templates, deletion_allowed: t.deletion_allowed ?? false };
  switch (t.type) {
    case 'fpe':
      return { ...common, tweak_source: t.tweak_source };
    case 'masking':
      return { ...common, masking_character: t.masking_character };
    default:
      return { ...common, mapping_mode: t.mapping_mode, max_ttl: t.max_ttl, stores: t.stores, convergent: t.convergent ?? false };
  }
}

/** The shared read/write/delete of a transformation, on the generic and the typed paths. */
function transformationRoute(pattern: string, typed: boolean): EngineRoute {
  return objectRoute<Transformation>({
    kind: 'transformation',
    pattern,
    body: TransformationBody,
    show,
    write: (req) => {
      if (typed && !(TYPES as readonly string[]).includes(req.params.type)) throw badInput(`unsupported transformation type "${req.params.type}": use fpe, masking or tokenization`);
      return write(req as SecretsRequest<TransformationBody>, typed ? req.params.type : undefined);
    },
    inUse: async (req, name) => {
      const users = (await allObjects<{ transformations?: string[] }>(req.store, 'role')).filter(([, r]) => r.transformations?.includes(name));
      return users.length ? `role ${users.map(([n]) => `"${n}"`).join(', ')}` : undefined;
    },
    cleanup: (req, name, t) => (t.type === 'tokenization' ? deleteTokens(req.store, name) : Promise.resolve()),
  });
}

export const transformationRoutes: EngineRoute[] = [
  listRoute('transformation'),
  transformationRoute('transformation/:name', false),
  // The typed endpoints, under the spec's singular path and the public service's plural one (hvac).
  transformationRoute('transformation/:type/:name', true),
  transformationRoute('transformations/:type/:name', true),
];
