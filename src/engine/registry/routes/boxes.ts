import { z } from 'zod';
import { notFound, invalid } from '../../http/errors';
import { requireWrite } from '../access';
import { deleteBox, findBox, findVisibleBox, insertBox, serializeBox, updateBox } from '../boxes';
import { BOX_NAME, DESCRIPTION, SHORT_DESCRIPTION, USERNAME } from '../names';
import { findOwner } from '../owners';
import { RegistryApi } from '../providers';
import { findBoxPlace } from '../versions';
import { registryRoute } from './route';

const BoxPath = z.object({ username: USERNAME, name: BOX_NAME });

// `is_private` is the spec's name; `private` (the name in responses) is accepted too.
const boxFields = {
  short_description: SHORT_DESCRIPTION.nullish(),
  description: DESCRIPTION.nullish(),
  is_private: z.boolean().nullish(),
  private: z.boolean().nullish(),
};
const BOX_KEYS = ['username', 'name', ...Object.keys(boxFields)];

/**
 * The spec nests the fields under `box`; the Vagrant CLI (vagrant_cloud gem 3.x) sends them at the
 * top level. Both are accepted: a body with box fields and no `box` is read as if nested.
 */
function boxBody<T extends z.ZodType>(schema: T) {
  return z.preprocess((body) => {
    if (body && typeof body === 'object' && !Array.isArray(body) && !('box' in body) && BOX_KEYS.some((k) => k in body)) {
      return { box: body };
    }
    return body;
  }, schema);
}

const CreateBox = boxBody(z.object({ box: z.object({ username: USERNAME.nullish(), name: BOX_NAME, ...boxFields }) }));
const UpdateBox = boxBody(z.object({ box: z.object({ name: BOX_NAME.nullish(), ...boxFields }) }));

function privacy(fields: { is_private?: boolean | null; private?: boolean | null }): boolean | undefined {
  return fields.is_private ?? fields.private ?? undefined;
}

/** /api/{v1,v2}/boxes and /api/{v1,v2}/box/:username/:name: one table per API version, the same handlers. */
export const boxRoutesFor = (api: RegistryApi) => [
  registryRoute({
    method: 'POST',
    path: `/api/${api}/boxes`,
    body: CreateBox,
    permission: 'user',
    handler: async ({ body: { box } }, ctx) => {
      const actor = ctx.actor!;
      const username = box.username ?? (actor.kind === 'user' ? actor.user.username : undefined);
      if (!username) throw invalid('box.username is required');
      const owner = await findOwner(ctx.db, username);
      if (!owner) throw notFound(`Owner ${username} not found`);
      await requireWrite(ctx.db, actor, owner, false);
      if (await findBox(ctx.db, owner.id, box.name)) throw invalid(`box.name: "${box.name}" has already been taken`);
      const row = await insertBox(
        ctx.db,
        owner,
        {
          name: box.name,
          shortDescription: box.short_description ?? '',
          description: box.description ?? '',
          isPrivate: privacy(box) ?? true,
        },
        ctx.now,
      );
      return serializeBox(ctx.db, ctx.baseUrl, owner, row, { withVersions: true, writable: true, api });
    },
  }),
  registryRoute({
    method: 'GET',
    path: `/api/${api}/box/:username/:name`,
    params: BoxPath,
    permission: 'public',
    transaction: 'read',
    handler: async ({ params }, ctx) => {
      const { owner, box, writable } = await findBoxPlace(ctx.db, ctx.actor, params.username, params.name);
      return serializeBox(ctx.db, ctx.baseUrl, owner, box, { withVersions: true, writable, api });
    },
  }),
  registryRoute({
    method: 'PUT',
    path: `/api/${api}/box/:username/:name`,
    params: BoxPath,
    body: UpdateBox,
    permission: 'user',
    // Fields left out keep their value (the spec's "default true" for is_private applies at creation).
    handler: async ({ params, body: { box } }, ctx) => {
      const found = await findVisibleBox(ctx.db, ctx.actor, params.username, params.name);
      await requireWrite(ctx.db, ctx.actor, found.owner, found.box.is_private === 1);
      const row = await updateBox(
        ctx.db,
        found.box,
        {
          name: box.name ?? undefined,
          shortDescription: box.short_description ?? undefined,
          description: box.description ?? undefined,
          isPrivate: privacy(box),
        },
        ctx.now,
      );
      return serializeBox(ctx.db, ctx.baseUrl, found.owner, row, { withVersions: true, writable: true, api });
    },
  }),
  registryRoute({
    method: 'DELETE',
    path: `/api/${api}/box/:username/:name`,
    params: BoxPath,
    permission: 'user',
    handler: async ({ params }, ctx) => {
      const { owner, box } = await findVisibleBox(ctx.db, ctx.actor, params.username, params.name);
      await requireWrite(ctx.db, ctx.actor, owner, box.is_private === 1);
      const body = await serializeBox(ctx.db, ctx.baseUrl, owner, box, { withVersions: true, writable: true, api });
      await deleteBox(ctx.db, box, ctx.now);
      return body;
    },
  }),
];

export const boxRoutes = boxRoutesFor('v1');
