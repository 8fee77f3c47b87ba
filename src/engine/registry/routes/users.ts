import { z } from 'zod';
import { sha256Hex } from '../../crypto';
import { notFound } from '../../http/errors';
import { renderMarkdown } from '../../markdown';
import { canRead } from '../access';
import { BoxRow, serializeBoxList } from '../boxes';
import { USERNAME } from '../names';
import { findOwner } from '../owners';
import { RegistryApi } from '../providers';
import { registryRoute } from './route';

/** GET /api/{v1,v2}/user/:username: a user or an organization, with the boxes the caller may see. */
export const userRoutesFor = (api: RegistryApi) => [
  registryRoute({
    method: 'GET',
    path: `/api/${api}/user/:username`,
    params: z.object({ username: USERNAME }),
    permission: 'public',
    transaction: 'read',
    handler: async ({ params }, ctx) => {
      const owner = await findOwner(ctx.db, params.username);
      if (!owner) throw notFound(`User ${params.username} not found`);
      const boxes = await ctx.db.all<BoxRow>('SELECT * FROM registry_boxes WHERE owner_id = ? ORDER BY name_lower', [owner.id]);
      // Privacy is per owner: one check decides for every private box.
      const seesPrivate = await canRead(ctx.db, ctx.actor, owner, true);
      const visible = boxes.filter((b) => b.is_private === 0 || seesPrivate).map((box) => ({ owner, box }));
      return {
        username: owner.username,
        // Gravatar's identicon of the e-mail (or the name, for organizations); no e-mail is revealed.
        avatar_url: `https://www.gravatar.com/avatar/${sha256Hex((owner.email ?? owner.username).trim().toLowerCase())}?d=identicon`,
        profile_html: renderMarkdown(owner.profile_markdown),
        profile_markdown: owner.profile_markdown,
        boxes: await serializeBoxList(ctx.db, ctx.baseUrl, visible, api),
      };
    },
  }),
];

export const userRoutes = userRoutesFor('v1');
