import type { BackgroundJob } from '../background';
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
];
