import { z } from 'zod';
import { forbidden, invalid, notFound } from '../../http/errors';
import { Db } from '../../storage';
import { RegistryActor } from '../access';
import { USERNAME } from '../names';
import { addMember, findOwner, memberRole, membersOf, Owner, removeMember } from '../owners';
import { registryRoute } from './route';

const OrgPath = z.object({ organization: USERNAME });
const MemberPath = OrgPath.extend({ member: USERNAME });
const SetMember = z.object({ member: z.object({ role: z.enum(['owner', 'member'], { error: 'must be owner or member' }).default('member') }).default({ role: 'member' }) });

/** The organization, if the caller may see its members (a member, or the administrator); 404 otherwise. */
async function organization(db: Db, actor: RegistryActor | undefined, name: string): Promise<{ org: Owner; role?: string }> {
  const org = await findOwner(db, name);
  if (!org || org.kind !== 'organization') throw notFound(`Organization ${name} not found`);
  if (actor?.kind === 'admin') return { org, role: 'owner' };
  const role = actor ? await memberRole(db, org.id, actor.user.id) : undefined;
  if (!role) throw notFound(`Organization ${name} not found`);
  return { org, role };
}

async function manage(db: Db, actor: RegistryActor | undefined, name: string): Promise<Owner> {
  const { org, role } = await organization(db, actor, name);
  if (role !== 'owner') throw forbidden(`Only an owner of ${org.username} may change its members`);
  return org;
}

/**
 * Membership decides who writes an organization's boxes: members write, owners also manage the
 * members. /api/v1/organization/:organization/members[/:member]
 */
export const organizationRoutes = [
  registryRoute({
    method: 'GET',
    path: '/api/v1/organization/:organization/members',
    params: OrgPath,
    permission: 'user',
    transaction: 'read',
    handler: async ({ params }, ctx) => {
      const { org } = await organization(ctx.db, ctx.actor, params.organization);
      return { organization: org.username, members: await membersOf(ctx.db, org.id) };
    },
  }),
  registryRoute({
    method: 'PUT',
    path: '/api/v1/organization/:organization/members/:member',
    params: MemberPath,
    body: SetMember,
    permission: 'user',
    handler: async ({ params, body }, ctx) => {
      const org = await manage(ctx.db, ctx.actor, params.organization);
      const user = await findOwner(ctx.db, params.member);
      if (!user || user.kind !== 'user') throw invalid(`member: ${params.member} is not a user`);
      await addMember(ctx.db, org.id, user.id, body.member.role);
      return { organization: org.username, members: await membersOf(ctx.db, org.id) };
    },
  }),
  registryRoute({
    method: 'DELETE',
    path: '/api/v1/organization/:organization/members/:member',
    params: MemberPath,
    permission: 'user',
    handler: async ({ params }, ctx) => {
      const org = await manage(ctx.db, ctx.actor, params.organization);
      const user = await findOwner(ctx.db, params.member);
      if (!user || !(await memberRole(ctx.db, org.id, user.id))) throw notFound(`${params.member} is not a member of ${org.username}`);
      await removeMember(ctx.db, org.id, user.id);
      const members = await membersOf(ctx.db, org.id);
      if (!members.some((m) => m.role === 'owner')) throw invalid(`member: ${params.member} is the last owner of ${org.username}`);
      return { organization: org.username, members };
    },
  }),
];
