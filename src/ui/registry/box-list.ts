import { boxPagePath, ownerPagePath, type Box } from './types';
import { formatCount } from '../shared/format';
import { html } from '../shared/html';

/** Boxes as a list of cards: name, owner, description, current version, providers, downloads. */
export function BoxList({ boxes, href, empty }: { boxes: readonly Box[]; href: (p: string) => string; empty: string }) {
  if (boxes.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<ul class="box-list">
    ${boxes.map(
      (box) => html`<li class="card">
        <h2><a href=${href(boxPagePath(box.username, box.name))}>${box.tag}</a>${box.private ? html` <span class="badge warn">private</span>` : null}</h2>
        ${box.short_description && html`<p>${box.short_description}</p>`}
        <p class="muted">
          by <a href=${href(ownerPagePath(box.username))}>${box.username}</a>
          ${box.current_version ? html` · version ${box.current_version.version}` : ' · no released version'}
          ${box.current_version?.providers.length ? html` · ${[...new Set(box.current_version.providers.map((p) => p.name))].join(', ')}` : null}
          ${` · ${formatCount(box.downloads)} downloads`}
        </p>
      </li>`,
    )}
  </ul>`;
}
