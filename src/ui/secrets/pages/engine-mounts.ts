import { page, type PageProps } from '../../shared/console';
import { html } from '../../shared/html';
import { apiPath, Denied, isDenied, mountsOfType, readOrDenied } from '../api';
import { PermissionDenied } from '../components';

/** The API path of `path` under a mount, and of one item of it: `/v1/<mount>/<path>[/<name>]`. */
export const mountUrl = (mount: string, path: string, name?: string) =>
  `/v1/${apiPath(mount)}/${path}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;

/** The page listing the mounts of one engine type (`/pki`, `/ssh`, ...), each a link to its pages. */
export function engineMountsPage(options: {
  /** The page's path and its heading. */
  path: string;
  title: string;
  /** The engine's type in `sys/mounts`, and its name in a sentence ("No SSH secrets engine is enabled"). */
  type: string;
  engine: string;
  lead?: string;
  href: (mount: string) => string;
}) {
  const { path, title, type, engine, lead, href } = options;
  return page({
    path,
    title,
    signedIn: true,
    load: ({ api }) => readOrDenied(mountsOfType(api, [type])),
    view: (props: PageProps<{ path: string }[] | Denied>) => html`<section>
      <h1>${title}</h1>
      ${lead ? html`<p class="lead">${lead}</p>` : null}
      ${isDenied(props.data)
        ? html`<${PermissionDenied} what="listing secrets engines" denied=${props.data} />`
        : props.data.length === 0
          ? html`<p>No ${engine} secrets engine is enabled. <a href=${props.href('/mounts')}>Enable one</a> of type <code>${type}</code>.</p>`
          : html`<ul class="secrets-list">
              ${props.data.map((m) => html`<li><a href=${props.href(href(m.path))}>${m.path}/</a></li>`)}
            </ul>`}
    </section>`,
  });
}
