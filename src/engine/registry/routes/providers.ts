import type { Readable } from 'node:stream';
import { z } from 'zod';
import { CHECKSUM_TYPES } from '../../blobs/blob-store';
import { HangarError, invalid, notFound } from '../../http/errors';
import { Db } from '../../storage';
import { RegistryActor } from '../access';
import { BOX_URL, PROVIDER_NAME } from '../names';
import { deleteProvider, findProvider, insertProvider, ProviderFields, ProviderRow, serializeProvider, updateProvider } from '../providers';
import { blobStore, finishDirectUpload, prepareUpload, receiveUpload } from '../uploads';
import { findVisibleVersion, VersionPlace, VersionRow } from '../versions';
import { registryRoute } from './route';
import { VersionPath, writableVersion } from './versions';

const ProviderPath = VersionPath.extend({ provider: PROVIDER_NAME });
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
const CreateProvider = z.object({ provider: z.object({ name: PROVIDER_NAME, ...providerFields }) });
const UpdateProvider = z.object({ provider: z.object({ name: PROVIDER_NAME.nullish(), ...providerFields }) });

function fieldsOf(p: { name?: string | null; url?: string | null; checksum?: string | null; checksum_type?: string | null }): ProviderFields {
  return {
    name: p.name ?? undefined,
    url: p.url ?? undefined,
    checksum: p.checksum ?? undefined,
    checksumType: (p.checksum_type || undefined) as ProviderFields['checksumType'],
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
  const provider = await findProvider(db, found.version.id, params.provider);
  if (!provider) throw notFound(`Provider ${params.provider} of ${params.username}/${params.name} ${params.version} not found`);
  return { ...found, provider };
}

const render = (baseUrl: string, f: VersionPlace & { version: VersionRow }, p: ProviderRow) =>
  serializeProvider(baseUrl, f.owner, f.box, f.version, p);

const PROVIDER = '/api/v1/box/:username/:name/version/:version/provider/:provider';

/** Providers of a version, their uploads (plain and direct) and the upload target itself. */
export const providerRoutes = [
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
    path: '/api/v1/box/:username/:name/version/:version/providers',
    params: VersionPath,
    body: CreateProvider,
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
    body: UpdateProvider,
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
      const callbackBase = `${ctx.baseUrl}/api/v1/box/${found.owner.username}/${found.box.name}/version/${found.version.version}/provider/${found.provider.name}/upload/direct`;
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
  registryRoute({
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
  }),
];

function uploaded(p: ProviderRow) {
  return { success: true, name: p.name, hosted: p.blob_id !== null, size: p.blob_size, checksum_type: p.blob_digest_type, checksum: p.blob_digest };
}
