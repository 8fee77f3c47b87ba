import { page } from '../../shared/console';
import { html } from '../../shared/html';
import { BoxList } from '../box-list';
import type { Owner } from '../types';

/** `/:username`: a user's or an organization's profile and the boxes the reader may see. */
export const ownerPage = page({
  path: '/:username',
  title: ({ params }) => params.username,
  serverRendered: true,
  load: ({ api, params }) => api.get<Owner>(`/api/v2/user/${encodeURIComponent(params.username)}`),
  view: ({ data, href, session }) => html`<section>
    <h1>${data.username}</h1>
    ${data.profile_html && html`<div class="markdown card" dangerouslySetInnerHTML=${{ __html: data.profile_html }}></div>`}
    <h2>Boxes</h2>
    ${session && html`<p><a class="button" href=${href(`/-/new?owner=${encodeURIComponent(data.username)}`)}>New box</a></p>`}
    <${BoxList} boxes=${data.boxes} href=${href} empty="No boxes to show." />
  </section>`,
});
