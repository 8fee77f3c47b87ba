import type { Migration } from '../storage/types';

/** The secrets service's schema changes (versions 200-299); see storage/migrations.ts. */
export const SECRETS_MIGRATIONS: readonly Migration[] = [];
