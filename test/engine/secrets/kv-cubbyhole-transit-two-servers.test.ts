import { ROOT_TOKEN, startTestServer, TestServer } from '../../helpers/server';
import { freshStorage, FreshStorage, STORAGE_KINDS } from '../../helpers/storage';

/**
 * Two servers on one database: what a server keeps opened in memory (KV v1, KV v2 and cubbyhole
 * entries, transit keys) follows every write made through the other at its next request.
 */
describe.each(STORAGE_KINDS)('KV and cubbyhole entries and transit keys changed through another server (%s)', (kind) => {
  let storage: FreshStorage;
  let a: TestServer;
  let b: TestServer;
  const v = async (server: TestServer, method: string, path: string, body?: unknown, status = 200, token = ROOT_TOKEN) => {
    const res = await server.call('secrets', method, `/v1/${path}`, { body, headers: { 'x-vault-token': token } });
    if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const b64 = (text: string) => Buffer.from(text).toString('base64');

  beforeAll(async () => {
    storage = await freshStorage(kind);
    a = await startTestServer(kind, { sharedStorage: storage });
    b = await startTestServer(kind, { sharedStorage: storage });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await storage?.cleanup();
  });

  test('a KV v2 secret', async () => {
    await v(a, 'POST', 'sys/mounts/kv2', { type: 'kv', options: { version: 2 } }, 204);
    await v(a, 'POST', 'kv2/data/app', { data: { n: 1 } });
    for (let i = 0; i < 2; i++) expect((await v(a, 'GET', 'kv2/data/app')).data.data).toEqual({ n: 1 });
    await v(b, 'POST', 'kv2/data/app', { data: { n: 2 } });
    expect((await v(a, 'GET', 'kv2/data/app')).data).toMatchObject({ data: { n: 2 }, metadata: { version: 2 } });
    await v(b, 'POST', 'kv2/metadata/app', { custom_metadata: { owner: 'b' } }, 204);
    expect((await v(a, 'GET', 'kv2/metadata/app')).data.custom_metadata).toEqual({ owner: 'b' });
    await v(b, 'DELETE', 'kv2/data/app', undefined, 204);
    expect((await v(a, 'GET', 'kv2/data/app', undefined, 404)).data).toMatchObject({ data: null, metadata: { version: 2 } });
    await v(b, 'DELETE', 'kv2/metadata/app', undefined, 204);
    await v(a, 'GET', 'kv2/data/app', undefined, 404);
  });

  test('a KV v1 secret and a cubbyhole entry', async () => {
    await v(a, 'POST', 'sys/mounts/kv1', { type: 'kv', options: { version: 1 } }, 204);
    await v(a, 'POST', 'kv1/app', { n: 1, nested: { list: [1] } }, 204);
    for (let i = 0; i < 2; i++) expect((await v(a, 'GET', 'kv1/app')).data).toEqual({ n: 1, nested: { list: [1] } });
    await v(b, 'POST', 'kv1/app', { n: 2 }, 204);
    expect((await v(a, 'GET', 'kv1/app')).data).toEqual({ n: 2 });
    await v(b, 'DELETE', 'kv1/app', undefined, 204);
    await v(a, 'GET', 'kv1/app', undefined, 404);

    const token = (await v(a, 'POST', 'auth/token/create', { policies: ['default'] })).auth.client_token as string;
    const other = (await v(a, 'POST', 'auth/token/create', { policies: ['default'] })).auth.client_token as string;
    await v(a, 'POST', 'cubbyhole/pw', { pw: 'one' }, 204, token);
    for (let i = 0; i < 2; i++) expect((await v(a, 'GET', 'cubbyhole/pw', undefined, 200, token)).data).toEqual({ pw: 'one' });
    await v(a, 'GET', 'cubbyhole/pw', undefined, 404, other);
    await v(b, 'POST', 'cubbyhole/pw', { pw: 'two' }, 204, token);
    expect((await v(a, 'GET', 'cubbyhole/pw', undefined, 200, token)).data).toEqual({ pw: 'two' });
  });

  test('a transit key', async () => {
    await v(a, 'POST', 'sys/mounts/transit', { type: 'transit' }, 204);
    await v(a, 'POST', 'transit/keys/k', {});
    const first = (await v(a, 'POST', 'transit/encrypt/k', { plaintext: b64('one') })).data.ciphertext;
    await v(b, 'POST', 'transit/keys/k/rotate', {});
    const second = (await v(a, 'POST', 'transit/encrypt/k', { plaintext: b64('two') })).data.ciphertext;
    expect(second).toMatch(/^vault:v2:/);
    await v(b, 'POST', 'transit/keys/k/config', { min_decryption_version: 2, deletion_allowed: true });
    await v(a, 'POST', 'transit/decrypt/k', { ciphertext: first }, 400);
    expect((await v(a, 'POST', 'transit/decrypt/k', { ciphertext: second })).data.plaintext).toBe(b64('two'));
    await v(b, 'DELETE', 'transit/keys/k', undefined, 204);
    await v(a, 'POST', 'transit/decrypt/k', { ciphertext: second }, 404);
  });
});
