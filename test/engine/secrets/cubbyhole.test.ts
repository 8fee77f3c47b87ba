import { startSecrets, SecretsTestServer } from './helpers';
import { STORAGE_KINDS } from '../../helpers/storage';

describe.each(STORAGE_KINDS)('cubbyhole engine (%s)', (kind) => {
  let s: SecretsTestServer;
  beforeAll(async () => {
    s = await startSecrets(kind);
  });
  afterAll(() => s.close());

  test('private to each token through the default policy, gone with the token, built in', async () => {
    const mine = await s.tokenWith(undefined, { no_default_policy: false });
    const other = await s.tokenWith(undefined, { no_default_policy: false });
    expect((await s.v('PUT', 'cubbyhole/app/pw', { pw: 'mine' }, mine)).status).toBe(204);
    expect((await s.v('GET', 'cubbyhole/app/pw', undefined, mine)).body.data).toEqual({ pw: 'mine' });
    expect((await s.v('LIST', 'cubbyhole', undefined, mine)).body.data.keys).toEqual(['app/']);
    expect((await s.v('LIST', 'cubbyhole/app', undefined, mine)).body.data.keys).toEqual(['pw']);
    // Not even root sees another token's cubbyhole: the same path is its own.
    expect((await s.v('GET', 'cubbyhole/app/pw', undefined, other)).status).toBe(404);
    expect((await s.v('GET', 'cubbyhole/app/pw')).status).toBe(404);
    expect((await s.v('LIST', 'cubbyhole', undefined, other)).status).toBe(404);
    const empty = await s.v('POST', 'cubbyhole/x', {}, mine);
    expect([empty.status, empty.body.errors[0]]).toEqual([400, expect.stringMatching(/no data provided/)]);
    const bare = await s.tokenWith(undefined);
    expect((await s.v('GET', 'cubbyhole/app/pw', undefined, bare)).status).toBe(403);
    const batch = await s.tokenWith(undefined, { no_default_policy: false, type: 'batch' });
    expect((await s.v('GET', 'cubbyhole/app/pw', undefined, batch)).body.errors[0]).toMatch(/only supported by service type tokens/);

    expect((await s.v('POST', 'auth/token/revoke-self', {}, mine)).status).toBe(204);
    const stored = await s.engine.storage.tx((db) => db.all<{ path: string }>('SELECT path FROM secrets_entries'), { readOnly: true });
    expect(stored.filter((r) => r.path.endsWith('/app/pw'))).toEqual([]);
    const unmount = await s.v('DELETE', 'sys/mounts/cubbyhole');
    expect(unmount.status).toBe(400);
    expect((await s.v('POST', 'sys/mounts/cub2', { type: 'cubbyhole' })).status).toBe(400);
  });
});
