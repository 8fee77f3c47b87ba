import { z } from 'zod';
import { registryRoute } from './route';
import { Reply } from '../../http/routes';
import { MetricsFormat, renderMetrics, renderOpenApi } from '../../operations';

/**
 * The registry's operational endpoints: `/metrics` (Prometheus text by default, as scrapers expect
 * at that path; the root token, since the figures describe the whole server) and its OpenAPI
 * document at `/api/v1/internal/specs/openapi` (public, like the API it describes).
 */
export const operationsRoutes = [
  registryRoute({
    method: 'GET',
    path: '/metrics',
    query: z.object({ format: MetricsFormat }),
    permission: 'admin',
    transaction: 'none',
    handler: async ({ query }, ctx) => {
      const { contentType, body } = await renderMetrics(ctx.engine, query.format || 'prometheus');
      return new Reply(200, body, { 'content-type': contentType });
    },
  }),
  registryRoute({
    method: 'GET',
    path: '/api/v1/internal/specs/openapi',
    permission: 'public',
    transaction: 'none',
    handler: async () => {
      const { contentType, body } = renderOpenApi('registry');
      return new Reply(200, body, { 'content-type': contentType });
    },
  }),
];
