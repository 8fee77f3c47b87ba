import { AUTH_MODES, FUZZ_TIMEOUT_MS, FuzzServer, fuzzTargets, routeTargets, startFuzzServer, uncoveredOperations } from './harness';
import { registryApi } from '../../src/engine/registry/api';
import { inMaintenance, setMaintenance } from '../../src/engine/registry/limits';

/** Property-based fuzzing of every route of the box registry's route table (issue 18). */
describe('registry API under fuzzed input', () => {
  let fz: FuzzServer;
  beforeAll(async () => {
    fz = await startFuzzServer();
  });
  afterAll(() => fz?.server.close());

  it('answers every route without a 5xx, and a failed request changes nothing', async () => {
    const targets = routeTargets(registryApi.routes);
    expect(uncoveredOperations('registry', targets)).toEqual([]);
    const { failures, statuses } = await fuzzTargets(fz, targets, {
      api: 'registry',
      auth: AUTH_MODES('authorization'),
      // The fuzzed admin switch may turn maintenance mode on (503 for every change, EXPECTED_5XX): turned off again.
      afterEach: async () => {
        if (await inMaintenance(fz.server.engine)) await fz.server.engine.storage.tx((db) => setMaintenance(db, fz.server.engine, false));
      },
    });
    expect(failures).toEqual([]);
    expect(statuses['2xx']).toBeGreaterThan(0);
  }, FUZZ_TIMEOUT_MS);
});
