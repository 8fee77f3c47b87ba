import { z } from 'zod';
import { authorityKeyId, readIssuers, writeIssuers } from './issuers';
import { CertRecord, rebuildCrl, RevokedRecord } from './store';
import { colonSerial, serialKey, storageSerial, x509 } from './x509';
import type { Engine } from '../../../engine';
import type { SecretsCore } from '../../core/core';
import { duration, flexibleBoolean, rfc3339 } from '../../core/durations';
import { badInput } from '../../core/request';
import { MountStore } from '../../core/store';
import { EngineContext, EngineRoute, LeaseRecord, SecretsRequest, SecretsResponse } from '../../core/types';

const RevokeBody = z.object({ serial_number: z.string({ message: 'serial_number is required' }).max(200) });

/** The tidy switches and buffers of the public service (tidy and config/auto-tidy take the same). */
const TidyFields = {
  tidy_cert_store: flexibleBoolean.optional(),
  tidy_revoked_certs: flexibleBoolean.optional(),
  tidy_revocation_list: flexibleBoolean.optional(),
  tidy_revoked_cert_issuer_associations: flexibleBoolean.optional(),
  tidy_expired_issuers: flexibleBoolean.optional(),
  tidy_move_legacy_ca_bundle: flexibleBoolean.optional(),
  tidy_acme: flexibleBoolean.optional(),
  tidy_revocation_queue: flexibleBoolean.optional(),
  tidy_cross_cluster_revoked_certs: flexibleBoolean.optional(),
  tidy_cert_metadata: flexibleBoolean.optional(),
  tidy_cmpv2_nonce_store: flexibleBoolean.optional(),
  safety_buffer: duration(1).optional(),
  issuer_safety_buffer: duration(1).optional(),
  acme_account_safety_buffer: duration(1).optional(),
  revocation_queue_safety_buffer: duration(1).optional(),
  pause_duration: duration(0).optional(),
};
const TidyBody = z.object(TidyFields);
const AutoTidyBody = z.object({
  ...TidyFields,
  enabled: flexibleBoolean.optional(),
  interval_duration: duration(0).optional(),
  min_startup_backoff_duration: duration(1).optional(),
  max_startup_backoff_duration: duration(1).optional(),
  maintain_stored_certificate_counts: flexibleBoolean.optional(),
  publish_stored_certificate_count_metrics: flexibleBoolean.optional(),
});

/** A tidy's settings (config/auto-tidy's too), durations in seconds. */
export interface TidyConfig {
  readonly enabled: boolean;
  readonly interval_duration: number;
  readonly min_startup_backoff_duration: number;
  readonly max_startup_backoff_duration: number;
  readonly tidy_cert_store: boolean;
  readonly tidy_revoked_certs: boolean;
  readonly tidy_revoked_cert_issuer_associations: boolean;
  readonly tidy_expired_issuers: boolean;
  readonly tidy_move_legacy_ca_bundle: boolean;
  readonly tidy_acme: boolean;
  readonly safety_buffer: number;
  readonly issuer_safety_buffer: number;
  readonly acme_account_safety_buffer: number;
  readonly pause_duration: number;
  readonly publish_stored_certificate_count_metrics: boolean;
  readonly maintain_stored_certificate_counts: boolean;
  readonly tidy_revocation_queue: boolean;
  readonly revocation_queue_safety_buffer: number;
  readonly tidy_cross_cluster_revoked_certs: boolean;
  readonly tidy_cert_metadata: boolean;
  readonly tidy_cmpv2_nonce_store: boolean;
}

/** The public service's defaults (`defaultTidyConfig`). */
export const DEFAULT_TIDY: TidyConfig = {
  enabled: false,
  interval_duration: 12 * 3600,
  min_startup_backoff_duration: 300,
  max_startup_backoff_duration: 900,
  tidy_cert_store: false,
  tidy_revoked_certs: false,
  tidy_revoked_cert_issuer_associations: false,
  tidy_expired_issuers: false,
  tidy_move_legacy_ca_bundle: false,
  tidy_acme: false,
  safety_buffer: 72 * 3600,
  issuer_safety_buffer: 365 * 86400,
  acme_account_safety_buffer: 30 * 86400,
  pause_duration: 0,
  publish_stored_certificate_count_metrics: false,
  maintain_stored_certificate_counts: false,
  tidy_revocation_queue: false,
  revocation_queue_safety_buffer: 48 * 3600,
  tidy_cross_cluster_revoked_certs: false,
  tidy_cert_metadata: false,
  tidy_cmpv2_nonce_store: false,
};

/** What the last tidy did (`tidy-status`), kept in the mount's store. */
interface TidyStatus {
  readonly config: TidyConfig;
  readonly state: 'Finished' | 'Error';
  readonly error?: string;
  readonly started: number;
  readonly finished: number;
  readonly certStoreDeleted: number;
  readonly revokedDeleted: number;
  readonly issuersDeleted: number;
}

/** The auto-tidy settings with the time of the last automatic run (epoch ms; 0 never). */
interface AutoTidyStored extends TidyConfig {
  readonly lastRun?: number;
}

/** `pause_duration` as the public service shows it (Go's duration text: `0s`, `1m30s`). */
function goDuration(seconds: number): string {
  if (!seconds) return '0s';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const sec = seconds % 60;
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${sec}s`;
}

const configData = ({ pause_duration, ...c }: TidyConfig) => ({ ...c, pause_duration: goDuration(pause_duration) });

/**
 * Revokes a stored certificate and rebuilds the CRL in the same transaction. Revoking twice
 * answers the first revocation time. Certificates of `no_store` roles are unknown here.
 */
export async function revokeSerial(store: MountStore, given: string, now: number): Promise<number> {
  const key = storageSerial(given);
  if (!key) throw badInput(`serial_number: "${given}" is not a serial number (hex bytes separated by colons or hyphens)`);
  const already = await store.get<RevokedRecord>(`revoked/${key}`);
  if (already) return already.revokedAt;
  const record = await store.get<CertRecord>(`certs/${key}`);
  if (!record) throw badInput(`certificate with serial ${colonSerial(key.replace(/-/g, ''))} not found`);
  for (const ca of (await readIssuers(store)).byId.values()) {
    if (serialKey(ca.cert.serialNumber) === key) throw badInput('adding the CA to its own CRL is not allowed');
  }
  const authority = authorityKeyId(new x509.X509Certificate(record.certificate));
  await store.put(`revoked/${key}`, { ...record, revokedAt: now, authorityKeyId: authority } satisfies RevokedRecord);
  await rebuildCrl(store, now);
  return now;
}

async function revoke(req: SecretsRequest<z.infer<typeof RevokeBody>>): Promise<SecretsResponse> {
  const at = await revokeSerial(req.store, req.body.serial_number, req.now);
  return { data: { revocation_time: Math.floor(at / 1000), revocation_time_rfc3339: rfc3339(at), state: 'revoked' } };
}

/**
 * One tidy: stored certificates and revocations expired more than `safety_buffer` ago go (the CRLs
 * are rebuilt when revocations went), and with `tidy_expired_issuers` issuers expired more than
 * `issuer_safety_buffer` ago (never the default; their keys stay). Runs in the caller's
 * transaction; the result is kept for tidy-status.
 */
export async function runTidy(store: MountStore, now: number, config: TidyConfig): Promise<TidyStatus> {
  const cutoff = now - config.safety_buffer * 1000;
  let certStoreDeleted = 0;
  let revokedDeleted = 0;
  let issuersDeleted = 0;
  if (config.tidy_cert_store) {
    for (const serial of await store.list('certs/')) {
      const rec = await store.get<CertRecord>(`certs/${serial}`);
      if (rec && rec.expiration < cutoff) certStoreDeleted += Number(await store.delete(`certs/${serial}`));
    }
  }
  if (config.tidy_revoked_certs) {
    for (const serial of await store.list('revoked/')) {
      const rec = await store.get<RevokedRecord>(`revoked/${serial}`);
      if (rec && rec.expiration < cutoff) {
        revokedDeleted += Number(await store.delete(`revoked/${serial}`));
        await store.delete(`certs/${serial}`);
      }
    }
  }
  if (config.tidy_expired_issuers) {
    const issuers = await readIssuers(store);
    const expired = [...issuers.byId.values()].filter((ca) => ca.issuer.id !== issuers.stored.defaultIssuer
      && ca.cert.notAfter.getTime() + config.issuer_safety_buffer * 1000 < now);
    if (expired.length) {
      const gone = new Set(expired.map((ca) => ca.issuer.id));
      await writeIssuers(store, { ...issuers.stored, issuers: issuers.stored.issuers.filter((i) => !gone.has(i.id)) });
      for (const id of gone) await store.delete(`crls/${id}`);
      issuersDeleted = gone.size;
    }
  }
  if (revokedDeleted || issuersDeleted) await rebuildCrl(store, now);
  const status: TidyStatus = { config, state: 'Finished', started: now, finished: now, certStoreDeleted, revokedDeleted, issuersDeleted };
  await store.put('tidy-status', status);
  return status;
}

/** The settings of a tidy request: the public service's defaults for what it leaves out. */
function tidyConfigOf(b: z.infer<typeof TidyBody>, base: TidyConfig = DEFAULT_TIDY): TidyConfig {
  const given = Object.fromEntries(Object.entries(b).filter(([k, v]) => v !== undefined && k !== 'tidy_revocation_list'));
  const revoked = b.tidy_revoked_certs ?? b.tidy_revocation_list;
  return { ...base, ...given, ...(revoked === undefined ? {} : { tidy_revoked_certs: revoked }) } as TidyConfig;
}

/** tidy: runs within the request (the public service answers 202 and works in the background), so it answers when done. */
async function tidy(req: SecretsRequest<z.infer<typeof TidyBody>>): Promise<SecretsResponse> {
  const config = tidyConfigOf(req.body);
  const status = await runTidy(req.store, req.now, config);
  const any = config.tidy_cert_store || config.tidy_revoked_certs || config.tidy_expired_issuers;
  return {
    data: { cert_store_deleted_count: status.certStoreDeleted, revoked_cert_deleted_count: status.revokedDeleted, state: 'Finished' },
    warnings: [any
      ? 'Tidy operation finished (it runs within the request here).'
      : 'No targets to tidy; specify tidy_cert_store=true or tidy_revoked_certs=true to start a tidy operation.'],
  };
}

const goTime = (ms: number) => new Date(ms).toISOString();

/** tidy-status: every field of the public service; `Inactive` (fields null) before the first tidy. */
async function tidyStatus(req: SecretsRequest): Promise<SecretsResponse> {
  const status = await req.store.get<TidyStatus>('tidy-status');
  const auto = await req.store.get<AutoTidyStored>('config/auto-tidy');
  const fields = ['safety_buffer', 'issuer_safety_buffer', 'tidy_cert_store', 'tidy_revoked_certs', 'tidy_revoked_cert_issuer_associations', 'tidy_expired_issuers',
    'tidy_move_legacy_ca_bundle', 'tidy_revocation_queue', 'tidy_cross_cluster_revoked_certs', 'tidy_acme', 'tidy_cert_metadata', 'tidy_cmpv2_nonce_store',
    'pause_duration', 'revocation_queue_safety_buffer', 'acme_account_safety_buffer'] as const;
  const counts = ['cert_store_deleted_count', 'revoked_cert_deleted_count', 'missing_issuer_cert_count', 'revocation_queue_deleted_count', 'cross_revoked_cert_deleted_count',
    'total_acme_account_count', 'acme_account_deleted_count', 'acme_account_revoked_count', 'acme_orders_deleted_count', 'cert_metadata_deleted_count', 'cmpv2_nonce_deleted_count'];
  const data: Record<string, unknown> = {
    ...Object.fromEntries([...fields, ...counts].map((f) => [f, null])),
    state: 'Inactive',
    error: null,
    time_started: null,
    time_finished: null,
    message: null,
    current_cert_store_count: null,
    current_revoked_cert_count: null,
    internal_backend_uuid: req.mount.uuid,
    last_auto_tidy_finished: auto?.lastRun ? goTime(auto.lastRun) : '0001-01-01T00:00:00Z',
  };
  if (!status) return { data };
  const shown = configData(status.config);
  for (const f of fields) data[f] = shown[f];
  Object.assign(data, {
    state: status.state,
    error: status.error ?? null,
    time_started: goTime(status.started),
    time_finished: goTime(status.finished),
    cert_store_deleted_count: status.certStoreDeleted,
    revoked_cert_deleted_count: status.revokedDeleted,
    missing_issuer_cert_count: 0,
    revocation_queue_deleted_count: 0,
    cross_revoked_cert_deleted_count: 0,
    total_acme_account_count: 0,
    acme_account_deleted_count: 0,
    acme_account_revoked_count: 0,
    acme_orders_deleted_count: 0,
    cert_metadata_deleted_count: 0,
    cmpv2_nonce_deleted_count: 0,
  });
  return { data };
}

async function readAutoTidy(store: MountStore): Promise<AutoTidyStored> {
  return { ...DEFAULT_TIDY, ...(await store.get<AutoTidyStored>('config/auto-tidy')) };
}

/** config/auto-tidy write: fields given change, the rest stay; enabling starts the interval now. */
async function writeAutoTidy(req: SecretsRequest<z.infer<typeof AutoTidyBody>>): Promise<SecretsResponse> {
  const current = await readAutoTidy(req.store);
  const { lastRun, ...base } = current;
  const next = tidyConfigOf(req.body, { ...base, ...Object.fromEntries(Object.entries(req.body).filter(([, v]) => v !== undefined)) } as TidyConfig);
  if (next.min_startup_backoff_duration > next.max_startup_backoff_duration) {
    throw badInput(`max_startup_backoff_duration ${next.max_startup_backoff_duration}s must be greater or equal to min_startup_backoff_duration ${next.min_startup_backoff_duration}s`);
  }
  if (next.tidy_cert_metadata) throw badInput('tidy_cert_metadata: certificate metadata is only supported on Vault Enterprise');
  const operations = ['tidy_cert_store', 'tidy_revoked_certs', 'tidy_revoked_cert_issuer_associations', 'tidy_expired_issuers', 'tidy_move_legacy_ca_bundle', 'tidy_acme',
    'tidy_revocation_queue', 'tidy_cross_cluster_revoked_certs', 'tidy_cmpv2_nonce_store'] as const;
  if (next.enabled && !operations.some((o) => next[o])) {
    throw badInput('Auto-tidy enabled but no tidy operations were requested. Enable at least one tidy operation to be run (tidy_cert_store / tidy_revoked_certs / tidy_revoked_cert_issuer_associations / tidy_expired_issuers / tidy_move_legacy_ca_bundle / tidy_revocation_queue / tidy_cross_cluster_revoked_certs / tidy_acme).');
  }
  if (next.publish_stored_certificate_count_metrics && !next.maintain_stored_certificate_counts) {
    throw badInput('Can not publish a running storage metrics count to metrics without first maintaining that count.  Enable `maintain_stored_certificate_counts` to enable `publish_stored_certificate_count_metrics`.');
  }
  const enabling = next.enabled && !current.enabled;
  await req.store.put('config/auto-tidy', { ...next, lastRun: enabling ? req.now : lastRun } satisfies AutoTidyStored);
  return { data: configData(next) };
}

/**
 * The background job's round (`secrets.pki.tidy`): each PKI mount whose auto-tidy is enabled and
 * whose interval has passed since its last run tidies with its settings, in one transaction per
 * mount; the run time is stored, so a restart keeps the schedule.
 */
export async function runDueAutoTidy(engine: Engine, core: SecretsCore): Promise<void> {
  const now = engine.clock.now();
  const mounts = await engine.storage.tx((db) => core.mounts.all(db), { readOnly: true });
  for (const mount of mounts) {
    if (mount.kind !== 'secret' || mount.type !== 'pki') continue;
    await engine.storage.tx(async (db) => {
      const store = core.store(db, mount);
      const auto = await store.get<AutoTidyStored>('config/auto-tidy');
      if (!auto?.enabled || now - (auto.lastRun ?? 0) < auto.interval_duration * 1000) return;
      const { lastRun: _last, ...config } = { ...DEFAULT_TIDY, ...auto };
      await runTidy(store, now, config);
      await store.put('config/auto-tidy', { ...auto, lastRun: now } satisfies AutoTidyStored);
    });
  }
}

/** The engine's lease hook: a certificate issued with `generate_lease` is revoked with its lease. */
export async function revokeLease(lease: LeaseRecord, ctx: EngineContext): Promise<void> {
  const { serial } = lease.internal as { serial: string };
  await ctx.tx(async (store) => {
    if (await store.exists(`certs/${storageSerial(serial)}`)) await revokeSerial(store, serial, ctx.now);
  });
}

export const revokeRoutes: EngineRoute[] = [
  { pattern: 'revoke', body: RevokeBody, write: revoke },
  { pattern: 'tidy', body: TidyBody, write: tidy },
  { pattern: 'tidy-status', readOnly: true, read: tidyStatus },
  // A tidy never outlives its request here, so there is never one to cancel.
  { pattern: 'tidy-cancel', readOnly: true, write: async () => ({ warnings: ['Tidy operation cannot be cancelled as none is currently running.'] }) },
  {
    pattern: 'config/auto-tidy',
    body: AutoTidyBody,
    readOnly: ['read'],
    read: async (req) => {
      const { lastRun: _last, ...config } = await readAutoTidy(req.store);
      return { data: configData(config) };
    },
    write: writeAutoTidy,
  },
];
