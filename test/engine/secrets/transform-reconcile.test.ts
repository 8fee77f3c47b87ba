import { embeddedSecrets } from './embedded-reconcile';
import { apply, destroy } from '../../../src/reconcile';
import { PAYLOAD_VERSION } from '../../../src/reconcile/payload-format';

/** The transform kinds through the embedded engine (the CLI's in-process mode on a data directory). */
describe('transform reconcile kinds, embedded', () => {
  const { dataDir, payload, secrets: call } = embeddedSecrets('secrets.transform-');

  test('alphabet, template, transformation, role: created, unchanged, updated in place, type change replaces, deleted in order', async () => {
    expect(await apply({ v: PAYLOAD_VERSION, kind: 'secrets.mount', key: 'tf', connection: { dataDir }, desired: { type: 'transform' } })).toBe('created');
    const alphabet = payload('alphabet', 'tf/hex', { alphabet: '0123456789abcdef' });
    const template = payload('template', 'tf/hex-id', { type: 'regex', pattern: 'id-([0-9a-f]+)', alphabet: 'hex' });
    const fpe = { type: 'fpe', template: 'hex-id', tweakSource: 'internal', maskingCharacter: '', allowedRoles: ['app'], mappingMode: '', maxTtl: 0, stores: [] };
    const transformation = payload('transformation', 'tf/hex-fpe', fpe);
    const role = payload('role', 'tf/app', { transformations: ['hex-fpe'] });
    for (const p of [alphabet, template, transformation, role]) {
      expect(await apply(p)).toBe('created');
      expect(await apply(p)).toBe('unchanged');
    }
    const encoded = await call((c) => c.write('tf/encode/app', { value: 'id-00ff00' }));
    expect(encoded?.data?.encoded_value).toMatch(/^id-[0-9a-f]{6}$/);
    expect(await apply({ ...transformation, desired: { ...fpe, allowedRoles: ['app', 'other'] } })).toBe('updated');
    // The key survived the update: the earlier encoding still decodes.
    expect((await call((c) => c.write('tf/decode/app', { value: encoded!.data!.encoded_value })))?.data?.decoded_value).toBe('id-00ff00');
    // A type change replaces the transformation (its role must let go first: the engine guards it).
    const masking = { ...fpe, type: 'masking', tweakSource: '', maskingCharacter: '#' };
    await expect(apply({ ...transformation, desired: masking })).rejects.toThrow(/used by role "app"/);
    expect(await apply({ ...role, desired: { transformations: [] } })).toBe('updated');
    expect(await apply({ ...transformation, desired: masking })).toBe('updated');
    expect((await call((c) => c.read('tf/transformation/hex-fpe')))?.data).toMatchObject({ type: 'masking', masking_character: '#' });
    for (const p of [role, transformation, template, alphabet]) {
      expect(await destroy(p)).toBe(true);
      expect(await destroy(p)).toBe(false);
    }
  });

  test('a store: the password from the environment, always written', async () => {
    const store = payload('store', 'tf/pg', { connectionString: 'postgresql://{{username}}:{{password}}@127.0.0.1:1/tokens', username: 'rt', passwordEnv: 'TEST_TRANSFORM_STORE_PW' });
    await expect(apply(store)).rejects.toThrow(/environment variable TEST_TRANSFORM_STORE_PW \(passwordEnv\) is not set/);
    process.env.TEST_TRANSFORM_STORE_PW = 'pw';
    try {
      expect(await apply(store)).toBe('created');
      expect(await apply(store)).toBe('updated');
    } finally {
      delete process.env.TEST_TRANSFORM_STORE_PW;
    }
    expect((await call((c) => c.read('tf/store/pg')))?.data).toMatchObject({ type: 'sql', schema: 'public' });
    expect(await destroy(store)).toBe(true);
  });
});
