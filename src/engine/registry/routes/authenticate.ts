import { z } from 'zod';
import { verifyPassword } from '../../crypto';
import { badRequest, unauthorized } from '../../http/errors';
import { Reply } from '../../http/routes';
import { findUserByLogin } from '../owners';
import { deleteToken, issueToken } from '../tokens';
import { registryRoute } from './route';

const CreateToken = z.object({
  token: z.object({ description: z.string().max(1000).nullish() }).nullish(),
  user: z.object({
    login: z.string().min(1, 'must not be empty').max(254),
    password: z.string().min(1, 'must not be empty').max(1024),
  }),
  two_factor: z.object({ code: z.string().max(64).nullish() }).nullish(),
});

/** /api/v1/authenticate: create, validate and delete tokens. */
export const authenticateRoutes = [
  registryRoute({
    method: 'POST',
    path: '/api/v1/authenticate',
    body: CreateToken,
    permission: 'public',
    // The password check is slow on purpose; it runs outside any transaction.
    transaction: 'none',
    handler: async ({ body }, ctx) => {
      const user = await ctx.engine.storage.tx((db) => findUserByLogin(db, body.user.login), { readOnly: true });
      if (!(await verifyPassword(body.user.password, user?.password_hash)) || !user) {
        throw unauthorized('Invalid login or password');
      }
      const token = await ctx.engine.storage.tx((db) => issueToken(db, user, body.token?.description ?? '', ctx.now));
      return new Reply(200, token);
    },
  }),
  registryRoute({
    method: 'GET',
    path: '/api/v1/authenticate',
    permission: 'user',
    transaction: 'read',
    handler: async () => new Reply(200, {}),
  }),
  registryRoute({
    method: 'DELETE',
    path: '/api/v1/authenticate',
    permission: 'user',
    handler: async (_input, ctx) => {
      const actor = ctx.actor!;
      if (actor.kind !== 'user' || !actor.tokenId) throw badRequest('Only a user token can be deleted this way');
      await deleteToken(ctx.db, actor.tokenId);
      return new Reply(204);
    },
  }),
];
