import type { Readable } from 'node:stream';
import { z } from 'zod';
import { CHECKSUM_TYPES } from '../../blobs/blob-store';
import { HangarError, invalid, notFound } from '../../http/errors';
import { Db } from '../../storage';
import { RegistryActor } from '../access';
import { ARCHITECTURE, BOX_URL, PROVIDER_NAME } from '../names';
import {
  deleteProvider,
  findProvider,
  insertProvider,
  ProviderFields,
  ProviderRow,
  RegistryApi,
  serializeProvider,
  updateProvider,
} from '../providers';
import { blobStore, finishDirectUpload, prepareUpload, receiveUpload } from '../uploads';
import { findVisibleVersion, VersionPlace, VersionRow } from '../versions';
import { registryRoute } from './route';
import { VersionPath, writableVersion } from './versions';

// v2's paths name the architecture; v1's do not, and mean the name's default architecture.
const ProviderPath = VersionPath.extend({ provider: PROVIDER_NAME, architecture: ARCHITECTURE.optional() });
type ProviderParams = z.infer<typeof ProviderPath>;

/** md5, sha1, sha256, sha384, sha512 in any case; stored and returned lower case ("" clears). */
const CHECKSUM_TYPE = z
  .string()
  .transform((s) => s.toLowerCase())
  .pipe(z.enum(['', ...CHECKSUM_TYPES], { error: 'must be one of md5, sha1, sha256, sha384, sha512' }));

// null means "not given" (the Vagrant CLI sends null for fields it has no value for); "" clears.
const providerFields = {
  url: z.union([z.literal(''), BOX_URL]).nullish(),
  checksum: z.string().max(128, 'must be at most 128 characters').nullish(),
  checksum_type: CHECKSUM_TYPE.nullish(),
};
// v2 adds the architecture (on update: the new one) and the default flag; v1 ignores both.
const architectureFields = { architecture: ARCHITECTURE.nullish(), default_architecture: z.boolean().nullish() };
const BODIES = {
  v1: {
    create: z.object({ provider: z.object({ name: PROVIDER_NAME, ...providerFields }) }),
    update: z.object({ provider: z.object({ name: PROVIDER_NAME.nullish(), ...providerFields }) }),
  },
  v2: {
    create: z.object({ provider: z.object({ name: PROVIDER_NAME, ...providerFields, ...architectureFields }) }),
    update: z.object({ provider: z.object({ name: PROVIDER_NAME.nullish(), ...providerFields, ...architectureFields }) }),
  },
};

function fieldsOf(p: {
  name?: string | null;
  url?: string | null;
  checksum?: string | null;
  checksum_type?: string | null;
  architecture?: string | null;
  default_architecture?: boolean | null;
}): ProviderFields {
  return {
    name: p.name ?? undefined,
    url: p.url ?? undefined,
    checksum: p.checksum ?? undefined,
    checksumType: (p.checksum_type || undefined) as ProviderFields['checksumType'],
    architecture: p.architecture ?? undefined,
    defaultArchitecture: p.default_architecture ?? undefined,
  };
}

type Found = VersionPlace & { version: VersionRow; provider: ProviderRow };

async function visibleProvider(db: Db, actor: RegistryActor | undefined, params: ProviderParams): Promise<Found> {
  const found = await findVisibleVersion(db, actor, params.username, params.name, params.version);
  return withProvider(db, found, params);
}

async function writableProvider(db: Db, actor: RegistryActor | undefined, params: ProviderParams): Promise<Found> {
  return withProvider(db, await writableVersion(db, actor, params), params);
}

async function withProvider(db: Db, found: VersionPlace & { version: VersionRow }, params: ProviderParams): Promise<Found> {
  const provider = await findProvider(db, found.version.id, params.provider, params.architecture);
  if (!provider) {
    const what = params.architecture ? `${params.provider} (${params.architecture})` : params.provider;
    throw notFound(`Provider ${what} of ${params.username}/${params.name} ${params.version} not found`);
  }
  return { ...found, provider };
}

/**
 * Providers of a version and their uploads (plain and direct), under
 * /api/v1/box/:username/:name/version/:version/provider/:provider (the default architecture) and
 * /api/v2/box/:username/:name/version/:version/provider/:provider/:architecture: the same handlers.
 */
export const providerRoutesFor = (api: RegistryApi) => {
  const VERSION_PATH = `/api/${api}/box/:username/:name/version/:version`;
  const PROVIDER = `${VERSION_PATH}/provider/:provider${api === 'v2' ? '/:architecture' : ''}`;
  const render = (baseUrl: string, f: VersionPlace & { version: VersionRow }, p: ProviderRow) =>
    serializeProvider(baseUrl, f.owner, f.box, f.version, p, api);
  return [
    registryRoute({
      method: 'GET',
      path: PROVIDER,
      params: ProviderPath,
      permission: 'public',
      transaction: 'read',
      handler: async ({ params }, ctx) => {
        const found = await visibleProvider(ctx.db, ctx.actor, params);
        return render(ctx.baseUrl, found, found.provider);
      },
    }),
    registryRoute({
      method: 'POST',
      path: `${VERSION_PATH}/providers`,
      params: VersionPath,
      body: BODIES[api].create,
      permission: 'user',
      handler: async ({ params, body: { provider } }, ctx) => {
        const found = await writableVersion(ctx.db, ctx.actor, params);
        const row = await insertProvider(ctx.db, found.version, { ...fieldsOf(provider), name: provider.name }, ctx.now);
        return render(ctx.baseUrl, found, row);
      },
    }),
    registryRoute({
      method: 'PUT',
      path: PROVIDER,
      params: ProviderPath,
      body: BODIES[api].update,
      permission: 'user',
      handler: async ({ params, body: { provider } }, ctx) => {
        const found = await writableProvider(ctx.db, ctx.actor, params);
        const store = () => blobStore(ctx.engine);
        const row = await updateProvider(ctx.db, found.version, found.provider, fieldsOf(provider), ctx.now, (id, type) =>
          store().digest(id, type),
        );
        return render(ctx.baseUrl, found, row);
      },
    }),
    registryRoute({
      method: 'DELETE',
      path: PROVIDER,
      params: ProviderPath,
      permission: 'user',
      handler: async ({ params }, ctx) => {
        const found = await writableProvider(ctx.db, ctx.actor, params);
        await deleteProvider(ctx.db, found.version, found.provider, ctx.now);
        return render(ctx.baseUrl, found, found.provider);
      },
    }),
    registryRoute({
      method: 'GET',
      path: `${PROVIDER}/upload`,
      params: ProviderPath,
      permission: 'user',
      handler: async ({ params }, ctx) => {
        const found = await writableProvider(ctx.db, ctx.actor, params);
        return prepareUpload(ctx.db, ctx.engine, ctx.baseUrl, found.provider, '', false, ctx.now);
      },
    }),
    registryRoute({
      method: 'GET',
      path: `${PROVIDER}/upload/direct`,
      params: ProviderPath,
      permission: 'user',
      handler: async ({ params }, ctx) => {
        const found = await writableProvider(ctx.db, ctx.actor, params);
        const p = found.provider;
        const providerPath = `${p.name}${api === 'v2' ? `/${p.architecture}` : ''}`;
        const callbackBase = `${ctx.baseUrl}/api/${api}/box/${found.owner.username}/${found.box.name}/version/${found.version.version}/provider/${providerPath}/upload/direct`;
        return prepareUpload(ctx.db, ctx.engine, ctx.baseUrl, found.provider, callbackBase, true, ctx.now);
      },
    }),
    registryRoute({
      method: 'PUT',
      path: `${PROVIDER}/upload/direct/:upload_id`,
      params: ProviderPath.extend({ upload_id: z.uuid('must be an upload id') }),
      permission: 'user',
      handler: async ({ params }, ctx) => {
        const found = await writableProvider(ctx.db, ctx.actor, params);
        const row = await finishDirectUpload(ctx.db, ctx.engine, found.provider, params.upload_id, ctx.now);
        return render(ctx.baseUrl, found, row);
      },
    }),
  ];
};

/** The target of every upload_path (v1 and v2): a one-time URL, found by its token. */
const uploadTarget = registryRoute({
  method: 'PUT',
  path: '/api/v1/uploads/:upload_id',
  params: z.object({ upload_id: z.uuid('must be an upload id') }),
  query: z.object({ token: z.string({ error: 'token is required: use the whole upload_path' }).min(1).max(200) }),
  permission: 'public',
  transaction: 'none',
  stream: true,
  handler: async ({ params, query, body }, ctx) => {
    const stream = body as Readable | undefined;
    // No body at all, or a JSON one (parsed, size-limited): not a box file.
    if (!stream || typeof stream.pipe !== 'function') {
      throw invalid('The request carries no box file: PUT the file itself to upload_path (not as application/json)');
    }
    try {
      return uploaded(await receiveUpload(ctx.engine, params.upload_id, query.token, stream));
    } catch (err) {
      // The rest of a refused body is not read: the connection cannot carry another request.
      if (err instanceof HangarError) throw new HangarError(err.status, err.messages, { ...err.headers, connection: 'close' });
      stream.destroy();
      throw err;
    }
  },
});

export const providerRoutes = [...providerRoutesFor('v1'), uploadTarget];

function uploaded(p: ProviderRow) {
  return { success: true, name: p.name, hosted: p.blob_id !== null, size: p.blob_size, checksum_type: p.blob_digest_type, checksum: p.blob_digest };
}
