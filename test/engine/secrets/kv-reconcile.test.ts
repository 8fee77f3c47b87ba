import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { embeddedSecrets } from './embedded-reconcile';
import { apply, destroy } from '../../../src/reconcile';
import { kvValueHash } from '../../../src/reconcile/kv-value';

/** The kv mount, kv secret, transit key and token role kinds through the embedded engine (the CLI's in-process mode). */
describe('kv, transit key and token role reconcile kinds, embedded', () => {
  const { dataDir, payload, secrets: call } = embeddedSecrets('secrets.');
  afterAll(() => delete process.env.KV_RECONCILE_VALUE);

  test('a v1 store and its secrets, upgraded to v2 in place; values from the environment and a file; deleted', async () => {
    const mount = payload('kv-mount', 'team/kv', { version: 1 });
    expect(await apply(mount)).toBe('created');
    expect(await apply(mount)).toBe('unchanged');
    process.env.KV_RECONCILE_VALUE = '{"token": "t1"}';
    const fromEnv = payload('kv-secret', 'team/kv:app/api', { valueEnv: 'KV_RECONCILE_VALUE' });
    const file = join(dataDir, 'db.json');
    writeFileSync(file, '{"password": "p1"}');
    const fromFile = payload('kv-secret', 'team/kv:app/db', { valueFile: file, valueHash: kvValueHash({ password: 'p1' }) });
    for (const p of [fromEnv, fromFile]) {
      expect(await apply(p)).toBe('created');
      expect(await apply(p)).toBe('unchanged');
    }
    expect((await call((c) => c.read('team/kv/app/api')))?.data).toEqual({ token: 't1' });

    const v2 = payload('kv-mount', 'team/kv', { version: 2, maxVersions: 3, deleteVersionAfter: 3600 });
    expect(await apply(v2)).toBe('updated');
    expect(await apply(v2)).toBe('unchanged');
    expect((await call((c) => c.read('team/kv/config')))?.data).toMatchObject({ max_versions: 3, delete_version_after: '1h0m0s' });
    expect((await call((c) => c.read('team/kv/data/app/db')))?.data?.data).toEqual({ password: 'p1' });
    process.env.KV_RECONCILE_VALUE = '{"token": "t2"}';
    expect(await apply(fromEnv)).toBe('updated');
    expect((await call((c) => c.read('team/kv/data/app/api')))?.data).toMatchObject({ data: { token: 't2' }, metadata: { version: 2 } });
    await expect(apply(payload('kv-mount', 'team/kv', { version: 1 }))).rejects.toThrow(/cannot go back to version 1/);

    process.env.KV_RECONCILE_VALUE = '[1]';
    await expect(apply(fromEnv)).rejects.toThrow(/must hold a JSON object/);
    delete process.env.KV_RECONCILE_VALUE;
    await expect(apply(fromEnv)).rejects.toThrow(/KV_RECONCILE_VALUE \(valueEnv\) is not set/);
    await expect(apply(payload('kv-secret', 'nowhere:x', { valueFile: file }))).rejects.toThrow(/the mount nowhere\/ does not exist/);

    expect(await destroy(fromFile)).toBe(true);
    expect(await destroy(fromFile)).toBe(false);
    expect(await call((c) => c.read('team/kv/metadata/app/db'))).toBeUndefined();
    expect(await destroy(v2)).toBe(true);
    expect(await destroy(fromEnv)).toBe(false);
  });

  test('a transit key updated in place, its type fixed, deleted although deletion was not allowed', async () => {
    await apply(payload('mount', 'transit', { type: 'transit' }));
    const key = payload('transit-key', 'transit/orders', { type: 'ed25519' });
    expect(await apply(key)).toBe('created');
    expect(await apply(key)).toBe('unchanged');
    expect(await apply(payload('transit-key', 'transit/orders', { type: 'ed25519', exportable: true, autoRotatePeriod: 86400 }))).toBe('updated');
    expect((await call((c) => c.read('transit/keys/orders')))?.data).toMatchObject({ type: 'ed25519', exportable: true, auto_rotate_period: 86400, deletion_allowed: false });
    await expect(apply(payload('transit-key', 'transit/orders', { type: 'aes256-gcm96' }))).rejects.toThrow(/type and derivation cannot change/);
    expect(await destroy(key)).toBe(true);
    expect(await destroy(key)).toBe(false);
  });

  test('a token role created, unchanged, updated, deleted', async () => {
    const role = payload('token-role', 'ci', { allowedPolicies: ['deploy'], orphan: true, tokenPeriod: 3600, pathSuffix: 'p' });
    expect(await apply(role)).toBe('created');
    expect(await apply(role)).toBe('unchanged');
    expect(await apply(payload('token-role', 'ci', { allowedPolicies: ['audit', 'deploy'], orphan: true }))).toBe('updated');
    expect((await call((c) => c.read('auth/token/roles/ci')))?.data).toMatchObject({ allowed_policies: ['audit', 'deploy'], token_period: 0, path_suffix: '' });
    expect(await destroy(role)).toBe(true);
    expect(await destroy(role)).toBe(false);
  });
});
