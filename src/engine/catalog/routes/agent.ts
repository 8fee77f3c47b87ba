import { z } from 'zod';
import { Reply } from '../../http/routes';
import { MetricsFormat, renderMetrics } from '../../operations';
import { VERSION } from '../../version';
import { agentMembers, agentNode, agentStats, selfMember, setMaintenance } from '../agent';
import { listFilter } from '../query';
import { actorOf, badRequest, catalogRoute, CommonQuery, LOCAL_DATACENTER, requirePermission } from '../route';
import { requestWrites } from '../runtime';
import { COMPATIBLE_VERSION, serverNodeId } from '../servers';
import { parseEnable } from './agent-services';


/** /v1/agent/self, /v1/agent/version, /v1/agent/metrics and the agent's operations: the one server as the agent clients talk to. */
export const agentRoutes = [
  catalogRoute({
    method: 'GET',
    path: '/v1/agent/self',
    query: CommonQuery,
    permission: 'agent:read (on the agent\'s node)',
    transaction: 'read',
    handler: async (_input, ctx) => {
      const node = agentNode(ctx.engine);
      requirePermission(ctx, 'agent', 'read', node);
      // Every top-level value is an object: the Go client decodes map[string]map[string]interface{}.
      const config = {
        Datacenter: LOCAL_DATACENTER,
        PrimaryDatacenter: LOCAL_DATACENTER,
        NodeName: node,
        NodeID: await serverNodeId(ctx.engine, ctx.db),
        Revision: '',
        Server: true,
        Version: COMPATIBLE_VERSION,
        BuildDate: '',
      };
      return {
        Config: config,
        DebugConfig: { Datacenter: LOCAL_DATACENTER, NodeName: node, PrimaryDatacenter: LOCAL_DATACENTER, ACLsEnabled: true, ServerMode: true },
        Coord: { Vec: [0, 0, 0, 0, 0, 0, 0, 0], Error: 1.5, Adjustment: 0, Height: 1e-5 },
        Member: await selfMember(ctx.engine, ctx.db),
        Meta: { 'hangar-version': VERSION, 'consul-network-segment': '', 'consul-version': COMPATIBLE_VERSION },
        Stats: await agentStats(ctx.engine, ctx.db),
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
      requirePermission(ctx, 'agent', 'read', agentNode(ctx.engine));
      const { contentType, body } = await renderMetrics(ctx.engine, query.format);
      return new Reply(200, body, { 'content-type': contentType });
    },
  }),
  catalogRoute({
    method: 'PUT',
    path: '/v1/agent/maintenance',
    query: CommonQuery.extend({ enable: z.string().optional(), reason: z.string().max(4096).optional() }),
    permission: 'node:write (on the agent\'s node)',
    handler: async ({ query }, ctx) => {
      const enable = parseEnable(query.enable);
      const node = agentNode(ctx.engine);
      requirePermission(ctx, 'node', 'write', node);
      await setMaintenance(ctx.engine, requestWrites(ctx), node, 'default', undefined, enable, query.reason ?? '', ctx.now);
      return new Reply(200);
    },
  }),
  catalogRoute({
    method: 'GET',
    path: '/v1/agent/members',
    query: CommonQuery.extend({ wan: z.string().optional(), segment: z.string().optional() }),
    permission: 'node:read (filtered)',
    transaction: 'read',
    handler: async ({ query }, ctx) => {
      const authz = actorOf(ctx).authz;
      const filter = listFilter(query.filter);
      return filter((await agentMembers(ctx.engine, ctx.db)).filter((m) => authz.allowed('node', 'read', m.Name as string)));
    },
  }),
  catalogRoute({
    method: 'PUT',
    path: '/v1/agent/join/*',
    params: z.object({ '*': z.string() }),
    query: CommonQuery.extend({ wan: z.string().optional() }),
    permission: 'agent:write (on the agent\'s node)',
    transaction: 'read',
    handler: async ({ params }, ctx) => {
      requirePermission(ctx, 'agent', 'write', agentNode(ctx.engine));
      // Servers meet through their shared database, not gossip: joining one of them is already done.
      const members = await agentMembers(ctx.engine, ctx.db);
      const address = params['*'];
      const known = members.some((m) => address === m.Addr || address === `${m.Addr}:${m.Port}` || address === m.Name);
      if (!known) throw badRequest(`Failed to join ${address}: Hangar servers find each other through their shared database; ${address} is not one of them`);
      return new Reply(200);
    },
  }),
  catalogRoute({
    method: 'PUT',
    path: '/v1/agent/reload',
    query: CommonQuery,
    permission: 'agent:write (on the agent\'s node)',
    transaction: 'read',
    handler: async (_input, ctx) => {
      requirePermission(ctx, 'agent', 'write', agentNode(ctx.engine));
      // A server reads its flags, environment and -config file once, when it starts; what changes while it
      // runs (TLS certificates) SIGHUP reloads. Reloading here succeeds and changes nothing.
      return new Reply(200);
    },
  }),
  catalogRoute({
    method: 'PUT',
    path: '/v1/agent/leave',
    query: CommonQuery,
    permission: 'agent:write (on the agent\'s node)',
    transaction: 'read',
    handler: async (_input, ctx) => {
      requirePermission(ctx, 'agent', 'write', agentNode(ctx.engine));
      // The one logical agent of a server cannot leave its server: the server stays a member until it stops.
      return new Reply(200);
    },
  }),
];

