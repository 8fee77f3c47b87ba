import { AsyncLocalStorage } from 'node:async_hooks';
import { Storage } from './types';

/**
 * Set by the test suite (test/setup/global-setup.ts): a transaction opened inside another of the
 * same kind fails at once with a stack naming the caller. On SQLite it would wait for itself for
 * ever (a read behind the read it runs in, a write behind its own write group), and with it every
 * later transaction of the server. Unset, as on every real server, nothing here runs.
 */
export const NESTED_TX_CHECK_VAR = 'HANGAR_CHECK_NESTED_TX';

interface Open {
  readonly readOnly: boolean;
  open: boolean;
}

/** Wraps `storage.tx` with the check. */
export function checkNesting(storage: Storage): void {
  const current = new AsyncLocalStorage<Open>();
  const tx = storage.tx.bind(storage);
  storage.tx = (fn, options) => {
    const readOnly = options?.readOnly === true;
    const outer = current.getStore();
    if (outer?.open && outer.readOnly === readOnly) {
      return Promise.reject(new Error(`a ${readOnly ? 'read' : 'write'} transaction was opened inside another: it would wait for itself`));
    }
    return tx((db) => {
      // Timers and callbacks this transaction starts keep the store: once it ends they may open their own.
      const state: Open = { readOnly, open: true };
      return current.run(state, () => fn(db)).finally(() => {
        state.open = false;
      });
    }, options);
  };
}
