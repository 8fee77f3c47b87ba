import { Reply } from '../../http/routes';
import { MetricsFormat, renderMetrics } from '../../operations';
import { VERSION } from '../../version';
import { AGENT_NODE } from '../nodes';
import { catalogRoute, CommonQuery, LOCAL_DATACENTER, requirePermission } from '../route';

/**
 * The version of the public service whose API Hangar speaks (binding rule BindType `policy` is
 * 1.16+, templated policies 1.17+): what clients read to decide which features to use.
 */
export const COMPATIBLE_VERSION = '1.20.0';

/** /v1/agent/self, /v1/agent/version and /v1/agent/metrics: the one server as the agent clients talk to. */
export const agentRoutes = [
  catalogRoute({
    method: 'GET',
    path: '/v1/agent/self',
    query: CommonQuery,
    permission: 'agent:read (on the agent\'s node)',
    transaction: 'read',
    handler: async (_input, ctx) => {
      requirePermission(ctx, 'agent', 'read', AGENT_NODE);
      // Every top-level value is an object: the Go client decodes map[string]map[string]interface{}.
      const config = {
        Datacenter: LOCAL_DATACENTER,
        PrimaryDatacenter: LOCAL_DATACENTER,
        NodeName: AGENT_NODE,
        NodeID: '',
        Revision: '',
        Server: true,
        Version: COMPATIBLE_VERSION,
        BuildDate: '',
      };
      return {
        Config: config,
        DebugConfig: { Datacenter: LOCAL_DATACENTER, NodeName: AGENT_NODE, PrimaryDatacenter: LOCAL_DATACENTER, ACLsEnabled: true },
        Coord: { Vec: [0, 0, 0, 0, 0, 0, 0, 0], Error: 1.5, Adjustment: 0, Height: 1e-5 },
        Member: { Name: AGENT_NODE, Addr: '127.0.0.1', Port: 8301, Tags: { dc: LOCAL_DATACENTER, role: 'consul', build: COMPATIBLE_VERSION }, Status: 1 },
        Meta: { 'hangar-version': VERSION },
        Stats: {},
        xDS: {},
      };
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/agent/version',
    query: CommonQuery,
    permission: 'public',
    transaction: 'read',
    handler: async () => ({
      SHA: '',
      BuildDate: '',
      HumanVersion: COMPATIBLE_VERSION,
      FIPS: '',
      Version: COMPATIBLE_VERSION,
      Revision: '',
    }),
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/agent/metrics',
    query: CommonQuery.extend({ format: MetricsFormat }),
    permission: 'agent:read (on the agent\'s node)',
    // The gauges read storage in their own transactions.
    transaction: 'none',
    handler: async ({ query }, ctx) => {
      requirePermission(ctx, 'agent', 'read', AGENT_NODE);
      const { contentType, body } = await renderMetrics(ctx.engine, query.format);
      return new Reply(200, body, { 'content-type': contentType });
    },
  }),
];
