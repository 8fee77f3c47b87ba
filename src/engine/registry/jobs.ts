import type { BackgroundJob } from '../background';

/** The registry service's periodic work, run by `hangar server` (see engine/background.ts). */
export const REGISTRY_JOBS: readonly BackgroundJob[] = [];
