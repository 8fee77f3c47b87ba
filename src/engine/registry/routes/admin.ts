import { z } from 'zod';
import { hashPassword } from '../../crypto';
import { notFound, invalid } from '../../http/errors';
import { setMaintenance, inMaintenance } from '../limits';
import { DESCRIPTION, EMAIL, PHONE, USERNAME } from '../names';
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

const UpdateOwner = z.object({
  owner: z.object({
    delinquent: z.boolean().optional(),
    two_factor: z.union([z.literal('sms'), z.literal(false), z.null()]).optional(),
    phone: PHONE.nullish(),
    profile_markdown: DESCRIPTION.optional(),
  }),
});

const Maintenance = z.object({ maintenance: z.object({ enabled: z.boolean() }) });

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
  registryRoute({
    method: 'PUT',
    path: '/api/v1/admin/owners/:username',
    params: z.object({ username: USERNAME }),
    body: UpdateOwner,
    permission: 'admin',
    // Flags only an administrator sets: billing standing (402), two-factor login, phone, profile.
    handler: async ({ params, body: { owner: changes } }, ctx) => {
      const owner = await findOwner(ctx.db, params.username);
      if (!owner) throw notFound(`Owner ${params.username} not found`);
      const phone = changes.phone === undefined ? owner.phone : changes.phone;
      const twoFactor = changes.two_factor === undefined ? owner.two_factor_method : changes.two_factor || null;
      if (twoFactor && owner.kind !== 'user') throw invalid('owner.two_factor: only users log in, not organizations');
      if (twoFactor && !phone) throw invalid('owner.two_factor: the user needs a phone number for SMS codes (owner.phone)');
      const delinquent = changes.delinquent === undefined ? owner.delinquent : changes.delinquent ? 1 : 0;
      const profile = changes.profile_markdown ?? owner.profile_markdown;
      await ctx.db.run(
        `UPDATE registry_owners SET phone = ?, two_factor_method = ?, delinquent = ?, profile_markdown = ?, updated_at = ?
         WHERE id = ?`,
        [phone, twoFactor, delinquent, profile, ctx.now, owner.id],
      );
      return { ...publicOwner(owner), delinquent: delinquent === 1, two_factor: twoFactor, profile_markdown: profile };
    },
  }),
  registryRoute({
    method: 'GET',
    path: '/api/v1/admin/maintenance',
    permission: 'admin',
    transaction: 'read',
    handler: async (_input, ctx) => ({ maintenance: { enabled: await inMaintenance(ctx.engine, ctx.db) } }),
  }),
  registryRoute({
    method: 'PUT',
    path: '/api/v1/admin/maintenance',
    body: Maintenance,
    permission: 'admin',
    handler: async ({ body }, ctx) => {
      await setMaintenance(ctx.db, ctx.engine, body.maintenance.enabled);
      return { maintenance: { enabled: body.maintenance.enabled } };
    },
  }),
];
