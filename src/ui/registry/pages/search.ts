import { withQuery } from '../../shared/api';
import { Field, Select } from '../../shared/components';
import { page } from '../../shared/console';
import { html } from '../../shared/html';
import { BoxList } from '../box-list';
import type { Box } from '../types';

const PAGE_SIZE = 10;
const SORTS = [
  ['downloads', 'Most downloaded'],
  ['created', 'Newest'],
  ['updated', 'Recently updated'],
] as const;
const ORDERS = [
  ['desc', 'Descending'],
  ['asc', 'Ascending'],
] as const;

/** The search's parameters from the page's URL, as the API's search takes them. */
function searchQuery(query: URLSearchParams) {
  return {
    q: query.get('q') ?? '',
    provider: query.get('provider') ?? '',
    architecture: query.get('architecture') ?? '',
    sort: query.get('sort') ?? 'downloads',
    order: query.get('order') ?? 'desc',
    page: Math.max(1, Number(query.get('page') ?? 1) || 1),
  };
}

/** `/`: search with the API's filters, sorting and pagination; a plain GET form, so it works without JavaScript. */
export const searchPage = page({
  path: '/',
  title: ({ query }) => (query.get('q') ? `Search: ${query.get('q')}` : 'Search boxes'),
  serverRendered: true,
  load: async ({ api, query }) => {
    const q = searchQuery(query);
    return api.get<{ boxes: Box[] }>('/api/v2/search', { ...q, limit: PAGE_SIZE });
  },
  view: ({ data, query, href }) => {
    const q = searchQuery(query);
    const link = (pageNumber: number) => withQuery(href('/'), { ...q, page: pageNumber === 1 ? undefined : pageNumber });
    return html`<section>
      <h1>Find a box</h1>
      <form method="get" action=${href('/')} class="card search-form" role="search">
        <div class="row">
          <${Field} label="Search" name="q" type="search" value=${q.q} placeholder="owner, name or description" />
          <${Field} label="Provider" name="provider" value=${q.provider} placeholder="virtualbox" />
          <${Field} label="Architecture" name="architecture" value=${q.architecture} placeholder="amd64" />
          <${Select} label="Sort by" name="sort" value=${q.sort} options=${SORTS} />
          <${Select} label="Order" name="order" value=${q.order} options=${ORDERS} />
          <div class="field"><button type="submit">Search</button></div>
        </div>
      </form>
      <h2 class="results-heading">${q.q ? `Boxes matching “${q.q}”` : 'Boxes'}${q.page > 1 ? ` (page ${q.page})` : ''}</h2>
      <${BoxList} boxes=${data.boxes} href=${href} empty="No box matches." />
      <nav class="pagination" aria-label="Pages">
        ${q.page > 1 ? html`<a href=${link(q.page - 1)} rel="prev">← Previous page</a>` : null}
        ${data.boxes.length === PAGE_SIZE ? html`<a href=${link(q.page + 1)} rel="next">Next page →</a>` : null}
      </nav>
    </section>`;
  },
});
