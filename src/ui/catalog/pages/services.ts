import { ApiError } from '../../shared/api';
import type { PageProps } from '../../shared/console';
import { html } from '../../shared/html';
import { HealthSummary, Table } from '../components';
import { type Live, readAll, readLive, type Source, useLive } from '../live';
import { catalogPage } from '../page';
import type { HealthCheck, ServiceEntry } from '../types';
import { ALL_CHECKS, ChecksTable } from './nodes';

const SERVICES: Source<Record<string, string[] | null>> = { path: '/v1/catalog/services' };

interface ServicesData {
  readonly services: Live<Record<string, string[] | null>>;
  readonly checks: Live<HealthCheck[]>;
}

/** `/services`: every service with its tags and the health of its instances' checks. */
export const servicesPage = catalogPage({
  path: '/services',
  title: 'Services',
  load: ({ api }) => readAll(api, { services: SERVICES, checks: ALL_CHECKS }),
  view: (props: PageProps<ServicesData>) => html`<${ServicesView} ...${props} />`,
});

function ServicesView({ api, data, href }: PageProps<ServicesData>) {
  const services = useLive(api, SERVICES, data.services);
  const checks = useLive(api, ALL_CHECKS, data.checks);
  const names = Object.keys(services).sort();
  return html`<section>
    <h1>Services</h1>
    <${Table} caption="Services" headers=${['Service', 'Tags', 'Health']} empty="No service is registered (or your token may see none).">
      ${names.map(
        (name) => html`<tr>
          <td><a href=${href(`/services/${encodeURIComponent(name)}`)}>${name}</a></td>
          <td>${(services[name] ?? []).join(', ') || '—'}</td>
          <td><${HealthSummary} statuses=${checks.filter((c) => c.ServiceName === name).map((c) => c.Status)} /></td>
        </tr>`,
      )}
    <//>
  </section>`;
}

const instances = (name: string): Source<ServiceEntry[]> => ({ path: `/v1/health/service/${encodeURIComponent(name)}` });

/** `/services/:name`: the instances of a service, node by node, with their checks. */
export const servicePage = catalogPage({
  path: '/services/:name',
  title: ({ params }) => `Service ${params.name}`,
  load: async ({ api, params }) => {
    const live = await readLive(api, instances(params.name));
    if (live.data.length === 0) throw new ApiError(404, ['No such service']);
    return live;
  },
  view: (props: PageProps<Live<ServiceEntry[]>>) => html`<${ServiceView} ...${props} />`,
});

function ServiceView({ api, data, params, href }: PageProps<Live<ServiceEntry[]>>) {
  const entries = useLive(api, instances(params.name), data);
  return html`<section>
    <h1>Service ${params.name}</h1>
    ${entries.length === 0 && html`<p role="status">No instance of this service is registered any more.</p>`}
    ${entries.map(
      (e) => html`<article class="card">
        <h2><a href=${href(`/nodes/${encodeURIComponent(e.Node.Node)}`)}>${e.Node.Node}</a> · ${e.Service.ID}</h2>
        <p class="muted">
          ${e.Service.Address || e.Node.Address}${e.Service.Port ? `:${e.Service.Port}` : ''}
          ${(e.Service.Tags ?? []).length > 0 && ` · tags: ${(e.Service.Tags ?? []).join(', ')}`}
        </p>
        <${ChecksTable} checks=${e.Checks} />
      </article>`,
    )}
  </section>`;
}
