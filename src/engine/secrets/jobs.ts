import type { BackgroundJob } from '../background';
import { rotateDueStaticRoles } from './engines/database/static-roles';
import { rotateDueStaticAccounts } from './engines/ldap/static-roles';
import { runDueAutoTidy } from './engines/pki/revoke';
import { rotateDueTokenizationKeys } from './engines/transform/tokenization-keys';
import { rotateDueKeys } from './engines/transit/rotation';
import { secretsCore } from './service';

/** The secrets service's periodic work, run by `hangar server` (see engine/background.ts). */
export const SECRETS_JOBS: readonly BackgroundJob[] = [
  {
    // Expired tokens and leases are revoked through the engines that issued them; revocations
    // that failed (or that a stopped server left marked) are retried; stale OIDC states go.
    name: 'secrets.expire',
    intervalMs: 5_000,
    run: async (engine) => (await secretsCore(engine)).expire(),
  },
  {
    // Static database roles whose rotation_period elapsed get a new password (each under a lock,
    // so a rotate-role call on another server never races it); due times are stored, so a
    // restart resumes the schedule.
    name: 'secrets.database.rotate',
    intervalMs: 5_000,
    run: async (engine) => rotateDueStaticRoles(engine, await secretsCore(engine)),
  },
  {
    // Static roles of the ldap engine whose rotation_period elapsed get a new password (two-phase,
    // see engines/directory/rotation.ts); due times are stored, so a restart resumes the schedule.
    name: 'secrets.ldap.rotate',
    intervalMs: 5_000,
    run: async (engine) => rotateDueStaticAccounts(engine, await secretsCore(engine)),
  },
  {
    // PKI mounts with config/auto-tidy enabled tidy once their interval_duration has passed.
    name: 'secrets.pki.tidy',
    intervalMs: 60_000,
    run: async (engine) => runDueAutoTidy(engine, await secretsCore(engine)),
  },
  {
    // Transit keys with an auto_rotate_period get a new version once it has passed.
    name: 'secrets.transit.rotate',
    intervalMs: 60_000,
    run: async (engine) => rotateDueKeys(engine, await secretsCore(engine)),
  },
  {
    // Transform's tokenization keys with an auto_rotate_period get a new version once it has passed.
    name: 'secrets.transform.rotate',
    intervalMs: 60_000,
    run: async (engine) => rotateDueTokenizationKeys(engine, await secretsCore(engine)),
  },
];
