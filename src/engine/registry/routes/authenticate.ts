import { z } from 'zod';
import { registryRoute } from './route';
import { verifyPassword } from '../../crypto';
import type { Engine } from '../../engine';
import { badRequest, unauthorized } from '../../http/errors';
import { Reply } from '../../http/routes';
import { findUserByLogin, Owner } from '../owners';
import { deleteToken, issueToken } from '../tokens';
import { DELIVERY_METHODS, requestCode, TwoFactorRequired, verifyCode } from '../two-factor';

const Login = z.object({
  login: z.string().min(1, 'must not be empty').max(254),
  password: z.string().min(1, 'must not be empty').max(1024),
});

const CreateToken = z.object({
  token: z.object({ description: z.string().max(1000).nullish() }).nullish(),
  user: Login,
  two_factor: z.object({ code: z.string().max(64).nullish() }).nullish(),
});

const RequestCode = z.object({
  two_factor: z.object({
    delivery_method: z.enum(DELIVERY_METHODS, { error: `must be ${DELIVERY_METHODS.join(' or ')}` }),
  }),
  user: Login,
});

/** The user behind login and password, or the same 401 for an unknown login and a wrong password. */
async function checkPassword(engine: Engine, login: string, password: string): Promise<Owner> {
  const user = await engine.storage.tx((db) => findUserByLogin(db, login), { readOnly: true });
  if (!(await verifyPassword(password, user?.password_hash)) || !user) throw unauthorized('Invalid login or password');
  return user;
}

/** GET /api/v1/authenticate (and /api/v2/authenticate, routes/v2.ts): validates the caller's token. */
export const validateTokenRoute = registryRoute({
  method: 'GET',
  path: '/api/v1/authenticate',
  permission: 'user',
  transaction: 'read',
  // The Vagrant CLI reads the caller's username from here (`user.username`).
  handler: async (_input, ctx) => new Reply(200, ctx.actor?.kind === 'user' ? { user: { username: ctx.actor.user.username } } : {}),
});

/** /api/v1/authenticate (create, validate and delete tokens) and /api/v1/two-factor/request-code. */
export const authenticateRoutes = [
  registryRoute({
    method: 'POST',
    path: '/api/v1/authenticate',
    body: CreateToken,
    permission: 'public',
    // The password check is slow on purpose; it runs outside any transaction.
    transaction: 'none',
    handler: async ({ body }, ctx) => {
      const user = await checkPassword(ctx.engine, body.user.login, body.user.password);
      if (user.two_factor_method) {
        const code = body.two_factor?.code;
        if (!code) throw new TwoFactorRequired();
        if (!(await verifyCode(ctx.engine, user, code))) throw unauthorized('Invalid or expired two-factor code');
      }
      const token = await ctx.engine.storage.tx((db) => issueToken(db, user, body.token?.description ?? '', ctx.now));
      return new Reply(200, token);
    },
  }),
  validateTokenRoute,
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
  registryRoute({
    method: 'POST',
    path: '/api/v1/two-factor/request-code',
    body: RequestCode,
    permission: 'public',
    transaction: 'none',
    handler: async ({ body }, ctx) => {
      const user = await checkPassword(ctx.engine, body.user.login, body.user.password);
      const destination = await requestCode(ctx.engine, user);
      return { two_factor: { obfuscated_destination: destination } };
    },
  }),
];
