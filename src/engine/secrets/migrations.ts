import type { Migration } from '../storage/types';

/**
 * The secrets service's schema changes (versions 200-299); see storage/migrations.ts.
 * Every `sealed` column holds AES-256-GCM ciphertext under the barrier (core/barrier.ts); the
 * plaintext columns are only what queries need: hashes, identifiers, paths and times.
 */
const CORE_SCHEMA = `
      CREATE TABLE secrets_keyring (
        term INTEGER PRIMARY KEY,
        wrapped TEXT NOT NULL,
        created_at BIGINT NOT NULL
      );
      CREATE TABLE secrets_entries (
        path TEXT PRIMARY KEY,
        expire_at BIGINT,
        sealed TEXT NOT NULL
      );
      CREATE INDEX secrets_entries_expiry ON secrets_entries (expire_at);
      CREATE TABLE secrets_mounts (
        path TEXT PRIMARY KEY,
        sealed TEXT NOT NULL
      );
      CREATE TABLE secrets_policies (
        name TEXT PRIMARY KEY,
        sealed TEXT NOT NULL
      );
      CREATE TABLE secrets_tokens (
        id_hash TEXT PRIMARY KEY,
        accessor_hash TEXT NOT NULL UNIQUE,
        parent_hash TEXT,
        expire_at BIGINT,
        sealed TEXT NOT NULL
      );
      CREATE INDEX secrets_tokens_parent ON secrets_tokens (parent_hash);
      CREATE INDEX secrets_tokens_expiry ON secrets_tokens (expire_at);
      CREATE TABLE secrets_leases (
        id TEXT PRIMARY KEY,
        token_hash TEXT,
        expire_at BIGINT NOT NULL,
        revoking INTEGER NOT NULL DEFAULT 0,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at BIGINT NOT NULL DEFAULT 0,
        sealed TEXT NOT NULL
      );
      CREATE INDEX secrets_leases_token ON secrets_leases (token_hash);
      CREATE INDEX secrets_leases_expiry ON secrets_leases (expire_at);
      CREATE INDEX secrets_leases_revoking ON secrets_leases (revoking, next_attempt_at);
    `;

export const SECRETS_MIGRATIONS: readonly Migration[] = [
  {
    version: 200,
    name: 'secrets core: keyring, entries, mounts, policies, tokens, leases',
    sql: CORE_SCHEMA,
    // Prefix scans (list, revoke-prefix) are range queries: byte order, whatever the database's locale.
    postgres: CORE_SCHEMA.replace(/(path|id) TEXT PRIMARY KEY/g, '$1 TEXT COLLATE "C" PRIMARY KEY'),
  },
  {
    version: 201,
    name: 'secrets core: change stamps of the configuration every request reads (core/stamp.ts)',
    sql: 'CREATE TABLE secrets_stamps (name TEXT PRIMARY KEY, value TEXT NOT NULL)',
  },
];
