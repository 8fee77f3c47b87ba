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
  {
    version: 101,
    name: 'registry versions, providers, uploads, two-factor codes, owner flags, search terms',
    sql: `
      ALTER TABLE registry_owners ADD COLUMN two_factor_method TEXT;
      ALTER TABLE registry_owners ADD COLUMN delinquent INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE registry_boxes ADD COLUMN current_version_id TEXT;
      CREATE INDEX registry_boxes_by_downloads ON registry_boxes (downloads, id);
      CREATE INDEX registry_boxes_by_created ON registry_boxes (created_at, id);
      CREATE INDEX registry_boxes_by_updated ON registry_boxes (updated_at, id);
      CREATE TABLE registry_versions (
        id TEXT PRIMARY KEY,
        box_id TEXT NOT NULL REFERENCES registry_boxes(id) ON DELETE CASCADE,
        version TEXT NOT NULL,
        sort_key TEXT NOT NULL,
        description_markdown TEXT NOT NULL DEFAULT '',
        status TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        UNIQUE (box_id, sort_key)
      );
      CREATE TABLE registry_providers (
        id TEXT PRIMARY KEY,
        version_id TEXT NOT NULL REFERENCES registry_versions(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        name_lower TEXT NOT NULL,
        original_url TEXT,
        checksum TEXT,
        checksum_type TEXT,
        blob_id TEXT,
        blob_size BIGINT,
        blob_digest_type TEXT,
        blob_digest TEXT,
        downloads BIGINT NOT NULL DEFAULT 0,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        UNIQUE (version_id, name_lower)
      );
      CREATE INDEX registry_providers_by_name ON registry_providers (name_lower, version_id);
      CREATE TABLE registry_uploads (
        id TEXT PRIMARY KEY,
        provider_id TEXT NOT NULL REFERENCES registry_providers(id) ON DELETE CASCADE,
        token_hash TEXT NOT NULL UNIQUE,
        direct INTEGER NOT NULL,
        blob_id TEXT,
        blob_size BIGINT,
        blob_digest_type TEXT,
        blob_digest TEXT,
        expires_at BIGINT NOT NULL,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX registry_uploads_by_provider ON registry_uploads (provider_id);
      CREATE INDEX registry_uploads_by_expiry ON registry_uploads (expires_at);
      CREATE TABLE registry_blob_garbage (
        blob_id TEXT PRIMARY KEY,
        created_at BIGINT NOT NULL
      );
      CREATE TABLE registry_two_factor_codes (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES registry_owners(id) ON DELETE CASCADE,
        code_hash TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        expires_at BIGINT NOT NULL,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX registry_two_factor_codes_by_user ON registry_two_factor_codes (user_id, created_at);
      CREATE TABLE registry_two_factor_codes_log (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES registry_owners(id) ON DELETE CASCADE,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX registry_two_factor_codes_log_by_user ON registry_two_factor_codes_log (user_id, created_at);
    `,
  },
  {
    version: 102,
    name: 'registry search terms (binary-ordered, for prefix ranges)',
    sql: `
      CREATE TABLE registry_box_terms (
        term TEXT NOT NULL,
        box_id TEXT NOT NULL REFERENCES registry_boxes(id) ON DELETE CASCADE,
        PRIMARY KEY (term, box_id)
      );
      CREATE INDEX registry_box_terms_by_box ON registry_box_terms (box_id);
    `,
    postgres: `
      CREATE TABLE registry_box_terms (
        term TEXT COLLATE "C" NOT NULL,
        box_id TEXT NOT NULL REFERENCES registry_boxes(id) ON DELETE CASCADE,
        PRIMARY KEY (term, box_id)
      );
      CREATE INDEX registry_box_terms_by_box ON registry_box_terms (box_id);
    `,
  },
  {
    version: 103,
    name: 'registry search terms by box and term (probing a box for a word prefix without a table lookup)',
    sql: `
      CREATE INDEX registry_box_terms_by_box_term ON registry_box_terms (box_id, term);
      DROP INDEX registry_box_terms_by_box;
    `,
  },
  {
    // One provider name per version becomes one row per architecture, exactly one of them the
    // default; existing providers become `unknown` and default (as the public service migrated them).
    version: 104,
    name: 'registry provider architectures',
    sql: `
      ALTER TABLE registry_providers DROP CONSTRAINT registry_providers_version_id_name_lower_key;
      ALTER TABLE registry_providers ADD COLUMN architecture TEXT NOT NULL DEFAULT 'unknown';
      ALTER TABLE registry_providers ADD COLUMN default_architecture INTEGER NOT NULL DEFAULT 1;
      CREATE UNIQUE INDEX registry_providers_by_architecture ON registry_providers (version_id, name_lower, architecture);
      CREATE UNIQUE INDEX registry_providers_one_default ON registry_providers (version_id, name_lower) WHERE default_architecture = 1;
    `,
    // SQLite cannot drop a table constraint: the table is rebuilt, and the uploads that reference it
    // with it (dropping the old table first would cascade into them).
    sqlite: `
      CREATE TABLE registry_providers_new (
        id TEXT PRIMARY KEY,
        version_id TEXT NOT NULL REFERENCES registry_versions(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        name_lower TEXT NOT NULL,
        architecture TEXT NOT NULL DEFAULT 'unknown',
        default_architecture INTEGER NOT NULL DEFAULT 1,
        original_url TEXT,
        checksum TEXT,
        checksum_type TEXT,
        blob_id TEXT,
        blob_size BIGINT,
        blob_digest_type TEXT,
        blob_digest TEXT,
        downloads BIGINT NOT NULL DEFAULT 0,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      );
      INSERT INTO registry_providers_new (id, version_id, name, name_lower, original_url, checksum, checksum_type, blob_id,
        blob_size, blob_digest_type, blob_digest, downloads, created_at, updated_at)
      SELECT id, version_id, name, name_lower, original_url, checksum, checksum_type, blob_id, blob_size, blob_digest_type,
        blob_digest, downloads, created_at, updated_at FROM registry_providers;
      CREATE TABLE registry_uploads_new (
        id TEXT PRIMARY KEY,
        provider_id TEXT NOT NULL REFERENCES registry_providers_new(id) ON DELETE CASCADE,
        token_hash TEXT NOT NULL UNIQUE,
        direct INTEGER NOT NULL,
        blob_id TEXT,
        blob_size BIGINT,
        blob_digest_type TEXT,
        blob_digest TEXT,
        expires_at BIGINT NOT NULL,
        created_at BIGINT NOT NULL
      );
      INSERT INTO registry_uploads_new SELECT id, provider_id, token_hash, direct, blob_id, blob_size, blob_digest_type,
        blob_digest, expires_at, created_at FROM registry_uploads;
      DROP TABLE registry_uploads;
      DROP TABLE registry_providers;
      ALTER TABLE registry_providers_new RENAME TO registry_providers;
      ALTER TABLE registry_uploads_new RENAME TO registry_uploads;
      CREATE INDEX registry_providers_by_name ON registry_providers (name_lower, version_id);
      CREATE UNIQUE INDEX registry_providers_by_architecture ON registry_providers (version_id, name_lower, architecture);
      CREATE UNIQUE INDEX registry_providers_one_default ON registry_providers (version_id, name_lower) WHERE default_architecture = 1;
      CREATE INDEX registry_uploads_by_provider ON registry_uploads (provider_id);
      CREATE INDEX registry_uploads_by_expiry ON registry_uploads (expires_at);
    `,
  },
  {
    // The full-text index of search (search-index.ts): one document per box with a released
    // version, filled here from the term table (its words, the whole names with "-", "_" or "." left
    // out) and the current version's providers. Deleting a box (or its owner) cascades to it.
    version: 105,
    name: 'registry full-text search index',
    sql: `
      CREATE TABLE registry_search (
        rid INTEGER PRIMARY KEY,
        box_id TEXT NOT NULL UNIQUE REFERENCES registry_boxes(id) ON DELETE CASCADE,
        doc TEXT NOT NULL
      );
      -- Rows only (detail=none: no positions), prefix indexes for words of up to 8 characters;
      -- tokens are split at spaces only ("~", "-" and "_" are token characters, non-ASCII ones too).
      CREATE VIRTUAL TABLE registry_search_fts USING fts5(
        doc, content='registry_search', content_rowid='rid',
        tokenize="ascii tokenchars '~_-'", detail=none, prefix='1 2 3 4 5 6 7 8'
      );
      CREATE TRIGGER registry_search_inserted AFTER INSERT ON registry_search BEGIN
        INSERT INTO registry_search_fts (rowid, doc) VALUES (new.rid, new.doc);
      END;
      CREATE TRIGGER registry_search_deleted AFTER DELETE ON registry_search BEGIN
        INSERT INTO registry_search_fts (registry_search_fts, rowid, doc) VALUES ('delete', old.rid, old.doc);
      END;
      CREATE TRIGGER registry_search_updated AFTER UPDATE ON registry_search BEGIN
        INSERT INTO registry_search_fts (registry_search_fts, rowid, doc) VALUES ('delete', old.rid, old.doc);
        INSERT INTO registry_search_fts (rowid, doc) VALUES (new.rid, new.doc);
      END;
      INSERT INTO registry_search (box_id, doc)
      SELECT b.id, ltrim(COALESCE((SELECT group_concat(t.term, ' ') FROM registry_box_terms t
             WHERE t.box_id = b.id AND t.term NOT GLOB '*[-_.]*'), '')
        || COALESCE((SELECT group_concat(' ~p~' || p.name_lower || ' ~a~' || p.architecture
             || ' ~pa~' || p.name_lower || '~' || p.architecture, '') FROM registry_providers p
             WHERE p.version_id = b.current_version_id), ''))
      FROM registry_boxes b WHERE b.current_version_id IS NOT NULL;
    `,
    // A tsvector of the document's tokens as they are (no parser, no stemming), under a GIN index.
    postgres: `
      CREATE TABLE registry_search (
        box_id TEXT PRIMARY KEY REFERENCES registry_boxes(id) ON DELETE CASCADE,
        doc TEXT NOT NULL,
        lexemes tsvector GENERATED ALWAYS AS (array_to_tsvector(string_to_array(doc, ' '))) STORED
      );
      CREATE INDEX registry_search_lexemes ON registry_search USING GIN (lexemes);
      INSERT INTO registry_search (box_id, doc)
      SELECT b.id, ltrim(COALESCE((SELECT string_agg(t.term, ' ') FROM registry_box_terms t
             WHERE t.box_id = b.id AND t.term !~ '[-_.]'), '')
        || COALESCE((SELECT string_agg(' ~p~' || p.name_lower || ' ~a~' || p.architecture
             || ' ~pa~' || p.name_lower || '~' || p.architecture, '') FROM registry_providers p
             WHERE p.version_id = b.current_version_id), ''), ' ')
      FROM registry_boxes b WHERE b.current_version_id IS NOT NULL;
    `,
  },
];
