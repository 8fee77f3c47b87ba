import { z } from 'zod';
import { HangarError, notFound } from '../../http/errors';
import { Reply, RequestContext } from '../../http/routes';
import { RegistryActor, requireInGoodStanding } from '../access';
import { findVisibleBox } from '../boxes';
import { ARCHITECTURE, BOX_NAME, PROVIDER_NAME, USERNAME, VERSION } from '../names';
import { downloadUrl, findProvider, providersOf } from '../providers';
import { blobStore } from '../uploads';
import { findVisibleVersion, VersionRow } from '../versions';
import { registryRoute } from './route';

const BoxPath = z.object({ username: USERNAME, name: BOX_NAME });
const DownloadPath = BoxPath.extend({
  version: VERSION,
  // `virtualbox.box` as the public registry's download URLs end; the bare name works too.
  provider: z
    .string()
    .max(70)
    .transform((s) => s.replace(/\.box$/i, ''))
    .pipe(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'must be a provider name, optionally followed by .box')),
});
const ArchitectureDownloadPath = BoxPath.extend({ version: VERSION, provider: PROVIDER_NAME, architecture: ARCHITECTURE });

/**
 * The box metadata document that `vagrant box add USER/NAME` reads (VAGRANT_SERVER_URL/USER/NAME):
 * released versions only, each provider once per architecture with its download URL, checksum,
 * `architecture` and `default_architecture` (Vagrant 2.4+ picks by architecture). A name's default
 * architecture comes last: Vagrant before 2.4 keeps the last entry of a provider name.
 */
const metadata = registryRoute({
  method: ['GET', 'HEAD'],
  path: '/:username/:name',
  params: BoxPath,
  permission: 'public',
  transaction: 'read',
  handler: async ({ params }, ctx) => {
    const { owner, box } = await findVisibleBox(ctx.db, ctx.actor, params.username, params.name);
    if (box.is_private === 1) requireInGoodStanding(owner);
    const versions = await ctx.db.all<VersionRow>(
      "SELECT * FROM registry_versions WHERE box_id = ? AND status = 'active' ORDER BY sort_key",
      [box.id],
    );
    const providers = await providersOf(ctx.db, versions.map((v) => v.id));
    const body = {
      name: `${owner.username}/${box.name}`,
      description: box.description_markdown,
      short_description: box.short_description,
      versions: versions.map((v) => ({
        version: v.version,
        status: v.status,
        description_html: null as string | null,
        description_markdown: v.description_markdown,
        providers: providers
          .filter((p) => p.version_id === v.id && (p.blob_id !== null || p.original_url !== null))
          .map((p) => ({
            name: p.name,
            url: downloadUrl(ctx.baseUrl, owner, box, v, p, 'v2'),
            checksum: p.checksum,
            checksum_type: p.checksum_type,
            architecture: p.architecture,
            default_architecture: p.default_architecture === 1,
          })),
      })),
    };
    return new Reply(200, JSON.stringify(body), { 'content-type': 'application/json; charset=utf-8' });
  },
});

/** bytes=a-b, a- or -n of one range; undefined for no or several ranges (then the whole file is sent). */
function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  const m = header && /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

/**
 * A provider's download URL: the hosted file (with HEAD and single Range requests), or a redirect
 * to its external URL. A GET from the first byte counts as a download of the provider and its box.
 * Without an architecture (v1's URL), the name's default architecture.
 */
async function serveDownload(
  params: z.infer<typeof BoxPath> & { version: string; provider: string; architecture?: string },
  ctx: RequestContext<RegistryActor>,
): Promise<Reply> {
  const found = await findVisibleVersion(ctx.db, ctx.actor, params.username, params.name, params.version);
  if (found.box.is_private === 1) requireInGoodStanding(found.owner);
  const provider = await findProvider(ctx.db, found.version.id, params.provider, params.architecture);
  if (!provider) {
    const what = params.architecture ? `${params.provider} (${params.architecture})` : params.provider;
    throw notFound(`Provider ${what} of ${params.username}/${params.name} ${params.version} not found`);
  }
  const head = ctx.request.method === 'HEAD';
  const count = async () => {
    await ctx.db.run('UPDATE registry_providers SET downloads = downloads + 1 WHERE id = ?', [provider.id]);
    await ctx.db.run('UPDATE registry_boxes SET downloads = downloads + 1 WHERE id = ?', [found.box.id]);
  };
  if (!provider.blob_id) {
    if (!provider.original_url) throw notFound(`Provider ${provider.name} has no box file yet: upload one or set its url`);
    if (!head) await count();
    return new Reply(302, undefined, { location: provider.original_url });
  }
  const store = blobStore(ctx.engine);
  const size = await store.size(provider.blob_id);
  if (size === undefined) throw new HangarError(500, [`The box file of provider ${provider.name} is missing from the blob store`]);
  const headers: Record<string, string> = {
    'content-type': 'application/octet-stream',
    'accept-ranges': 'bytes',
    'etag': `"${provider.blob_id}"`,
    'last-modified': new Date(provider.updated_at).toUTCString(),
    'content-disposition': `attachment; filename="${found.box.name}-${found.version.version}-${provider.name}.box"`,
  };
  const range = parseRange(ctx.request.headers.range, size);
  if (range === 'unsatisfiable') {
    throw new HangarError(416, [`Range not satisfiable: the file has ${size} bytes`], { 'content-range': `bytes */${size}` });
  }
  if (range) {
    headers['content-range'] = `bytes ${range.start}-${range.end}/${size}`;
    headers['content-length'] = String(range.end - range.start + 1);
    if (head) return new Reply(206, undefined, headers);
    if (range.start === 0) await count();
    return new Reply(206, store.read(provider.blob_id, range), headers);
  }
  headers['content-length'] = String(size);
  if (head) return new Reply(200, undefined, headers);
  await count();
  return new Reply(200, store.read(provider.blob_id), headers);
}

const download = registryRoute({
  method: ['GET', 'HEAD'],
  path: '/:username/boxes/:name/versions/:version/providers/:provider',
  params: DownloadPath,
  permission: 'public',
  handler: ({ params }, ctx) => serveDownload(params, ctx),
});

/** The download URL of one architecture, as the public registry's metadata lists it. */
const architectureDownload = registryRoute({
  method: ['GET', 'HEAD'],
  path: '/:username/boxes/:name/versions/:version/providers/:provider/:architecture/vagrant.box',
  params: ArchitectureDownloadPath,
  permission: 'public',
  handler: ({ params }, ctx) => serveDownload(params, ctx),
});

export const downloadRoutes = [metadata, download, architectureDownload];
