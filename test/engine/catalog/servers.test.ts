import { CatalogServer, startCatalogServer } from './helpers';
import { startServerNode } from '../../../src/engine/catalog/servers';
import { ManualClock } from '../../../src/engine/clock';
import { FreshStorage, freshStorage, STORAGE_KINDS } from '../../helpers/storage';

/** Each server is a node: its own name and stable node ID, the consul service, serfHealth; several on one database. */
describe.each(STORAGE_KINDS)('catalog servers as nodes (%s)', (kind) => {
  let storage: FreshStorage;
  let a: CatalogServer;
  let b: CatalogServer;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    storage = await freshStorage(kind);
    a = await startCatalogServer(kind, { clock, sharedStorage: storage, catalogNode: { name: 'server-a', address: '127.0.0.11' } });
    b = await startCatalogServer(kind, { clock, sharedStorage: storage, catalogNode: { name: 'server-b', address: '127.0.0.12' } });
    await startServerNode(a.engine);
    await startServerNode(b.engine);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await storage.cleanup();
  });

  test('each server registers its node, the consul service and a passing serfHealth', async () => {
    const nodes = (await a.root('GET', '/v1/catalog/nodes')).body;
    expect(nodes.map((n: any) => [n.Node, n.Address])).toEqual([['server-a', '127.0.0.11'], ['server-b', '127.0.0.12']]);
    expect(nodes[0].ID).toMatch(/^[0-9a-f-]{36}$/);
    expect(nodes[0].Meta['consul-network-segment']).toBe('');
    const consul = (await b.root('GET', '/v1/catalog/service/consul')).body;
    expect(consul.map((s: any) => [s.Node, s.ServicePort])).toEqual([['server-a', 8300], ['server-b', 8300]]);
    // The consul service and serfHealth are the catalog's, not the agent's.
    expect((await a.root('GET', '/v1/agent/services')).body).toEqual({});
    expect((await a.root('GET', '/v1/agent/checks')).body).toEqual({});
    const serf = (await a.root('GET', '/v1/health/node/server-b')).body;
    expect(serf).toEqual([expect.objectContaining({ CheckID: 'serfHealth', Name: 'Serf Health Status', Status: 'passing', Output: 'Agent alive and reachable' })]);
  });

  test('agent/self, members, peers; the node ID stays across a restart', async () => {
    const self = (await a.root('GET', '/v1/agent/self')).body;
    const nodes = (await a.root('GET', '/v1/catalog/nodes')).body;
    expect(self.Config.NodeName).toBe('server-a');
    expect(self.Config.NodeID).toBe(nodes[0].ID);
    expect(self.Member).toEqual(expect.objectContaining({ Name: 'server-a', Addr: '127.0.0.11', Status: 1 }));
    expect(self.Member.Tags.id).toBe(nodes[0].ID);
    expect((await b.root('GET', '/v1/agent/self')).body.Config.NodeName).toBe('server-b');
    const members = (await a.root('GET', '/v1/agent/members')).body;
    expect(members.map((m: any) => [m.Name, m.Addr, m.Status, m.Tags.role])).toEqual([['server-a', '127.0.0.11', 1, 'consul'], ['server-b', '127.0.0.12', 1, 'consul']]);
    expect((await a.root('GET', '/v1/status/peers')).body).toEqual(['127.0.0.11:8300', '127.0.0.12:8300']);
    expect((await b.root('GET', '/v1/status/leader')).body).toBe('127.0.0.11:8300');
    // `consul info` prints agent/self's Stats: the longest running server leads.
    expect(self.Stats.consul).toEqual({ acl: 'enabled', bootstrap: 'false', known_datacenters: '1', leader: 'true', leader_addr: '127.0.0.11:8300', server: 'true' });
    expect((await b.root('GET', '/v1/agent/self')).body.Stats.consul).toEqual(expect.objectContaining({ leader: 'false', leader_addr: '127.0.0.11:8300' }));
    expect(self.Stats.build.version).toMatch(/^1\.\d+\.\d+$/);
    expect(self.Stats.runtime).toEqual(expect.objectContaining({ os: 'linux', arch: expect.stringMatching(/^(amd64|arm64|\w+)$/) }));
    expect((await a.root('PUT', '/v1/agent/join/127.0.0.12')).status).toBe(200);

    // Registrations through each server's agent land on its own node.
    await b.root('PUT', '/v1/agent/service/register', { Name: 'on-b', Port: 1 });
    expect((await a.root('GET', '/v1/catalog/service/on-b')).body.map((s: any) => s.Node)).toEqual(['server-b']);

    // A restarted server keeps its node ID.
    const again = await startCatalogServer(kind, { clock, sharedStorage: storage, catalogNode: { name: 'server-a', address: '127.0.0.11' } });
    try {
      await startServerNode(again.engine);
      expect((await again.root('GET', '/v1/agent/self')).body.Config.NodeID).toBe(self.Config.NodeID);
    } finally {
      await again.close();
    }
  });

  test('a server that stops beating is failed: serfHealth critical, member status 4, out of peers', async () => {
    clock.advance(31_000);
    await startServerNode(a.engine); // a beats again; b does not
    await a.engine.scheduler.runOnce();
    const serf = (await a.root('GET', '/v1/health/node/server-b')).body[0];
    expect(serf).toEqual(expect.objectContaining({ Status: 'critical', Output: 'Agent not live or unreachable' }));
    const members = (await a.root('GET', '/v1/agent/members')).body;
    expect(members.find((m: any) => m.Name === 'server-b').Status).toBe(4);
    expect((await a.root('GET', '/v1/status/peers')).body).toEqual(['127.0.0.11:8300']);
    await startServerNode(b.engine);
    expect((await a.root('GET', '/v1/health/node/server-b')).body[0].Status).toBe('passing');
  });
});
