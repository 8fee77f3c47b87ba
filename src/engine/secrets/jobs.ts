import type { BackgroundJob } from '../background';

/** The secrets service's periodic work, run by `hangar server` (see engine/background.ts). */
export const SECRETS_JOBS: readonly BackgroundJob[] = [];
