import { CatalogClient } from '../../../src/client/catalog';
import { openTransport } from '../../../src/client/open';
import { apply, destroy } from '../../../src/reconcile';
import { serviceKey } from '../../../src/reconcile/catalog-key';
import { embeddedSecrets } from '../secrets/embedded-reconcile';

/** The node and service kinds through the embedded engine (the CLI's in-process mode). */
describe('catalog node and service reconcile kinds, embedded', () => {
  const { dataDir, payload } = embeddedSecrets('catalog.');
  const catalog = async <T>(fn: (c: CatalogClient) => Promise<T>): Promise<T> => {
    const transport = await openTransport({ dataDir });
    try {
      return await fn(new CatalogClient(transport));
    } finally {
      await transport.close();
    }
  };
  const http = { checkId: 'web-http', name: 'HTTP', http: 'http://10.0.0.5:8080/health', method: 'GET', header: { 'X-Probe': ['1'] }, interval: '10s', timeout: '2s' };
  const tcp = { checkId: 'web-tcp', name: 'TCP', tcp: '10.0.0.5:8080', interval: '1m', timeout: '1s', deregisterCriticalServiceAfter: '90s', status: 'passing' };

  test('a node and a service with checks: created, unchanged, updated in place, checks removed, deleted', async () => {
    const key = serviceKey('default', 'ext/one', 'web-1');
    const service = (desired: Record<string, unknown>) => payload('service', key, { name: 'web', port: 8080, ...desired });
    // The node must exist first (as the public provider requires).
    await expect(apply(service({}))).rejects.toThrow(/node "ext\/one" does not exist: declare it with a CatalogNode/);

    const node = payload('node', 'ext/one', { address: '10.0.0.5', meta: { 'external-node': 'true' }, taggedAddresses: { lan: '10.0.0.5' } });
    expect(await apply(node)).toBe('created');
    expect(await apply(node)).toBe('unchanged');
    expect(await catalog((c) => c.getNode('ext/one'))).toMatchObject({ Address: '10.0.0.5', Meta: { 'external-node': 'true' }, TaggedAddresses: { lan: '10.0.0.5' } });

    const first = service({ tags: ['v1'], meta: { team: 'web' }, checks: [http, tcp] });
    expect(await apply(first)).toBe('created');
    expect(await apply(first)).toBe('unchanged');
    const read = () => catalog(async (c) => ({ services: await c.nodeServices('ext/one', 'default'), checks: await c.nodeChecks('ext/one', 'default') }));
    const created = await read();
    expect(created.services).toEqual([expect.objectContaining({ ID: 'web-1', Service: 'web', Port: 8080, Tags: ['v1'], Meta: { team: 'web' }, Address: '', EnableTagOverride: false })]);
    const checks = created.checks.filter((c) => c.ServiceID === 'web-1');
    expect(checks).toEqual([
      expect.objectContaining({
        CheckID: 'web-http',
        Name: 'HTTP',
        Status: 'critical',
        Definition: expect.objectContaining({ HTTP: 'http://10.0.0.5:8080/health', Method: 'GET', Header: { 'X-Probe': ['1'] }, Interval: '10s', Timeout: '2s' }),
      }),
      expect.objectContaining({
        CheckID: 'web-tcp',
        Status: 'passing',
        Definition: expect.objectContaining({ TCP: '10.0.0.5:8080', Interval: '1m0s', Timeout: '1s', DeregisterCriticalServiceAfter: '1m30s' }),
      }),
    ]);

    // A new tag, the TCP check dropped: the same service re-registered, the check deregistered.
    const second = service({ tags: ['v2'], meta: { team: 'web' }, checks: [http], enableTagOverride: true, weights: { passing: 3, warning: 1 } });
    expect(await apply(second)).toBe('updated');
    expect(await apply(second)).toBe('unchanged');
    const updated = await read();
    expect(updated.services).toEqual([expect.objectContaining({ ID: 'web-1', Tags: ['v2'], EnableTagOverride: true, Weights: { Passing: 3, Warning: 1 } })]);
    expect(updated.services[0]).toMatchObject({ CreateIndex: (created.services[0] as unknown as { CreateIndex: number }).CreateIndex });
    expect(updated.checks.filter((c) => c.ServiceID === 'web-1').map((c) => c.CheckID)).toEqual(['web-http']);

    // A node changed in place keeps its services.
    expect(await apply(payload('node', 'ext/one', { address: '10.0.0.6' }))).toBe('updated');
    expect((await read()).services.map((s) => s.ID)).toEqual(['web-1']);

    await expect(apply(payload('node', 'ext/two', { address: '10.0.0.7', datacenter: 'dc2' }))).rejects.toThrow(/No path to datacenter/);

    expect(await destroy(second)).toBe(true);
    expect(await destroy(second)).toBe(false);
    expect((await read()).services).toEqual([]);
    expect(await destroy(node)).toBe(true);
    expect(await destroy(node)).toBe(false);
    expect(await catalog((c) => c.getNode('ext/one'))).toBeUndefined();
  });
});
