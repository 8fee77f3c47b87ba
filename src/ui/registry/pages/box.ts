import { ApiClient, ApiError } from '../../shared/api';
import { CopyText, Facts } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { formatBytes, formatCount, formatTime } from '../../shared/format';
import { html } from '../../shared/html';
import type { Session } from '../../shared/session';
import { EditBoxForm, EditProviderForm, NewVersionForm, UploadForm, VersionTools } from '../owner-tools';
import { boxAddCommand, serverOrigin, vagrantfile } from '../snippets';
import { ADMINISTRATOR, boxApiPath, ownerPagePath, type Box, type Provider, type Version } from '../types';

interface BoxData {
  readonly box: Box;
  /** Sizes of the hosted box files by download URL (the Content-Length of a HEAD, which counts no download). */
  readonly sizes: Record<string, number>;
  /** The reader may change the box (its owner, a member of the owning organization, the administrator). */
  readonly writable: boolean;
}

async function sizesOf(api: ApiClient, versions: readonly Version[]): Promise<Record<string, number>> {
  const sizes: Record<string, number> = {};
  const hosted = versions.flatMap((v) => v.providers).filter((p) => p.hosted);
  await Promise.all(
    hosted.map(async (p) => {
      try {
        const res = await api.send('HEAD', new URL(p.download_url).pathname);
        const length = Number(res.headers['content-length']);
        if (Number.isFinite(length)) sizes[p.download_url] = length;
      } catch {
        // no size shown
      }
    }),
  );
  return sizes;
}

async function canWrite(api: ApiClient, session: Session | undefined, owner: string): Promise<boolean> {
  if (!session) return false;
  if (session.name === ADMINISTRATOR || session.name === owner) return true;
  try {
    const org = await api.get<{ members: { username: string }[] }>(`/api/v1/organization/${encodeURIComponent(owner)}/members`);
    return org.members.some((m) => m.username === session.name);
  } catch (err) {
    if (err instanceof ApiError) return false;
    throw err;
  }
}

/** `/:username/boxes/:name`: the box, its versions with their providers, and the owner's tools. */
export const boxPage = page<BoxData>({
  path: '/:username/boxes/:name',
  title: ({ params }) => `${params.username}/${params.name}`,
  serverRendered: true,
  load: async ({ api, params, session }) => {
    const box = await api.get<Box>(boxApiPath(params.username, params.name));
    const [sizes, writable] = await Promise.all([sizesOf(api, box.versions ?? []), canWrite(api, session, box.username)]);
    return { box, sizes, writable };
  },
  view: (props) => {
    const { box, writable } = props.data;
    const origin = serverOrigin(box);
    const current = box.current_version;
    return html`<article class="box-page">
      <h1>${box.tag} ${box.private ? html`<span class="badge warn">private</span>` : null}</h1>
      ${box.short_description && html`<p class="lead">${box.short_description}</p>`}
      <${Facts}
        items=${[
          ['Owner', html`<a href=${props.href(ownerPagePath(box.username))}>${box.username}</a>`],
          ['Current version', current ? current.version : 'none released'],
          ['Downloads', formatCount(box.downloads)],
          ['Created', formatTime(box.created_at)],
          ['Updated', formatTime(box.updated_at)],
        ]}
      />
      ${current &&
      origin &&
      html`<section aria-labelledby="use-heading">
        <h2 id="use-heading">Use this box</h2>
        <${CopyText} label="vagrant box add" text=${boxAddCommand(box, current, origin)} />
        <${CopyText} label="Vagrantfile" text=${vagrantfile(box, current, origin)} />
      </section>`}
      ${box.description_html &&
      html`<section aria-labelledby="description-heading">
        <h2 id="description-heading">Description</h2>
        <div class="markdown card" dangerouslySetInnerHTML=${{ __html: box.description_html }}></div>
      </section>`}
      ${writable && html`<${OwnerBoxTools} ...${props} />`}
      <section aria-labelledby="versions-heading">
        <h2 id="versions-heading">Versions</h2>
        ${(box.versions ?? []).length === 0 ? html`<p class="muted">No versions yet.</p>` : null}
        ${(box.versions ?? []).map((v) => html`<${VersionCard} ...${props} version=${v} />`)}
      </section>
    </article>`;
  },
});

function OwnerBoxTools(props: PageProps<BoxData>) {
  return html`<section aria-labelledby="owner-heading" class="owner-section">
    <h2 id="owner-heading">Manage</h2>
    <${EditBoxForm} api=${props.api} box=${props.data.box} onChange=${props.reload} />
    <${NewVersionForm} api=${props.api} box=${props.data.box} onChange=${props.reload} />
  </section>`;
}

const STATUS_BADGE: Record<Version['status'], string> = { active: 'ok', unreleased: 'warn', revoked: 'danger' };
const STATUS_LABEL: Record<Version['status'], string> = { active: 'released', unreleased: 'unreleased', revoked: 'revoked' };

function VersionCard(props: PageProps<BoxData> & { version: Version }) {
  const { version } = props;
  const { box, sizes, writable } = props.data;
  const origin = serverOrigin(box);
  return html`<section class="card version" aria-labelledby=${`version-${version.version}`}>
    <h3 id=${`version-${version.version}`}>
      Version ${version.version} <span class=${`badge ${STATUS_BADGE[version.status]}`}>${STATUS_LABEL[version.status]}</span>
    </h3>
    <p class="muted">Created ${formatTime(version.created_at)}</p>
    ${version.description_html && html`<div class="markdown" dangerouslySetInnerHTML=${{ __html: version.description_html }}></div>`}
    ${version.providers.length === 0
      ? html`<p class="muted">No providers yet.</p>`
      : html`<table>
          <caption class="visually-hidden">Providers of version ${version.version}</caption>
          <thead>
            <tr><th scope="col">Provider</th><th scope="col">Architecture</th><th scope="col">Size</th><th scope="col">Checksum</th><th scope="col">Download</th></tr>
          </thead>
          <tbody>
            ${version.providers.map((p) => html`<${ProviderRow} provider=${p} size=${sizes[p.download_url]} />`)}
          </tbody>
        </table>`}
    ${version.status === 'active' &&
    origin &&
    version.providers.length > 0 &&
    html`<details>
      <summary>Commands for ${version.version}</summary>
      ${version.providers.map(
        (p: Provider) =>
          html`<${CopyText} label=${`vagrant box add (${p.name}, ${p.architecture})`} text=${boxAddCommand(box, version, origin, p.name)} />`,
      )}
    </details>`}
    ${writable &&
    html`<${VersionTools} api=${props.api} box=${box} onChange=${props.reload} version=${version} />
      ${version.providers.map(
        (p) => html`<div class="provider-tools">
          <${EditProviderForm} api=${props.api} box=${box} onChange=${props.reload} version=${version} provider=${p} />
          ${!p.original_url && html`<${UploadForm} api=${props.api} box=${box} onChange=${props.reload} version=${version} provider=${p} />`}
        </div>`,
      )}`}
  </section>`;
}

function ProviderRow({ provider, size }: { provider: Provider; size: number | undefined }) {
  const ready = provider.hosted || provider.original_url;
  return html`<tr>
    <td>${provider.name}${provider.default_architecture ? html` <span class="badge">default</span>` : null}</td>
    <td>${provider.architecture}</td>
    <td>${provider.hosted ? formatBytes(size) : provider.original_url ? 'external' : 'not uploaded'}</td>
    <td class="checksum">${provider.checksum ? html`<code>${provider.checksum_type}:${provider.checksum}</code>` : '—'}</td>
    <td>${ready ? html`<a href=${provider.download_url} download>Download</a>` : '—'}</td>
  </tr>`;
}
