import type { Migration } from '../storage/types';

/** The catalog service's schema changes (versions 300-399); see storage/migrations.ts. */
export const CATALOG_MIGRATIONS: readonly Migration[] = [];
