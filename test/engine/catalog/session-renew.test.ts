import { CatalogServer, startCatalogServer } from './helpers';
import { ManualClock } from '../../../src/engine/clock';
import { STORAGE_KINDS } from '../../helpers/storage';

/**
 * A session is created to expire 2 TTL later, and renewal writes the durable expiry only when less
 * than one TTL is left (then 2 TTL ahead, the public service's bound): a session still lives at least
 * TTL and at most 2 TTL after its last renewal, and a burst of renewals costs one write, not one per call.
 */
describe.each(STORAGE_KINDS)('catalog session renewal (%s)', (kind) => {
  let s: CatalogServer;
  const clock = new ManualClock();
  beforeAll(async () => {
    s = await startCatalogServer(kind, { clock });
  });
  afterAll(() => s.close());

  const storedExpiry = (id: string) =>
    s.engine.storage.tx(async (db) => Number((await db.get<{ expires_at: number | string }>('SELECT expires_at FROM catalog_sessions WHERE id = ?', [id]))?.expires_at));
  const alive = async (id: string) => {
    await s.engine.scheduler.runOnce();
    return (await s.root('GET', `/v1/session/info/${id}`)).body.length === 1;
  };

  test('a new session lives 2 TTL; a burst of renewals writes once; the session dies between TTL and 2 TTL after the last', async () => {
    expect((await s.root('PUT', '/v1/catalog/register', { Node: 'renew-node', Address: '10.0.0.9' })).status).toBe(200);
    const start = clock.now();
    const id = (await s.root('PUT', '/v1/session/create', { Node: 'renew-node', TTL: '10s' })).body.ID as string;
    // The public service arms a new session's timer for 2 TTL too.
    expect(await storedExpiry(id)).toBe(start + 20_000);

    // More than one TTL left: a renewal within the first TTL writes nothing.
    clock.advance(6_000);
    const renewed = await s.root('PUT', `/v1/session/renew/${id}`);
    expect(renewed.status).toBe(200);
    expect(renewed.body[0]).toMatchObject({ ID: id, TTL: '10s' });
    expect(await storedExpiry(id)).toBe(start + 20_000);

    clock.advance(5_000);
    expect((await s.root('PUT', `/v1/session/renew/${id}`)).status).toBe(200);
    expect(await storedExpiry(id)).toBe(start + 11_000 + 20_000);

    clock.advance(1_000);
    for (let i = 0; i < 20; i++) expect((await s.root('PUT', `/v1/session/renew/${id}`)).status).toBe(200);
    expect(await storedExpiry(id)).toBe(start + 31_000);

    // Last renewal at start + 12 s: alive 10 s after it, gone 19 s after it (the stored expiry, 2 TTL after the last write).
    clock.advance(9_999);
    expect(await alive(id)).toBe(true);
    clock.advance(9_002);
    expect(await alive(id)).toBe(false);
    expect((await s.root('PUT', `/v1/session/renew/${id}`)).status).toBe(404);
  });
});
