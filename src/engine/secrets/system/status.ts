import { z } from 'zod';
import { VERSION } from '../../version';
import { commaList, rfc3339 } from '../core/durations';
import { badInput } from '../core/request';
import { EngineRoute, SecretsRequest, SecretsResponse, TokenEntry } from '../core/types';
import { SECRETS_API_VERSION } from '../core/version';

export const json = (body: unknown, status = 200): SecretsResponse => ({
  status,
  raw: { contentType: 'application/json; charset=utf-8', body: JSON.stringify(body) },
});

function health(req: SecretsRequest): SecretsResponse {
  const body = {
    initialized: true,
    sealed: false,
    standby: false,
    performance_standby: false,
    replication_performance_mode: 'disabled',
    replication_dr_mode: 'disabled',
    server_time_utc: Math.floor(req.now / 1000),
    version: SECRETS_API_VERSION,
    hangar_version: VERSION,
    enterprise: false,
    cluster_name: 'hangar',
    cluster_id: 'hangar',
    echo_duration_ms: 0,
    clock_skew_ms: 0,
    replication_primary_canary_age_ms: 0,
  };
  if (req.method === 'HEAD') return { status: 200, raw: { contentType: 'application/json; charset=utf-8', body: '' } };
  return json(body);
}

export function sealStatus(): SecretsResponse {
  return json({
    type: 'shamir',
    initialized: true,
    sealed: false,
    t: 1,
    n: 1,
    progress: 0,
    nonce: '',
    version: SECRETS_API_VERSION,
    hangar_version: VERSION,
    build_date: '',
    migration: false,
    cluster_name: 'hangar',
    cluster_id: 'hangar',
    recovery_seal: false,
    storage_type: 'hangar',
  });
}

const CapsBody = z.object({
  paths: commaList.optional(),
  path: commaList.optional(),
  token: z.string().optional(),
  accessor: z.string().optional(),
});
type CapsBody = z.infer<typeof CapsBody>;

/** Capabilities of a token on paths: `{capabilities, <path>: [...]}` as Vault answers. */
async function capabilities(req: SecretsRequest<CapsBody>, entry: TokenEntry, root: boolean): Promise<SecretsResponse> {
  const paths = [...(req.body.paths ?? []), ...(req.body.path ?? [])];
  if (paths.length === 0) throw badInput('paths is required: a list of paths');
  const acl = await req.core.acl(req.db, entry, root);
  const data: Record<string, unknown> = {};
  for (const p of paths) data[p] = acl.capabilities(p.replace(/^\/+/, ''));
  if (paths.length === 1) data.capabilities = data[paths[0]];
  return { data, topLevel: true };
}

async function tokenOf(req: SecretsRequest<CapsBody>): Promise<{ entry: TokenEntry; root: boolean }> {
  if (req.body.accessor !== undefined) {
    const entry = await req.core.tokens.byAccessor(req.db, req.body.accessor, req.now);
    if (!entry) throw badInput('invalid accessor');
    return { entry, root: entry.policies.includes('root') };
  }
  const token = req.body.token;
  if (!token) throw badInput('token is required');
  const found = await req.core.tokenEntry(req.db, token, req.now);
  if (!found) throw badInput('invalid token');
  return found;
}

/** Health, seal status, capabilities and the keyring (`sys/rotate`, `sys/key-status`). */
export const statusSystemRoutes: EngineRoute[] = [
  { pattern: 'health', unauthenticated: true, readOnly: true, read: async (req) => health(req) },
  { pattern: 'seal-status', unauthenticated: true, readOnly: true, read: async () => sealStatus() },
  {
    pattern: 'init',
    unauthenticated: true,
    readOnly: true,
    read: async () => json({ initialized: true }),
    // `vault operator init`: Vault's answer on an initialized server (Hangar initializes itself).
    write: async () => {
      throw badInput('Vault is already initialized');
    },
  },
  // One server, no HA cluster: Vault's answer of a server without HA storage.
  {
    pattern: 'leader',
    unauthenticated: true,
    readOnly: true,
    read: async () =>
      json({
        ha_enabled: false,
        is_self: false,
        active_time: '0001-01-01T00:00:00Z',
        leader_address: '',
        leader_cluster_address: '',
        performance_standby: false,
        performance_standby_last_remote_wal: 0,
      }),
  },
  {
    pattern: 'capabilities-self',
    body: CapsBody,
    readOnly: true,
    write: (req) => capabilities(req, req.caller!.entry, req.caller!.root),
  },
  {
    pattern: 'capabilities',
    body: CapsBody,
    readOnly: true,
    write: async (req) => {
      const { entry, root } = await tokenOf(req);
      return capabilities(req, entry, root);
    },
  },
  {
    pattern: 'capabilities-accessor',
    body: CapsBody,
    readOnly: true,
    write: async (req) => {
      if (req.body.accessor === undefined) throw badInput('accessor is required');
      const { entry, root } = await tokenOf(req);
      return capabilities(req, entry, root);
    },
  },
  {
    pattern: 'rotate',
    sudo: true,
    write: async (req) => {
      await req.core.barrier.rotate(req.db, req.now);
      return undefined;
    },
  },
  {
    pattern: 'key-status',
    readOnly: true,
    read: async (req) => {
      const status = await req.core.barrier.status(req.db);
      // Hangar does not count encryptions per term: 0, the count of a fresh term.
      return { data: { term: status.term, install_time: rfc3339(status.installTime), encryptions: 0 }, topLevel: true };
    },
  },
];
