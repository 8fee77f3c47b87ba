import type { BackgroundJob } from '../background';
import { collectGarbage, sweepPartialUploads } from './uploads';

/** The registry service's periodic work, run by `hangar server` (see engine/background.ts). */
export const REGISTRY_JOBS: readonly BackgroundJob[] = [
  // Expired upload URLs, the files of deleted or replaced providers, stale two-factor records.
  { name: 'registry:garbage', intervalMs: 60_000, run: collectGarbage },
  // Partial files of interrupted uploads.
  { name: 'registry:partial-uploads', intervalMs: 60_000, run: async (engine) => void (await sweepPartialUploads(engine)) },
];
