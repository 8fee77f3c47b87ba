import { ManualClock } from '../../src/engine/clock';
import { Engine } from '../../src/engine/engine';
import { ROOT_TOKEN_REREAD_MS } from '../../src/engine/root-token';
import { ROOT_TOKEN, startTestServer, TestServer } from '../helpers/server';
import { freshStorage, FreshStorage } from '../helpers/storage';

/**
 * A server keeps the root token's hash in memory; another server starting on the same database
 * with another dev root token replaces it, and the first sees that within ROOT_TOKEN_REREAD_MS.
 */
describe('the root token a running server accepts', () => {
  let storage: FreshStorage;
  let server: TestServer;
  const clock = new ManualClock(Date.now());

  beforeAll(async () => {
    storage = await freshStorage('sqlite');
    server = await startTestServer('sqlite', { sharedStorage: storage, clock });
  });
  afterAll(async () => {
    await server.close();
    await storage.cleanup();
  });

  /** The status each API answers a root-only request made with `token`. */
  async function asRoot(token: string): Promise<number[]> {
    return Promise.all([
      server.call('registry', 'GET', '/api/v1/admin/maintenance', { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status),
      server.call('secrets', 'GET', '/v1/sys/policies/acl/root', { headers: { 'x-vault-token': token } }).then((r) => r.status),
      server.call('catalog', 'GET', '/v1/acl/tokens', { headers: { 'x-consul-token': token } }).then((r) => r.status),
    ]);
  }

  test('is the one stored, read again at most once a second', async () => {
    expect(await asRoot(ROOT_TOKEN)).toEqual([200, 200, 200]);
    const other = await Engine.open({ storage: storage.config, dataDir: storage.dataDir, devRootToken: 'another-root-token' });
    await other.close();
    expect(await asRoot(ROOT_TOKEN)).toEqual([200, 200, 200]);
    clock.advance(ROOT_TOKEN_REREAD_MS);
    expect(await asRoot('another-root-token')).toEqual([200, 200, 200]);
    const refused = await asRoot(ROOT_TOKEN);
    expect(refused.every((status) => status === 401 || status === 403)).toBe(true);
  });
});
