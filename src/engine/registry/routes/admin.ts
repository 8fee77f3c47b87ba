import { z } from 'zod';
import { hashPassword } from '../../crypto';
import { notFound, invalid } from '../../http/errors';
import { EMAIL, PHONE, USERNAME } from '../names';
import { addMember, createOwner, findOwner, publicOwner } from '../owners';
import { registryRoute } from './route';

const CreateUser = z.object({
  user: z.object({
    username: USERNAME,
    password: z.string().min(8, 'must be at least 8 characters').max(1024),
    email: EMAIL.nullish(),
    phone: PHONE.nullish(),
  }),
});

const CreateOrganization = z.object({ organization: z.object({ username: USERNAME, owner: USERNAME }) });

/**
 * /api/v1/admin/*: Hangar's own administration (the public service has sign-up pages instead).
 * Only the root token, or the local CLI on a data directory, may call these.
 */
export const adminRoutes = [
  registryRoute({
    method: 'POST',
    path: '/api/v1/admin/users',
    body: CreateUser,
    permission: 'admin',
    transaction: 'none',
    handler: async ({ body: { user } }, ctx) => {
      const passwordHash = await hashPassword(user.password);
      const owner = await ctx.engine.storage.tx((db) =>
        createOwner(
          db,
          { username: user.username, kind: 'user', email: user.email ?? undefined, phone: user.phone ?? undefined, passwordHash },
          ctx.now,
        ),
      );
      return publicOwner(owner);
    },
  }),
  registryRoute({
    method: 'POST',
    path: '/api/v1/admin/organizations',
    body: CreateOrganization,
    permission: 'admin',
    handler: async ({ body: { organization } }, ctx) => {
      const owner = await findOwner(ctx.db, organization.owner);
      if (!owner) throw notFound(`User ${organization.owner} not found`);
      if (owner.kind !== 'user') throw invalid('organization.owner: must be a user, not an organization');
      const org = await createOwner(ctx.db, { username: organization.username, kind: 'organization' }, ctx.now);
      await addMember(ctx.db, org.id, owner.id, 'owner');
      return publicOwner(org);
    },
  }),
];
