import { Reply } from '../../http/routes';
import { renderOpenApi } from '../../operations';
import { catalogRoute, CommonQuery } from '../route';

/** /v1/internal/specs/openapi: this API's OpenAPI document (the secrets API's path, under /v1/). */
export const internalRoutes = [
  catalogRoute({
    method: 'GET',
    path: '/v1/internal/specs/openapi',
    query: CommonQuery,
    permission: 'public',
    transaction: 'none',
    handler: async () => {
      const { contentType, body } = renderOpenApi('catalog');
      return new Reply(200, body, { 'content-type': contentType });
    },
  }),
];
