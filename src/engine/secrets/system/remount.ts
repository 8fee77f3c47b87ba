import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { markLeasesOf } from './mounts';
import type { Db } from '../../storage';
import { normalizeMountPath } from '../core/mounts';
import { badInput, missing } from '../core/request';
import { EngineRoute, MountEntry, SecretsRequest, SecretsResponse } from '../core/types';

const REQUIRED = "both 'from' and 'to' path must be specified as a string";
// Missing is empty: Vault's one message covers both.
const RemountBody = z.object({ from: z.string({ message: REQUIRED }).default(''), to: z.string({ message: REQUIRED }).default('') });
type RemountBody = z.infer<typeof RemountBody>;

/** Secrets mounts that cannot be moved, nor moved into (Vault's protectedMounts); auth's `token/` likewise. */
const PROTECTED = ['audit/', 'auth/', 'sys/', 'cubbyhole/', 'identity/'];
const PROTECTED_AUTH = 'auth/token/';

/** How long a move's status stays readable (`sys/remount/status/:id`); Vault keeps it in memory until a restart. */
const STATUS_KEPT_MS = 24 * 3600 * 1000;

interface MigrationInfo {
  readonly source_mount: string;
  readonly target_mount: string;
  readonly status: 'in-progress' | 'success' | 'failure';
}

const statusKey = (id: string) => `remount/${id}`;

/** A path of the body normalized (`secret` → `secret/`), or Vault's message naming the field. */
function pathOf(field: 'from' | 'to', given: string): string {
  if (given === '') throw badInput(REQUIRED);
  if (given.trim() !== given) throw badInput(`'${field}' path cannot contain trailing whitespace`);
  try {
    return normalizeMountPath(given);
  } catch (err) {
    throw badInput(field === 'to' ? `invalid destination mount: ${(err as Error).message}` : `'from': ${(err as Error).message}`);
  }
}

/** Vault's refusals: protected mounts, auth methods only into `auth/`, never into a path in use. */
async function check(req: SecretsRequest, from: string, to: string): Promise<MountEntry> {
  if (from.startsWith('auth/')) {
    if (!to.startsWith('auth/')) throw badInput(`cannot remount auth mount to non-auth mount "${to}"`);
    if (from.startsWith(PROTECTED_AUTH)) throw badInput(`cannot remount "${from}"`);
    if (to.startsWith(PROTECTED_AUTH)) throw badInput(`cannot remount to destination "${to}"`);
  } else {
    if (PROTECTED.some((p) => from.startsWith(p))) throw badInput(`cannot remount "${from}"`);
    if (PROTECTED.some((p) => to.startsWith(p))) throw badInput(`cannot remount to destination ${to}`);
  }
  const mounts = await req.core.mounts.all(req.db);
  const entry = mounts.find((m) => m.path === from);
  if (!entry) throw badInput(`no matching mount at "${from}"`);
  const clash = mounts.find((m) => to.startsWith(m.path) || m.path.startsWith(to));
  if (clash) throw badInput(`path already in use at "${clash.path}"`);
  return entry;
}

/** Moves a mount's entry: its storage, accessor, tune and identity aliases go with it unchanged. */
async function move(req: SecretsRequest, db: Db, entry: MountEntry, to: string): Promise<void> {
  await req.core.mounts.delete(db, entry.path);
  await req.core.mounts.put(db, { ...entry, path: to });
}

/**
 * `sys/remount` (sudo): moves a secrets engine or an auth method, as Vault 1.13+ does. As Vault, its
 * leases are revoked first (for an auth method, the tokens it issued too), through their engines;
 * then the mount moves in one transaction. All of it is done when the answer comes, so the first
 * `sys/remount/status/:id` reads `success` (or `failure` if a revocation failed: the mount then
 * stays where it was, its leases marked for the background retries).
 */
async function remount(req: SecretsRequest<RemountBody>): Promise<SecretsResponse> {
  const from = pathOf('from', req.body.from);
  const to = pathOf('to', req.body.to);
  const entry = await check(req, from, to);
  const id = randomUUID();
  const info = (status: MigrationInfo['status']): MigrationInfo => ({ source_mount: from, target_mount: to, status });
  const keep = (store: SecretsRequest['store'], status: MigrationInfo['status']) => store.put(statusKey(id), info(status), req.now + STATUS_KEPT_MS);
  const leases = await markLeasesOf(req, entry);
  if (leases.length === 0) {
    await move(req, req.db, entry, to);
    await keep(req.store, 'success');
  } else {
    await keep(req.store, 'in-progress');
    req.afterCommit(async () => {
      const failures = await req.core.revokeLeases(leases);
      await req.engine.storage.tx(async (db) => {
        const store = req.core.store(db, req.mount);
        if (failures.length) return keep(store, 'failure');
        // Checked again: the table may have changed while the leases were revoked.
        const current = await req.core.mounts.get(db, from);
        const clash = (await req.core.mounts.all(db)).some((m) => to.startsWith(m.path) || m.path.startsWith(to));
        if (current?.uuid !== entry.uuid || clash) return keep(store, 'failure');
        await move(req, db, current, to);
        await keep(store, 'success');
      });
    });
  }
  req.engine.logger.info({ migration_id: id, from, to, leases: leases.length }, 'mount move');
  return {
    data: { migration_id: id },
    warnings: ["Mount move has been queued. Progress will be reported in Vault's server log, tagged with the returned migration_id"],
  };
}

async function readStatus(req: SecretsRequest): Promise<SecretsResponse> {
  const id = req.params.migration_id;
  const info = await req.store.get<MigrationInfo>(statusKey(id));
  if (!info) throw missing();
  return { data: { migration_id: id, migration_info: info } };
}

/** `sys/remount` and `sys/remount/status/:migration_id`. */
export const remountSystemRoutes: EngineRoute[] = [
  { pattern: 'remount', body: RemountBody, sudo: true, write: remount },
  { pattern: 'remount/status/:migration_id', readOnly: true, read: readStatus },
];
