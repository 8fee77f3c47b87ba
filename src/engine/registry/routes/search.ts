import { z } from 'zod';
import { serializeBoxList } from '../boxes';
import { ARCHITECTURE, PROVIDER_NAME } from '../names';
import { RegistryApi } from '../providers';
import { searchBoxes } from '../search';
import { registryRoute } from './route';

const int = (name: string, min: number, max: number) =>
  z.coerce
    .number({ error: 'must be a whole number' })
    .int('must be a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`)
    .describe(name);

const SearchQuery = z.object({
  q: z.string().max(200, 'must be at most 200 characters').optional(),
  provider: z.union([z.literal(''), PROVIDER_NAME]).optional(),
  architecture: z.union([z.literal(''), ARCHITECTURE]).optional(),
  sort: z.enum(['downloads', 'created', 'updated'], { error: 'must be one of downloads, created, updated' }).default('downloads'),
  order: z.enum(['desc', 'asc'], { error: 'must be desc or asc' }).default('desc'),
  limit: int('limit', 1, 100).default(10),
  page: int('page', 1, 1_000_000).default(1),
});

/**
 * GET /api/{v1,v2}/search: `{boxes: [Box]}`, each with `current_version` and without `versions`;
 * `architecture` filters as `provider` does (documented for v2, harmless in v1).
 */
export const searchRoutesFor = (api: RegistryApi) => [
  registryRoute({
    method: 'GET',
    path: `/api/${api}/search`,
    query: SearchQuery,
    permission: 'public',
    transaction: 'read',
    handler: async ({ query }, ctx) => {
      // An empty q, provider or architecture (as some clients send) means none.
      const found = await searchBoxes(ctx.db, ctx.engine.storage.dialect, ctx.actor, {
        ...query,
        q: query.q || undefined,
        provider: query.provider || undefined,
        architecture: query.architecture || undefined,
      });
      return { boxes: await serializeBoxList(ctx.db, ctx.baseUrl, found, api) };
    },
  }),
];

export const searchRoutes = searchRoutesFor('v1');
