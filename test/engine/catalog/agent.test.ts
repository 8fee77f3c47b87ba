import { CatalogServer, startCatalogServer } from './helpers';
import { agentNode } from '../../../src/engine/catalog/agent';
import { ManualClock } from '../../../src/engine/clock';
import { STORAGE_KINDS } from '../../helpers/storage';

/** The agent API: one logical agent per server, registrations on the server's node, TTL checks on the engine clock. */
describe.each(STORAGE_KINDS)('catalog agent API (%s)', (kind) => {
  let s: CatalogServer;
  let node: string;
  const clock = new ManualClock();
  beforeAll(async () => {
    s = await startCatalogServer(kind, { clock });
    node = agentNode(s.engine);
  });
  afterAll(() => s.close());

  const index = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-consul-index']);

  test('a service with checks lands on the server node; agent and catalog reads show it', async () => {
    const res = await s.root('PUT', '/v1/agent/service/register', {
      ID: 'api-1',
      Name: 'api',
      Tags: ['v2'],
      Address: '127.0.0.1',
      Port: 9000,
      Meta: { team: 'a' },
      Weights: { Passing: 3, Warning: 1 },
      EnableTagOverride: true,
      Checks: [
        { TTL: '30s', Notes: 'heartbeat' },
        { HTTP: 'http://127.0.0.1:9000/health', Interval: '100ms', Timeout: '1s', Method: 'GET', Header: { A: ['b'] } },
      ],
    });
    expect(res.status).toBe(200);

    const services = (await s.root('GET', '/v1/agent/services')).body;
    expect(services['api-1']).toEqual(expect.objectContaining({
      ID: 'api-1', Service: 'api', Port: 9000, Weights: { Passing: 3, Warning: 1 }, EnableTagOverride: true, Datacenter: 'dc1',
    }));
    expect(services['api-1'].CreateIndex).toBeUndefined();
    // `consul info`: the agent's services and checks, as strings.
    const stats = (await s.root('GET', '/v1/agent/self')).body.Stats.agent;
    expect(stats).toEqual({ check_monitors: '0', check_ttls: '1', checks: '2', services: '1' });
    const one = await s.root('GET', '/v1/agent/service/api-1');
    expect(one.body.ContentHash).toBe(one.headers['x-consul-contenthash']);
    expect((await s.root('GET', '/v1/agent/service/nope')).status).toBe(404);

    const checks = (await s.root('GET', '/v1/agent/checks')).body;
    expect(checks['service:api-1:1']).toEqual(expect.objectContaining({
      Node: node,
      Name: "Service 'api' check",
      Status: 'critical',
      Type: 'ttl',
      Notes: 'heartbeat',
      ServiceID: 'api-1',
      ServiceName: 'api',
      Interval: '0s',
      ServiceTags: ['v2'],
    }));
    // An interval below the agent's minimum is raised to it.
    expect(checks['service:api-1:2']).toEqual(expect.objectContaining({ Type: 'http', Interval: '1s', Timeout: '1s' }));
    expect(checks['service:api-1:2'].Definition).toEqual(expect.objectContaining({ HTTP: 'http://127.0.0.1:9000/health', Interval: '1s', Header: { A: ['b'] } }));

    const catalog = (await s.root('GET', '/v1/catalog/service/api')).body;
    expect(catalog).toEqual([expect.objectContaining({ Node: node, ServiceID: 'api-1', ServicePort: 9000 })]);
    expect((await s.root('GET', '/v1/agent/services?filter=Port%20%3D%3D%209000')).body).toHaveProperty('api-1');
    expect((await s.root('GET', '/v1/agent/services?filter=Port%20%3D%3D%201')).body).toEqual({});
  });

  test('TTL checks: pass/warn/fail/update, expiry on the engine clock, seen by blocking queries', async () => {
    expect((await s.root('PUT', '/v1/agent/check/pass/service:api-1:1?note=ok')).status).toBe(200);
    let health = await s.root('GET', '/v1/health/checks/api');
    expect(health.body.find((c: any) => c.CheckID === 'service:api-1:1')).toEqual(expect.objectContaining({ Status: 'passing', Output: 'ok' }));

    // A blocking query wakes on the TTL update.
    const waiting = s.root('GET', `/v1/health/checks/api?index=${index(health)}&wait=20s`);
    await new Promise((r) => setTimeout(r, 50));
    expect((await s.root('PUT', '/v1/agent/check/update/service:api-1:1', { Status: 'warning', Output: 'slow' })).status).toBe(200);
    const woke = await waiting;
    expect(index(woke)).toBeGreaterThan(index(health));
    expect(woke.body.find((c: any) => c.CheckID === 'service:api-1:1').Status).toBe('warning');

    const long = 'x'.repeat(5000);
    await s.root('PUT', '/v1/agent/check/update/service:api-1:1', { Status: 'passing', Output: long });
    health = await s.root('GET', '/v1/health/checks/api');
    expect(health.body.find((c: any) => c.CheckID === 'service:api-1:1').Output).toBe(`${'x'.repeat(4096)} ... (captured 4096 of 5000 bytes)`);

    expect((await s.root('PUT', '/v1/agent/check/update/service:api-1:1', { Status: 'sleepy' })).status).toBe(400);
    expect((await s.root('PUT', '/v1/agent/check/pass/service:api-1:2')).status).toBe(400);
    expect((await s.root('PUT', '/v1/agent/check/pass/missing')).status).toBe(404);

    // Not updated within its TTL: critical.
    clock.advance(29_000);
    await s.engine.scheduler.runOnce();
    expect((await s.root('GET', '/v1/agent/checks')).body['service:api-1:1'].Status).toBe('passing');
    await s.root('PUT', '/v1/agent/check/pass/service:api-1:1?note=alive');
    clock.advance(31_000);
    await s.engine.scheduler.runOnce();
    const expired = (await s.root('GET', '/v1/agent/checks')).body['service:api-1:1'];
    expect(expired).toEqual(expect.objectContaining({ Status: 'critical', Output: 'TTL expired (last output before timeout follows): alive' }));
  });

  test('agent health endpoints answer 200/429/503 by the aggregated status', async () => {
    await s.root('PUT', '/v1/agent/service/register', { ID: 'db-1', Name: 'db', Port: 5432, Check: { CheckID: 'db-ttl', TTL: '1m', Status: 'passing' } });
    let res = await s.root('GET', '/v1/agent/health/service/id/db-1');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.objectContaining({ AggregatedStatus: 'passing', Service: expect.objectContaining({ ID: 'db-1' }) }));
    await s.root('PUT', '/v1/agent/check/warn/db-ttl');
    res = await s.root('GET', '/v1/agent/health/service/name/db');
    expect(res.status).toBe(429);
    expect(res.body).toHaveLength(1);
    await s.root('PUT', '/v1/agent/check/fail/db-ttl');
    res = await s.root('GET', '/v1/agent/health/service/id/db-1?format=text');
    expect({ status: res.status, text: res.text }).toEqual({ status: 503, text: 'critical' });
    expect((await s.root('GET', '/v1/agent/health/service/id/none')).status).toBe(404);
    expect((await s.root('GET', '/v1/agent/health/service/name/none')).status).toBe(404);
  });

  test('maintenance: service and node checks named as the public service names them', async () => {
    await s.root('PUT', '/v1/agent/check/pass/db-ttl');
    expect((await s.root('PUT', '/v1/agent/service/maintenance/db-1?enable=true&reason=upgrade')).status).toBe(200);
    let checks = (await s.root('GET', '/v1/agent/checks')).body;
    expect(checks['_service_maintenance:db-1']).toEqual(expect.objectContaining({
      Name: 'Service Maintenance Mode', Status: 'critical', Notes: 'upgrade', ServiceID: 'db-1', Type: 'maintenance',
    }));
    expect((await s.root('GET', '/v1/agent/health/service/id/db-1')).body.AggregatedStatus).toBe('maintenance');
    expect((await s.root('GET', '/v1/health/service/db?passing=1')).body).toEqual([]);
    await s.root('PUT', '/v1/agent/service/maintenance/db-1?enable=false');
    expect((await s.root('GET', '/v1/health/service/db?passing=1')).body).toHaveLength(1);

    expect((await s.root('PUT', '/v1/agent/maintenance?enable=true')).status).toBe(200);
    checks = (await s.root('GET', '/v1/agent/checks')).body;
    expect(checks._node_maintenance).toEqual(expect.objectContaining({
      Name: 'Node Maintenance Mode', Status: 'critical', Notes: expect.stringMatching(/no reason was provided/),
    }));
    await s.root('PUT', '/v1/agent/maintenance?enable=false');
    expect((await s.root('GET', '/v1/agent/checks')).body._node_maintenance).toBeUndefined();
    expect((await s.root('PUT', '/v1/agent/maintenance')).text).toBe('Missing value for enable');
    expect((await s.root('PUT', '/v1/agent/maintenance?enable=maybe')).status).toBe(400);
    expect((await s.root('PUT', '/v1/agent/service/maintenance/none?enable=true')).status).toBe(404);
  });

  test('checks: register, replace-existing-checks, deregister', async () => {
    expect((await s.root('PUT', '/v1/agent/check/register', { Name: 'disk', TTL: '10s' })).status).toBe(200);
    expect((await s.root('GET', '/v1/agent/checks')).body.disk).toEqual(expect.objectContaining({ ServiceID: '', Status: 'critical' }));
    expect((await s.root('PUT', '/v1/agent/check/register', { Name: 'x', ServiceID: 'none', TTL: '10s' })).status).toBe(400);
    expect((await s.root('PUT', '/v1/agent/check/deregister/disk')).status).toBe(200);
    expect((await s.root('GET', '/v1/agent/checks')).body.disk).toBeUndefined();

    await s.root('PUT', '/v1/agent/service/register?replace-existing-checks', { ID: 'db-1', Name: 'db', Port: 5432, Check: { CheckID: 'db-tcp', TCP: '127.0.0.1:5432', Interval: '10s' } });
    const checks = (await s.root('GET', '/v1/agent/checks')).body;
    expect(checks['db-ttl']).toBeUndefined();
    expect(checks['db-tcp']).toEqual(expect.objectContaining({ Type: 'tcp' }));

    expect((await s.root('PUT', '/v1/agent/service/deregister/db-1')).status).toBe(200);
    expect((await s.root('GET', '/v1/agent/checks')).body['db-tcp']).toBeUndefined();
    expect((await s.root('PUT', '/v1/agent/service/deregister/db-1')).status).toBe(404);
  });

  test('hostile registrations: 400 with the reason, nothing stored', async () => {
    const cases: [unknown, RegExp][] = [
      [{ Name: '' }, /Missing service name/],
      [{ Name: 'h', Port: -1 }, /Port/],
      [{ Name: 'h', Weights: { Passing: 0, Warning: 1 } }, /Invalid Weights: Passing must be greater than 0/],
      [{ Name: 'h', Address: '0.0.0.0' }, /Invalid service address/],
      [{ Name: 'h', Meta: { 'consul-x': 'y' } }, /reserved/],
      [{ Name: 'h', Meta: { ['k'.repeat(129)]: 'v' } }, /Key is too long/],
      [{ Name: 'h', Check: { HTTP: 'http://x' } }, /Interval must be > 0/],
      [{ Name: 'h', Check: { Notes: 'what am I' } }, /TTL must be > 0/],
      [{ Name: 'h', Check: { TTL: '10s', Interval: '10s' } }, /cannot both be specified/],
      [{ Name: 'h', Check: { TTL: '-5s' } }, /negative/],
      [{ Name: 'h', Check: { TTL: '10s', Status: 'great' } }, /Status for checks/],
      [{ Name: 'h', Check: { Args: ['/bin/sh', '-c', 'id'], Interval: '10s' } }, /script and Docker checks are disabled/],
      [{ Name: 'h', Check: { DockerContainerID: 'abc', Shell: '/bin/sh', Args: ['id'], Interval: '10s' } }, /script and Docker checks are disabled/],
      [{ Name: 'h', Check: { Kind: 'x' } }, /unknown field/],
    ];
    for (const [body, message] of cases) {
      const res = await s.root('PUT', '/v1/agent/service/register', body);
      expect({ status: res.status, text: res.text }).toEqual({ status: 400, text: expect.stringMatching(message) });
    }
    expect((await s.root('GET', '/v1/agent/services')).body.h).toBeUndefined();
  });

  test('ACLs: service:write to register, node:write for node checks, filtered reads', async () => {
    const writer = await s.tokenWithRules('service "web" { policy = "write" }');
    expect((await s.as(writer, 'PUT', '/v1/agent/service/register', { Name: 'web', Port: 80, Check: { CheckID: 'web-ttl', TTL: '1m' } })).status).toBe(200);
    expect((await s.as(writer, 'PUT', '/v1/agent/service/register', { Name: 'other', Port: 80 })).status).toBe(403);
    expect((await s.as(writer, 'PUT', '/v1/agent/check/pass/web-ttl')).status).toBe(200);
    expect((await s.as(writer, 'PUT', '/v1/agent/check/register', { Name: 'node-check', TTL: '1m' })).status).toBe(403);
    expect((await s.as(writer, 'PUT', '/v1/agent/maintenance?enable=true')).status).toBe(403);
    expect(Object.keys((await s.as(writer, 'GET', '/v1/agent/services')).body)).toEqual(['web']);
    expect(Object.keys((await s.as(writer, 'GET', '/v1/agent/checks')).body)).toEqual(['web-ttl']);
    expect((await s.as(writer, 'PUT', '/v1/agent/leave')).status).toBe(403);
    expect((await s.as(null, 'GET', '/v1/agent/members')).body).toEqual([]);
    const members = (await s.root('GET', '/v1/agent/members')).body;
    expect(members).toEqual([expect.objectContaining({ Name: node, Status: 1, Tags: expect.objectContaining({ role: 'consul', dc: 'dc1' }) })]);
    expect((await s.root('PUT', '/v1/agent/join/10.9.9.9')).status).toBe(400);
    expect((await s.root('PUT', '/v1/agent/leave')).status).toBe(200);
    // `consul reload`: agent:write; nothing to read again (the configuration comes from flags when the server starts).
    expect((await s.as(writer, 'PUT', '/v1/agent/reload')).status).toBe(403);
    expect((await s.root('PUT', '/v1/agent/reload')).status).toBe(200);
  });
});
