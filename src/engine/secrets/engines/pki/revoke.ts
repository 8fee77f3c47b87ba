import { z } from 'zod';
import { CertRecord, readCa, rebuildCrl, RevokedRecord } from './store';
import { colonSerial, serialKey, storageSerial } from './x509';
import { duration, flexibleBoolean, rfc3339 } from '../../core/durations';
import { badInput } from '../../core/request';
import { MountStore } from '../../core/store';
import { EngineContext, EngineRoute, LeaseRecord, SecretsRequest, SecretsResponse } from '../../core/types';

const RevokeBody = z.object({ serial_number: z.string({ message: 'serial_number is required' }).max(200) });
const TidyBody = z.object({
  tidy_cert_store: flexibleBoolean.default(false),
  tidy_revoked_certs: flexibleBoolean.optional(),
  tidy_revocation_list: flexibleBoolean.optional(),
  safety_buffer: duration(1).default(72 * 3600),
});

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
  const ca = await readCa(store);
  if (ca && serialKey(ca.cert.serialNumber) === key) throw badInput('adding the CA to its own CRL is not allowed');
  await store.put(`revoked/${key}`, { ...record, revokedAt: now } satisfies RevokedRecord);
  await rebuildCrl(store, now);
  return now;
}

async function revoke(req: SecretsRequest<z.infer<typeof RevokeBody>>): Promise<SecretsResponse> {
  const at = await revokeSerial(req.store, req.body.serial_number, req.now);
  return { data: { revocation_time: Math.floor(at / 1000), revocation_time_rfc3339: rfc3339(at), state: 'revoked' } };
}

/**
 * tidy: removes stored certificates and revocations that expired more than `safety_buffer` ago
 * (the CRL is rebuilt when revocations went). Runs within the request, so it answers when done.
 */
async function tidy(req: SecretsRequest<z.infer<typeof TidyBody>>): Promise<SecretsResponse> {
  const b = req.body;
  const cutoff = req.now - b.safety_buffer * 1000;
  let removedCerts = 0;
  let removedRevoked = 0;
  if (b.tidy_cert_store) {
    for (const serial of await req.store.list('certs/')) {
      const rec = await req.store.get<CertRecord>(`certs/${serial}`);
      if (rec && rec.expiration < cutoff) removedCerts += Number(await req.store.delete(`certs/${serial}`));
    }
  }
  if (b.tidy_revoked_certs ?? b.tidy_revocation_list ?? false) {
    for (const serial of await req.store.list('revoked/')) {
      const rec = await req.store.get<RevokedRecord>(`revoked/${serial}`);
      if (rec && rec.expiration < cutoff) {
        removedRevoked += Number(await req.store.delete(`revoked/${serial}`));
        await req.store.delete(`certs/${serial}`);
      }
    }
    if (removedRevoked) await rebuildCrl(req.store, req.now);
  }
  return {
    data: { cert_store_deleted_count: removedCerts, revoked_cert_deleted_count: removedRevoked, state: 'Finished' },
    warnings: ['Tidy operation finished (it runs within the request here).'],
  };
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
];
