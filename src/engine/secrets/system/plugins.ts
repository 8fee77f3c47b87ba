import { z } from 'zod';
import { commaList } from '../core/durations';
import { normalizeMountPath } from '../core/mounts';
import { badInput } from '../core/request';
import { EngineRoute, SecretsRequest, SecretsResponse } from '../core/types';

const ReloadBody = z.object({
  plugin: z.string().default(''),
  mounts: commaList.default([]),
  scope: z.string().default(''),
});
type ReloadBody = z.infer<typeof ReloadBody>;

/**
 * `sys/plugins/reload/backend`: Vault restarts the processes of a plugin or of some mounts. Hangar's
 * engines live in its own process and keep no state a reload would refresh, so the request is checked
 * as Vault checks it and answered with its `reload_id`. The public service's Terraform provider calls
 * it after writing a transit `cache-config`.
 */
async function reload(req: SecretsRequest<ReloadBody>): Promise<SecretsResponse> {
  const { plugin, mounts, scope } = req.body;
  if (scope !== '' && scope !== 'global') throw badInput("reload scope must be omitted or 'global'");
  if (plugin !== '' && mounts.length > 0) throw badInput('plugin and mounts cannot be set at the same time');
  if (plugin === '' && mounts.length === 0) throw badInput('plugin or mounts must be provided');
  if (mounts.length > 0) {
    const known = (await req.core.mounts.all(req.db)).map((m) => m.path);
    for (const mount of mounts) {
      let path: string;
      try {
        path = normalizeMountPath(mount);
      } catch {
        throw badInput(`cannot fetch mount entry on "${mount}"`);
      }
      if (!known.some((k) => path.startsWith(k))) throw badInput(`cannot fetch mount entry on "${mount}"`);
    }
  }
  return { data: { reload_id: req.requestId } };
}

export const pluginSystemRoutes: EngineRoute[] = [{ pattern: 'plugins/reload/backend', body: ReloadBody, readOnly: true, write: reload }];
