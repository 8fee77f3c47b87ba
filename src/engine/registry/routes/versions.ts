import { z } from 'zod';
import { Db } from '../../storage';
import { RegistryActor, requireWrite } from '../access';
import { BOX_NAME, DESCRIPTION, USERNAME, VERSION } from '../names';
import { providersOf, RegistryApi } from '../providers';
import {
  deleteVersion,
  findBoxPlace,
  findVisibleVersion,
  insertVersion,
  releaseVersion,
  revokeVersion,
  serializeVersion,
  updateVersion,
  VersionPlace,
  VersionRow,
} from '../versions';
import { registryRoute } from './route';

const BoxPath = z.object({ username: USERNAME, name: BOX_NAME });
export const VersionPath = BoxPath.extend({ version: VERSION });

const CreateVersion = z.object({ version: z.object({ version: VERSION, description: DESCRIPTION.nullish() }) });
const UpdateVersion = z.object({ version: z.object({ version: VERSION.nullish(), description: DESCRIPTION.nullish() }) });

type VersionParams = z.infer<typeof VersionPath>;

/** The version for a change: 404 when the caller may not see it, 403/402 when it may not change it. */
export async function writableVersion(
  db: Db,
  actor: RegistryActor | undefined,
  params: VersionParams,
): Promise<VersionPlace & { version: VersionRow }> {
  const found = await findVisibleVersion(db, actor, params.username, params.name, params.version);
  await requireWrite(db, actor, found.owner, found.box.is_private === 1);
  return found;
}

async function render(db: Db, baseUrl: string, place: VersionPlace, version: VersionRow, api: RegistryApi) {
  return serializeVersion(baseUrl, place.owner, place.box, version, await providersOf(db, [version.id]), api);
}

/**
 * /api/{v1,v2}/box/:username/:name/versions and /api/{v1,v2}/box/:username/:name/version/:version[/release|/revoke]:
 * one table per API version, the same handlers.
 */
export const versionRoutesFor = (api: RegistryApi) => [
  registryRoute({
    method: 'GET',
    path: `/api/${api}/box/:username/:name/version/:version`,
    params: VersionPath,
    permission: 'public',
    transaction: 'read',
    handler: async ({ params }, ctx) => {
      const found = await findVisibleVersion(ctx.db, ctx.actor, params.username, params.name, params.version);
      return render(ctx.db, ctx.baseUrl, found, found.version, api);
    },
  }),
  registryRoute({
    method: 'POST',
    path: `/api/${api}/box/:username/:name/versions`,
    params: BoxPath,
    body: CreateVersion,
    permission: 'user',
    handler: async ({ params, body: { version } }, ctx) => {
      const place = await findBoxPlace(ctx.db, ctx.actor, params.username, params.name);
      await requireWrite(ctx.db, ctx.actor, place.owner, place.box.is_private === 1);
      const row = await insertVersion(ctx.db, place.box, version.version, version.description ?? '', ctx.now);
      return render(ctx.db, ctx.baseUrl, place, row, api);
    },
  }),
  registryRoute({
    method: 'PUT',
    path: `/api/${api}/box/:username/:name/version/:version`,
    params: VersionPath,
    body: UpdateVersion,
    permission: 'user',
    handler: async ({ params, body: { version } }, ctx) => {
      const found = await writableVersion(ctx.db, ctx.actor, params);
      const row = await updateVersion(
        ctx.db,
        found.version,
        { version: version.version ?? undefined, description: version.description ?? undefined },
        ctx.now,
      );
      return render(ctx.db, ctx.baseUrl, found, row, api);
    },
  }),
  registryRoute({
    method: 'DELETE',
    path: `/api/${api}/box/:username/:name/version/:version`,
    params: VersionPath,
    permission: 'user',
    handler: async ({ params }, ctx) => {
      const found = await writableVersion(ctx.db, ctx.actor, params);
      const body = await render(ctx.db, ctx.baseUrl, found, found.version, api);
      await deleteVersion(ctx.db, found.version, ctx.now);
      return body;
    },
  }),
  registryRoute({
    method: 'PUT',
    path: `/api/${api}/box/:username/:name/version/:version/release`,
    params: VersionPath,
    permission: 'user',
    handler: async ({ params }, ctx) => {
      const found = await writableVersion(ctx.db, ctx.actor, params);
      return render(ctx.db, ctx.baseUrl, found, await releaseVersion(ctx.db, found.version, ctx.now), api);
    },
  }),
  registryRoute({
    method: 'PUT',
    path: `/api/${api}/box/:username/:name/version/:version/revoke`,
    params: VersionPath,
    permission: 'user',
    handler: async ({ params }, ctx) => {
      const found = await writableVersion(ctx.db, ctx.actor, params);
      return render(ctx.db, ctx.baseUrl, found, await revokeVersion(ctx.db, found.version, ctx.now), api);
    },
  }),
];

export const versionRoutes = versionRoutesFor('v1');
