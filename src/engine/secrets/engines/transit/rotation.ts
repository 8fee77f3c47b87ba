import { loadKeyring, openKeyring, rotate, saveKeyring } from './keyring';
import type { Engine } from '../../../engine';
import type { SecretsCore } from '../../core/core';

/**
 * The background job's round: every transit key whose `auto_rotate_period` has passed since its
 * latest version was made gets a new version. One transaction, so a crash rotates nothing twice.
 */
export async function rotateDueKeys(engine: Engine, core: SecretsCore): Promise<void> {
  const now = engine.clock.now();
  await engine.storage.tx(async (db) => {
    for (const mount of await core.mounts.all(db)) {
      if (mount.kind !== 'secret' || mount.type !== 'transit') continue;
      const store = core.store(db, mount);
      for (const name of await store.list('keys/')) {
        const due = await openKeyring(store, name);
        if (!due?.autoRotatePeriod) continue;
        if (now - due.versions[String(due.latestVersion)].created < due.autoRotatePeriod * 1000) continue;
        const ring = (await loadKeyring(store, name))!;
        rotate(ring, now);
        await saveKeyring(store, ring);
      }
    }
  });
}
