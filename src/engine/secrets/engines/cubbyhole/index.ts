import { badInput } from '../../core/request';
import { EngineType, SecretsRequest } from '../../core/types';
import { allKeys } from '../kv/secret';
import { plainRoutes } from '../kv/v1';

/**
 * Each token's own folder of the mount's store, named by the token's hash: no other token, not
 * even a root token, reaches it, and revoking the token drops it (`tokensRevoked`). Response
 * wrapping keeps a wrapped response in its wrapping token's folder (system/wrapping.ts).
 */
export const cubbyholeHome = (idHash: string) => `${idHash}/`;

function home(req: SecretsRequest): string {
  const entry = req.caller!.entry;
  // As Vault: a batch token has no storage of its own.
  if (entry.type === 'batch') throw badInput('cubbyhole operations are only supported by service type tokens');
  return cubbyholeHome(entry.idHash);
}

/** Vault's cubbyhole: KV version 1 semantics, private to the calling token, gone with it. */
export const cubbyholeEngine: EngineType = {
  type: 'cubbyhole',
  kind: 'secret',
  description: 'per-token private secret storage',
  routes: plainRoutes(home, false),
  async tokensRevoked(ctx, idHashes) {
    await ctx.tx(async (store) => {
      for (const hash of idHashes) for (const key of await allKeys(store, cubbyholeHome(hash))) await store.delete(key);
    });
  },
};
