import type { Engine } from '../engine';
import { Barrier } from './core/barrier';
import { SecretsCore } from './core/core';
import { DEFAULT_MOUNTS, ENGINE_TYPES } from './engines';

const cores = new WeakMap<Engine, Promise<SecretsCore>>();

/**
 * The secrets core of an engine, created on first use: the barrier opens (the key file is
 * created then), the keyring and the built-in mounts are ensured, and in dev mode the spec's
 * default mounts. A failure (a wrong key) is not cached, so the next request reports it again.
 */
export function secretsCore(engine: Engine): Promise<SecretsCore> {
  let core = cores.get(engine);
  if (!core) {
    core = (async () => {
      const barrier = engine.unseal
        ? new Barrier(await engine.unseal())
        : Barrier.fromEnvironment(engine.dataDir, process.env, engine.secretsKeyFile);
      const c = new SecretsCore(engine, barrier, ENGINE_TYPES);
      await c.init(DEFAULT_MOUNTS);
      return c;
    })();
    cores.set(engine, core);
    core.catch(() => cores.delete(engine));
  }
  return core;
}
