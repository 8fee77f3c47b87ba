import { Directory } from './directory';
import { rotate } from './rotation';
import type { DirectoryConfig, DirectoryProfile } from './settings';
import { badInput, missing } from '../../core/request';
import { EngineRoute, Operation, SecretsRequest, SecretsResponse } from '../../core/types';

/**
 * `rotate-root`: the bind password becomes one only Hangar knows (sealed in the config). Refused
 * when the bind DN names more than one directory entry; a second call while one runs gets 200 and
 * a warning instead of a competing rotation. `ops`: the operations that rotate (`ad` also answers
 * a read, as the public service's `ad` engine does; `ldap` only a write).
 */
export function rotateRootRoutes<C extends DirectoryConfig>(p: DirectoryProfile<C>, ops: ReadonlyArray<'read' | 'update'>): EngineRoute[] {
  async function rotateRoot(req: SecretsRequest): Promise<SecretsResponse | undefined> {
    const ctx = req.core.context(req.mount);
    const config = await ctx.tx((store) => p.requireConfig(store));
    const password = await p.newPassword(ctx, config);
    // Searched from userdn, or from the bind DN itself when none is configured.
    const result = await Directory.with({ ...config, userdn: config.userdn || config.binddn }, async (d) => {
      const matches = await d.entriesWithDn(config.binddn);
      if (matches.length > 1) throw badInput(`binddn "${config.binddn}" matches ${matches.length} directory entries; refusing to rotate an ambiguous bind DN`);
      return rotate<C>({
        ctx,
        key: 'config',
        password,
        now: () => req.engine.clock.now(),
        staleMs: config.request_timeout * 1000,
        apply: (pw) => d.setPassword(config.binddn, pw),
        finish: (c, pw, at) => ({ ...c, bindpass: pw, root_rotated_at: at }),
      });
    });
    if (result === 'gone') throw missing();
    if (result === 'busy') return { data: {}, warnings: ['a root credential rotation is already in progress'] };
    return undefined;
  }
  const handlers: Partial<Record<'read' | 'write', typeof rotateRoot>> = {};
  if (ops.includes('read')) handlers.read = rotateRoot;
  if (ops.includes('update')) handlers.write = rotateRoot;
  return [{ pattern: 'rotate-root', ownTransactions: ops as readonly Operation[], ...handlers }];
}
