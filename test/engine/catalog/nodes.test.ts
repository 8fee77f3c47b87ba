import { CatalogServer, startCatalogServer } from './helpers';
import { STORAGE_KINDS } from '../../helpers/storage';

/** Catalog fidelity: every field of a registration stored and read back as the public service shows it. */
describe.each(STORAGE_KINDS)('catalog nodes, services and checks (%s)', (kind) => {
  let s: CatalogServer;
  beforeAll(async () => {
    s = await startCatalogServer(kind);
  });
  afterAll(() => s.close());

  const register = (body: unknown, query = '') => s.root('PUT', `/v1/catalog/register${query}`, body);

  test('a service and its checks read back with every field; empty status is critical', async () => {
    const res = await register({
      Node: 'web1',
      Address: '10.0.0.1',
      Service: {
        ID: 'web-1',
        Service: 'web',
        Tags: ['v1'],
        Address: 'web1.example.com',
        Port: 8080,
        Meta: { version: '1' },
        Weights: { Passing: 10, Warning: 2 },
        EnableTagOverride: true,
        TaggedAddresses: { lan: { Address: '10.0.0.1', Port: 8080 } },
        SocketPath: '/run/web.sock',
      },
      Checks: [
        {
          CheckID: 'web-http',
          Name: 'HTTP',
          Status: '',
          ServiceID: 'web-1',
          Definition: {
            HTTP: 'http://10.0.0.1:8080/health',
            Header: { 'X-Probe': ['1'] },
            Method: 'HEAD',
            Body: '',
            TLSServerName: 'web.example.com',
            TLSSkipVerify: true,
            Interval: '10s',
            Timeout: '2s',
            DeregisterCriticalServiceAfter: '1m30s',
          },
        },
        { CheckID: 'web-tcp', Name: 'TCP', Status: 'passing', ServiceID: 'web-1', Definition: { TCP: '10.0.0.1:8080', Interval: 5_000_000_000 } },
      ],
    });
    expect(res.status).toBe(200);

    const node = await s.root('GET', '/v1/catalog/node/web1');
    expect(node.body.Services['web-1']).toEqual(expect.objectContaining({
      ID: 'web-1',
      Service: 'web',
      Weights: { Passing: 10, Warning: 2 },
      EnableTagOverride: true,
      TaggedAddresses: { lan: { Address: '10.0.0.1', Port: 8080 } },
      SocketPath: '/run/web.sock',
      Namespace: 'default',
    }));
    const instances = await s.root('GET', '/v1/catalog/service/web');
    expect(instances.body[0]).toEqual(expect.objectContaining({
      ServiceWeights: { Passing: 10, Warning: 2 },
      ServiceEnableTagOverride: true,
      ServiceTaggedAddresses: { lan: { Address: '10.0.0.1', Port: 8080 } },
      ServiceSocketPath: '/run/web.sock',
    }));

    const checks = (await s.root('GET', '/v1/health/node/web1')).body as Record<string, any>[];
    const http = checks.find((c) => c.CheckID === 'web-http')!;
    expect(http.Status).toBe('critical');
    expect(http.Type).toBe('http');
    expect(http.Definition).toEqual({
      HTTP: 'http://10.0.0.1:8080/health',
      Header: { 'X-Probe': ['1'] },
      Method: 'HEAD',
      TLSServerName: 'web.example.com',
      TLSSkipVerify: true,
      Interval: '10s',
      Timeout: '2s',
      DeregisterCriticalServiceAfter: '1m30s',
    });
    const tcp = checks.find((c) => c.CheckID === 'web-tcp')!;
    expect(tcp).toEqual(expect.objectContaining({ Type: 'tcp', Definition: { TCP: '10.0.0.1:8080', Interval: '5s' } }));
  });

  test('hostile registrations are refused with a 400 and store nothing', async () => {
    const cases: [unknown, RegExp][] = [
      [{ Node: 'bad1', Address: '10.0.0.2', Service: { Service: 'x', Port: 70000 } }, /Port/],
      [{ Node: 'bad1', Address: '10.0.0.2', Service: { Service: 'x', Address: '0.0.0.0' } }, /Invalid service address/],
      [{ Node: 'bad1', Address: '10.0.0.2', Service: { Service: 'x', Address: 'not an address!' } }, /Invalid service address/],
      [{ Node: 'bad1', Address: '10.0.0.2', Service: { Service: 'x', Meta: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v'])) } }, /more than 64/],
      [{ Node: 'bad1', Address: '10.0.0.2', Service: { Service: 'x', Meta: { k: 'v'.repeat(513) } } }, /Value is too long/],
      [{ Node: 'bad1', Address: '10.0.0.2', Check: { CheckID: 'c', Definition: { Interval: '10 years' } } }, /invalid duration/],
      [{ Node: 'bad1', Address: '10.0.0.2', Check: { CheckID: 'c', Definition: { Interval: '99999999999h' } } }, /invalid duration/],
      [{ Node: 'bad1', Address: '10.0.0.2', Check: { CheckID: 'c', Status: 'sleepy' } }, /Status for checks/],
      [{ Node: 'bad1', Address: '10.0.0.2', ID: 'not-a-uuid' }, /Bad node ID/],
    ];
    for (const [body, message] of cases) {
      const res = await register(body);
      expect({ status: res.status, text: res.text }).toEqual({ status: 400, text: expect.stringMatching(message) });
    }
    expect((await s.root('GET', '/v1/catalog/node/bad1')).body).toBeNull();
  });

  test('invalid weights read back as the default, as the public service stores them', async () => {
    expect((await register({ Node: 'w1', Address: '10.0.0.9', Service: { Service: 'w', Weights: { Passing: 0, Warning: 0 } } })).status).toBe(200);
    expect((await s.root('GET', '/v1/catalog/node/w1')).body.Services.w.Weights).toEqual({ Passing: 1, Warning: 1 });
  });

  test('namespaces: services and checks read back in theirs; ?ns= on every read', async () => {
    expect((await s.root('PUT', '/v1/namespace', { Name: 'team' })).status).toBe(200);
    expect((await register({
      Node: 'ns-node',
      Address: '10.0.0.3',
      Namespace: 'team',
      Service: { Service: 'api', Port: 80 },
      Check: { CheckID: 'api-ttl', ServiceID: 'api', Status: 'passing' },
    })).status).toBe(200);
    expect((await s.root('GET', '/v1/catalog/services')).body.api).toBeUndefined();
    expect((await s.root('GET', '/v1/catalog/services?ns=team')).body).toEqual({ api: [] });
    const [instance] = (await s.root('GET', '/v1/catalog/service/api?ns=team')).body;
    expect(instance.Namespace).toBe('team');
    expect((await s.root('GET', '/v1/catalog/service/api')).body).toEqual([]);
    const health = (await s.root('GET', '/v1/health/service/api?ns=team')).body;
    expect(health[0].Service.Namespace).toBe('team');
    expect(health[0].Checks.map((c: any) => c.CheckID)).toContain('api-ttl');
    expect((await s.root('GET', '/v1/health/checks/api?ns=team')).body[0].Namespace).toBe('team');
    expect((await s.root('GET', '/v1/catalog/node/ns-node?ns=team')).body.Services.api.Namespace).toBe('team');
    expect((await s.root('GET', '/v1/catalog/node/ns-node')).body.Services).toEqual({});
    expect(Object.keys((await s.root('GET', '/v1/catalog/services?ns=*')).body)).toEqual(expect.arrayContaining(['api', 'web']));
    // Deregistered in its namespace.
    expect((await s.root('PUT', '/v1/catalog/deregister?ns=team', { Node: 'ns-node', ServiceID: 'api' })).status).toBe(200);
    expect((await s.root('GET', '/v1/catalog/services?ns=team')).body).toEqual({});
  });

  test('node names with "/", node-services, datacenters', async () => {
    expect((await register({ Node: 'redis/redis1', Address: '10.0.0.4', Service: { Service: 'redis', Port: 6379 } })).status).toBe(200);
    const node = await s.root('GET', '/v1/catalog/node/redis/redis1');
    expect(node.body.Node.Node).toBe('redis/redis1');
    const list = await s.root('GET', '/v1/catalog/node-services/redis/redis1');
    expect(list.body.Node.Node).toBe('redis/redis1');
    expect(list.body.Services).toEqual([expect.objectContaining({ ID: 'redis', Service: 'redis', Port: 6379 })]);
    expect((await s.root('GET', '/v1/health/node/redis/redis1')).body.map((c: any) => c.CheckID)).toEqual(['serfHealth']);
    expect((await s.root('GET', '/v1/catalog/node-services/missing')).body).toEqual({ Node: null, Services: [] });
    expect((await s.root('GET', '/v1/catalog/datacenters')).body).toEqual(['dc1']);
  });
});
