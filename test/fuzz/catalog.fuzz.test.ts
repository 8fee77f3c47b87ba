import { AUTH_MODES, FUZZ_TIMEOUT_MS, FuzzServer, fuzzTargets, routeTargets, startFuzzServer, uncoveredOperations } from './harness';
import { catalogApi } from '../../src/engine/catalog/api';

/** Property-based fuzzing of every route of the service catalog's route table (issue 18). */
describe('catalog API under fuzzed input', () => {
  let fz: FuzzServer;
  beforeAll(async () => {
    fz = await startFuzzServer();
  });
  afterAll(() => fz?.server.close());

  it('answers every route without a 5xx, and a failed request changes nothing', async () => {
    const targets = routeTargets(catalogApi.routes);
    expect(uncoveredOperations('catalog', targets)).toEqual([]);
    const { failures, statuses } = await fuzzTargets(fz, targets, {
      api: 'catalog',
      auth: AUTH_MODES('x-consul-token'),
      // A blocking query with an index ahead of the store waits up to ?wait= (5 minutes by default): kept short.
      adjust: (_method, query) => ('index' in query ? { ...query, wait: '5ms' } : query),
    });
    expect(failures).toEqual([]);
    expect(statuses['2xx']).toBeGreaterThan(0);
  }, FUZZ_TIMEOUT_MS);
});
