import { hostname } from 'node:os';
import { z } from 'zod';
import { sealStatus } from './status';
import { rfc3339 } from '../core/durations';
import { badInput } from '../core/request';
import { EngineRoute, SecretsRequest, SecretsResponse } from '../core/types';
import { SECRETS_API_VERSION } from '../core/version';

/** Hangar's answer to what only a sealed store with unseal keys has (`vault operator seal`, `generate-root`, `rekey`). */
const NO_SEAL =
  'Hangar has no seal and no unseal or recovery keys: its master key is a key file or an environment variable (see the operations guide); it cannot be sealed, rekeyed or used to generate a root token';
const noSeal = async (): Promise<never> => {
  throw badInput(NO_SEAL);
};

const UnsealBody = z.object({ key: z.string().optional(), reset: z.boolean().optional(), migrate: z.boolean().optional() });

/** `sys/ha-status` (`vault operator members`): one server, the active node. */
async function haStatus(req: SecretsRequest): Promise<SecretsResponse> {
  const node = {
    hostname: hostname(),
    api_address: req.baseUrl,
    cluster_address: '',
    active_node: true,
    last_echo: null,
    version: SECRETS_API_VERSION,
    echo_duration_ms: 0,
    clock_skew_ms: 0,
    replication_primary_canary_age_ms: 0,
  };
  // Also at the top level, where the Go client reads it (one of Vault's legacy top-level paths).
  return { data: { nodes: [node] }, topLevel: true };
}

/** `sys/version-history` (`vault version-history`): the one API version since the store was created. */
async function versionHistory(req: SecretsRequest): Promise<SecretsResponse> {
  const sys = await req.core.mounts.get(req.db, 'sys/');
  const installed = { timestamp_installed: rfc3339(Math.floor((sys?.createdAt ?? req.now) / 1000) * 1000), build_date: '', previous_version: null };
  return { data: { keys: [SECRETS_API_VERSION], key_info: { [SECRETS_API_VERSION]: installed } } };
}

/**
 * The `vault operator` commands of one logical server: `members`, `step-down` (a no-op, as on a
 * server without HA), `unseal` (already unsealed), `raft …` (Vault's refusal without raft storage),
 * `seal`, `generate-root` and `rekey` refused (no seal); `init -status`, `key-status` and `rotate`
 * are in status.ts.
 */
export const operatorSystemRoutes: EngineRoute[] = [
  { pattern: 'ha-status', readOnly: true, read: haStatus },
  { pattern: 'version-history', readOnly: true, list: versionHistory },
  { pattern: 'step-down', sudo: true, readOnly: true, write: async () => undefined },
  {
    pattern: 'unseal',
    unauthenticated: true,
    readOnly: true,
    body: UnsealBody,
    write: async (req: SecretsRequest<z.infer<typeof UnsealBody>>) => {
      if (req.body.reset) throw badInput('vault is unsealed');
      if (!req.body.key) throw badInput("'key' must be specified in request body as JSON, or 'reset' set to true");
      return sealStatus();
    },
  },
  {
    pattern: 'storage/raft/*rest',
    readOnly: true,
    read: async () => {
      throw badInput('raft storage is not in use');
    },
    write: async () => {
      throw badInput('raft storage is not in use');
    },
    delete: async () => {
      throw badInput('raft storage is not in use');
    },
  },
  { pattern: 'seal', sudo: true, readOnly: true, write: noSeal },
  { pattern: 'generate-root/*rest', unauthenticated: true, readOnly: true, read: noSeal, write: noSeal, delete: noSeal },
  { pattern: 'rekey/*rest', unauthenticated: true, readOnly: true, read: noSeal, write: noSeal, delete: noSeal },
];
