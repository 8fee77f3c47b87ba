import type { Migration } from '../storage/types';

/** The registry's schema changes (versions 100-199); see storage/migrations.ts. */
export const REGISTRY_MIGRATIONS: readonly Migration[] = [
  {
    version: 100,
    name: 'registry owners, memberships, tokens, boxes',
    sql: `
      CREATE TABLE registry_owners (
        id TEXT PRIMARY KEY,
        username TEXT NOT NULL,
        username_lower TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        email TEXT,
        email_lower TEXT UNIQUE,
        phone TEXT,
        password_hash TEXT,
        profile_markdown TEXT NOT NULL DEFAULT '',
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      );
      CREATE TABLE registry_memberships (
        org_id TEXT NOT NULL REFERENCES registry_owners(id) ON DELETE CASCADE,
        user_id TEXT NOT NULL REFERENCES registry_owners(id) ON DELETE CASCADE,
        role TEXT NOT NULL,
        PRIMARY KEY (org_id, user_id)
      );
      CREATE TABLE registry_tokens (
        id TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        user_id TEXT NOT NULL REFERENCES registry_owners(id) ON DELETE CASCADE,
        description TEXT NOT NULL DEFAULT '',
        created_at BIGINT NOT NULL
      );
      CREATE TABLE registry_boxes (
        id TEXT PRIMARY KEY,
        owner_id TEXT NOT NULL REFERENCES registry_owners(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        name_lower TEXT NOT NULL,
        short_description TEXT NOT NULL DEFAULT '',
        description_markdown TEXT NOT NULL DEFAULT '',
        is_private INTEGER NOT NULL DEFAULT 1,
        downloads BIGINT NOT NULL DEFAULT 0,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        UNIQUE (owner_id, name_lower)
      );
    `,
  },
];
