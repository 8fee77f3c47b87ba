import { ManualClock } from '../../src/engine/clock';
import { CachedSetting, putSetting } from '../../src/engine/settings';
import { openedStorage } from '../helpers/storage';

describe('a cached setting', () => {
  const opened = openedStorage('sqlite');
  const clock = new ManualClock();
  const put = (value: string) => opened.storage.tx((db) => putSetting(db, 'test:setting', value));
  const read = (setting: CachedSetting) => opened.storage.tx((db) => setting.get(db), { readOnly: true });

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
    await opened.storage.tx(async (db) => {
      await putSetting(db, 'test:setting', 'three');
      setting.remember('three');
    });
    expect(setting.kept()).toEqual({ value: 'three' });
  });
});
