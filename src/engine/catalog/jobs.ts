import type { BackgroundJob } from '../background';

/** The catalog service's periodic work, run by `hangar server` (see engine/background.ts). */
export const CATALOG_JOBS: readonly BackgroundJob[] = [];
