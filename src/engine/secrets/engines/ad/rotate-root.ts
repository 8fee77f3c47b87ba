import { AdConfig, requireConfig } from './config';
import { Directory } from './directory';
import { generatePassword, rotate } from './rotation';
import { badInput, missing } from '../../core/request';
import { EngineRoute, SecretsRequest, SecretsResponse } from '../../core/types';

/**
 * `rotate-root`: the bind password becomes one only Hangar knows (sealed in the config). Refused
 * when the bind DN names more than one directory entry; a second call while one runs gets 200 and
 * a warning instead of a competing rotation.
 */
async function rotateRoot(req: SecretsRequest): Promise<SecretsResponse | undefined> {
  const ctx = req.core.context(req.mount);
  const config = await ctx.tx((store) => requireConfig(store));
  // Searched from userdn, or from the bind DN itself when none is configured.
  const result = await Directory.with({ ...config, userdn: config.userdn || config.binddn }, async (d) => {
    const matches = await d.entriesWithDn(config.binddn);
    if (matches.length > 1) throw badInput(`binddn "${config.binddn}" matches ${matches.length} directory entries; refusing to rotate an ambiguous bind DN`);
    return rotate<AdConfig>({
      ctx,
      key: 'config',
      password: generatePassword(config),
      now: () => req.engine.clock.now(),
      staleMs: config.request_timeout * 1000,
      apply: (password) => d.setPassword(config.binddn, password),
      finish: (c, password, at) => ({ ...c, bindpass: password, root_rotated_at: at }),
    });
  });
  if (result === 'gone') throw missing();
  if (result === 'busy') return { data: {}, warnings: ['a root credential rotation is already in progress'] };
  return undefined;
}

export const rotateRootRoutes: EngineRoute[] = [{ pattern: 'rotate-root', ownTransactions: ['read', 'update'], read: rotateRoot, write: rotateRoot }];
