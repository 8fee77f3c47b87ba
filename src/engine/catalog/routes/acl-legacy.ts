import { HangarError } from '../../http/errors';
import { catalogRoute } from '../route';

/** The legacy ACL endpoints removed in version 1.11.0: 410 Gone, as the public service answers. */
const REMOVED: ReadonlyArray<[method: 'GET' | 'PUT' | 'POST', path: string]> = [
  ['PUT', '/v1/acl/create'],
  ['PUT', '/v1/acl/update'],
  ['PUT', '/v1/acl/destroy/:id'],
  ['GET', '/v1/acl/info/:id'],
  ['PUT', '/v1/acl/clone/:id'],
  ['GET', '/v1/acl/list'],
  ['GET', '/v1/acl/rules/translate'],
  ['POST', '/v1/acl/rules/translate'],
  ['GET', '/v1/acl/rules/translate/:id'],
];

export const aclLegacyRoutes = REMOVED.map(([method, path]) =>
  catalogRoute({
    method,
    path,
    permission: 'public',
    transaction: 'read',
    handler: async (_input, ctx) => {
      const url = ctx.request.url.split('?')[0];
      throw new HangarError(410, [`Endpoint ${url} for the legacy ACL system was removed in version 1.11.0.`]);
    },
  }),
);
