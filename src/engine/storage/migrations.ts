import { Migration } from './types';

/**
 * Numbered schema changes, applied in order and never edited once released: a change to the
 * schema is a new entry at the end. Times are epoch milliseconds (BIGINT), booleans 0/1.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'settings and registry owners, tokens, boxes',
    sql: `
      CREATE TABLE settings (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
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
