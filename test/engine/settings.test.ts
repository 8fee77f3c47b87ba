import { ManualClock } from '../../src/engine/clock';
import { CachedSetting, putSetting } from '../../src/engine/settings';
import { openStorage, Storage } from '../../src/engine/storage';
import { freshStorage, FreshStorage } from '../helpers/storage';

describe('a cached setting', () => {
  let fresh: FreshStorage;
  let storage: Storage;
  const clock = new ManualClock();
  const put = (value: string) => storage.tx((db) => putSetting(db, 'test:setting', value));
  const read = (setting: CachedSetting) => storage.tx((db) => setting.get(db), { readOnly: true });

  beforeAll(async () => {
    fresh = await freshStorage('sqlite');
    storage = await openStorage(fresh.config);
  });
  afterAll(async () => {
    await storage.close();
    await fresh.cleanup();
  });

  test('is read again once its age is reached, or when the clock went back', async () => {
    const setting = new CachedSetting('test:setting', 1000, clock);
    expect(setting.kept()).toBeUndefined();
    expect(await read(setting)).toBeUndefined();
    await put('one');
    expect(await read(setting)).toBeUndefined();
    clock.advance(999);
    expect(await read(setting)).toBeUndefined();
    clock.advance(1);
    expect(await read(setting)).toBe('one');
    await put('two');
    clock.advance(-1);
    expect(await read(setting)).toBe('two');
  });

  test('keeps what this server wrote', async () => {
    const setting = new CachedSetting('test:setting', 1000, clock);
    await storage.tx(async (db) => {
      await putSetting(db, 'test:setting', 'three');
      setting.remember('three');
    });
    expect(setting.kept()).toEqual({ value: 'three' });
  });
});
