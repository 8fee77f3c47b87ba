import { ApiError } from '../../shared/api';
import { Facts } from '../../shared/components';
import type { PageProps } from '../../shared/console';
import { html } from '../../shared/html';
import { HealthSummary, StatusBadge, Table } from '../components';
import { type Live, readAll, type Source, useLive } from '../live';
import { catalogPage } from '../page';
import type { CatalogNode, HealthCheck, NodeService } from '../types';

/** Every check of the catalog, to show each node's and service's health. */
export const ALL_CHECKS: Source<HealthCheck[]> = { path: '/v1/health/state/any' };
const NODES: Source<CatalogNode[]> = { path: '/v1/catalog/nodes' };

interface NodesData {
  readonly nodes: Live<CatalogNode[]>;
  readonly checks: Live<HealthCheck[]>;
}

function NodesView({ api, data, href }: PageProps<NodesData>) {
  const nodes = useLive(api, NODES, data.nodes);
  const checks = useLive(api, ALL_CHECKS, data.checks);
  return html`<section>
    <h1>Nodes</h1>
    <p class="lead">Registered nodes and the health of their checks, updated as they change.</p>
    <${Table} caption="Nodes" headers=${['Node', 'Address', 'Datacenter', 'Health']} empty="No node is registered (or your token may see none).">
      ${nodes.map(
        (n) => html`<tr>
          <td><a href=${href(`/nodes/${encodeURIComponent(n.Node)}`)}>${n.Node}</a></td>
          <td>${n.Address}</td>
          <td>${n.Datacenter}</td>
          <td><${HealthSummary} statuses=${checks.filter((c) => c.Node === n.Node).map((c) => c.Status)} /></td>
        </tr>`,
      )}
    <//>
  </section>`;
}

const nodesDef = {
  title: 'Nodes',
  load: ({ api }: { api: PageProps['api'] }) => readAll(api, { nodes: NODES, checks: ALL_CHECKS }),
  view: (props: PageProps<NodesData>) => html`<${NodesView} ...${props} />`,
};

/** `/`: the nodes (the console's start page). */
export const homePage = catalogPage({ path: '/', ...nodesDef });
/** `/nodes`: the same list. */
export const nodesPage = catalogPage({ path: '/nodes', ...nodesDef });

interface NodeRecord {
  readonly Node: CatalogNode;
  readonly Services: Record<string, NodeService> | null;
}

const nodeSources = (name: string) => ({
  node: { path: `/v1/catalog/node/${encodeURIComponent(name)}` } as Source<NodeRecord | null>,
  checks: { path: `/v1/health/node/${encodeURIComponent(name)}` } as Source<HealthCheck[]>,
});

interface NodeData {
  readonly node: Live<NodeRecord | null>;
  readonly checks: Live<HealthCheck[]>;
}

/** `/nodes/:node`: a node, its services and its checks. */
export const nodePage = catalogPage({
  path: '/nodes/:node',
  title: ({ params }) => `Node ${params.node}`,
  load: async ({ api, params }) => {
    const data = await readAll(api, nodeSources(params.node));
    if (!data.node.data) throw new ApiError(404, ['No such node']);
    return data;
  },
  view: (props: PageProps<NodeData>) => html`<${NodeView} ...${props} />`,
});

function NodeView({ api, data, params, href }: PageProps<NodeData>) {
  const sources = nodeSources(params.node);
  const record = useLive(api, sources.node, data.node);
  const checks = useLive(api, sources.checks, data.checks);
  if (!record) {
    return html`<section>
      <h1>Node ${params.node}</h1>
      <p role="status">This node was deregistered. <a href=${href('/')}>Back to the nodes</a>.</p>
    </section>`;
  }
  const services = Object.values(record.Services ?? {});
  const meta = Object.entries(record.Node.Meta ?? {});
  return html`<section>
    <h1>Node ${record.Node.Node}</h1>
    <${Facts}
      items=${[
        ['Address', record.Node.Address],
        ['Datacenter', record.Node.Datacenter],
        ['Health', html`<${HealthSummary} statuses=${checks.map((c) => c.Status)} />`],
        ...meta.map(([k, v]) => [`Meta ${k}`, v] as const),
      ]}
    />
    <h2>Services</h2>
    <${Table} caption="Services" headers=${['Service', 'ID', 'Address', 'Port', 'Tags']} empty="No service is registered on this node.">
      ${services.map(
        (s) => html`<tr>
          <td><a href=${href(`/services/${encodeURIComponent(s.Service)}`)}>${s.Service}</a></td>
          <td>${s.ID}</td>
          <td>${s.Address || record.Node.Address}</td>
          <td>${s.Port || '—'}</td>
          <td>${(s.Tags ?? []).join(', ') || '—'}</td>
        </tr>`,
      )}
    <//>
    <h2>Checks</h2>
    <${ChecksTable} checks=${checks} />
  </section>`;
}

/** Checks with their status (word and colour) and output. */
export function ChecksTable({ checks }: { checks: readonly HealthCheck[] }) {
  return html`<${Table} caption="Checks" headers=${['Check', 'ID', 'Service', 'Status', 'Output']} empty="No checks.">
    ${checks.map(
      (c) => html`<tr>
        <td>${c.Name}</td>
        <td><code>${c.CheckID}</code></td>
        <td>${c.ServiceName || '—'}</td>
        <td><${StatusBadge} status=${c.Status} /></td>
        <td class="catalog-output">${c.Output || '—'}</td>
      </tr>`,
    )}
  <//>`;
}
