import type { Migration } from '../storage/types';

/**
 * The catalog service's schema changes (versions 300-399); see storage/migrations.ts.
 *
 * Every write of the catalog takes the next value of one counter (catalog_meta 'index', the
 * public service's Raft index) and stamps it on the rows it changes (create_index, modify_index)
 * and on the tables it touches (catalog_tables), which is what blocking queries compare.
 * Lists are stored as JSON text; namespaced rows carry their namespace in `ns`.
 */
export const CATALOG_MIGRATIONS: readonly Migration[] = [
  {
    version: 300,
    name: 'catalog index, namespaces, ACLs, nodes, checks, sessions, KV',
    sql: `
      CREATE TABLE catalog_meta (name TEXT PRIMARY KEY, value BIGINT NOT NULL);
      INSERT INTO catalog_meta (name, value) VALUES ('index', 1);
      CREATE TABLE catalog_tables (name TEXT PRIMARY KEY, idx BIGINT NOT NULL);
      INSERT INTO catalog_tables (name, idx) VALUES ('acl', 1), ('namespaces', 1), ('nodes', 1), ('sessions', 1), ('kvs', 1);

      CREATE TABLE catalog_namespaces (
        name TEXT PRIMARY KEY,
        description TEXT NOT NULL DEFAULT '',
        policy_defaults TEXT NOT NULL DEFAULT '[]',
        role_defaults TEXT NOT NULL DEFAULT '[]',
        meta TEXT NOT NULL DEFAULT '{}',
        deleted_at BIGINT,
        create_index BIGINT NOT NULL,
        modify_index BIGINT NOT NULL
      );
      INSERT INTO catalog_namespaces (name, description, create_index, modify_index)
        VALUES ('default', 'Builtin Default Namespace', 1, 1);

      CREATE TABLE catalog_acl_policies (
        id TEXT PRIMARY KEY,
        ns TEXT NOT NULL,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        rules TEXT NOT NULL DEFAULT '',
        datacenters TEXT NOT NULL DEFAULT '[]',
        create_index BIGINT NOT NULL,
        modify_index BIGINT NOT NULL,
        UNIQUE (ns, name)
      );
      INSERT INTO catalog_acl_policies (id, ns, name, description, rules, create_index, modify_index)
        VALUES ('00000000-0000-0000-0000-000000000001', 'default', 'global-management',
                'Builtin Policy that grants unlimited access', '', 1, 1);

      CREATE TABLE catalog_acl_roles (
        id TEXT PRIMARY KEY,
        ns TEXT NOT NULL,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        policies TEXT NOT NULL DEFAULT '[]',
        service_identities TEXT NOT NULL DEFAULT '[]',
        node_identities TEXT NOT NULL DEFAULT '[]',
        create_index BIGINT NOT NULL,
        modify_index BIGINT NOT NULL,
        UNIQUE (ns, name)
      );

      CREATE TABLE catalog_acl_tokens (
        accessor_id TEXT PRIMARY KEY,
        secret_hash TEXT NOT NULL UNIQUE,
        ns TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        policies TEXT NOT NULL DEFAULT '[]',
        roles TEXT NOT NULL DEFAULT '[]',
        service_identities TEXT NOT NULL DEFAULT '[]',
        node_identities TEXT NOT NULL DEFAULT '[]',
        local INTEGER NOT NULL DEFAULT 0,
        auth_method TEXT,
        expiration_time BIGINT,
        create_time BIGINT NOT NULL,
        create_index BIGINT NOT NULL,
        modify_index BIGINT NOT NULL
      );
      CREATE INDEX catalog_acl_tokens_expiration ON catalog_acl_tokens (expiration_time);
      -- The anonymous token: what a request without a token acts as (its SecretID is "anonymous").
      INSERT INTO catalog_acl_tokens (accessor_id, secret_hash, ns, description, create_time, create_index, modify_index)
        VALUES ('00000000-0000-0000-0000-000000000002',
                '2f183a4e64493af3f377f745eda502363cd3e7ef6e4d266d444758de0a85fcc8',
                'default', 'Anonymous Token', 0, 1, 1);

      CREATE TABLE catalog_acl_auth_methods (
        ns TEXT NOT NULL,
        name TEXT NOT NULL,
        type TEXT NOT NULL,
        display_name TEXT NOT NULL DEFAULT '',
        description TEXT NOT NULL DEFAULT '',
        max_token_ttl BIGINT NOT NULL DEFAULT 0,
        token_locality TEXT NOT NULL DEFAULT '',
        config TEXT NOT NULL DEFAULT '{}',
        create_index BIGINT NOT NULL,
        modify_index BIGINT NOT NULL,
        PRIMARY KEY (ns, name)
      );

      CREATE TABLE catalog_acl_binding_rules (
        id TEXT PRIMARY KEY,
        ns TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        auth_method TEXT NOT NULL,
        selector TEXT NOT NULL DEFAULT '',
        bind_type TEXT NOT NULL,
        bind_name TEXT NOT NULL,
        create_index BIGINT NOT NULL,
        modify_index BIGINT NOT NULL
      );
      CREATE INDEX catalog_acl_binding_rules_method ON catalog_acl_binding_rules (ns, auth_method);

      CREATE TABLE catalog_nodes (
        name TEXT PRIMARY KEY,
        id TEXT NOT NULL DEFAULT '',
        address TEXT NOT NULL DEFAULT '',
        tagged_addresses TEXT NOT NULL DEFAULT '{}',
        meta TEXT NOT NULL DEFAULT '{}',
        create_index BIGINT NOT NULL,
        modify_index BIGINT NOT NULL
      );
      CREATE TABLE catalog_services (
        node TEXT NOT NULL REFERENCES catalog_nodes(name) ON DELETE CASCADE,
        id TEXT NOT NULL,
        name TEXT NOT NULL,
        tags TEXT NOT NULL DEFAULT '[]',
        address TEXT NOT NULL DEFAULT '',
        port INTEGER NOT NULL DEFAULT 0,
        meta TEXT NOT NULL DEFAULT '{}',
        create_index BIGINT NOT NULL,
        modify_index BIGINT NOT NULL,
        PRIMARY KEY (node, id)
      );
      CREATE TABLE catalog_checks (
        node TEXT NOT NULL REFERENCES catalog_nodes(name) ON DELETE CASCADE,
        check_id TEXT NOT NULL,
        name TEXT NOT NULL DEFAULT '',
        status TEXT NOT NULL,
        notes TEXT NOT NULL DEFAULT '',
        output TEXT NOT NULL DEFAULT '',
        service_id TEXT NOT NULL DEFAULT '',
        service_name TEXT NOT NULL DEFAULT '',
        create_index BIGINT NOT NULL,
        modify_index BIGINT NOT NULL,
        PRIMARY KEY (node, check_id)
      );

      CREATE TABLE catalog_sessions (
        id TEXT PRIMARY KEY,
        ns TEXT NOT NULL,
        name TEXT NOT NULL DEFAULT '',
        node TEXT NOT NULL,
        lock_delay BIGINT NOT NULL,
        behavior TEXT NOT NULL,
        ttl TEXT NOT NULL DEFAULT '',
        node_checks TEXT NOT NULL DEFAULT '[]',
        service_checks TEXT,
        expires_at BIGINT,
        create_index BIGINT NOT NULL,
        modify_index BIGINT NOT NULL
      );
      CREATE INDEX catalog_sessions_node ON catalog_sessions (node);
      CREATE INDEX catalog_sessions_expires ON catalog_sessions (expires_at);

      CREATE TABLE catalog_kv (
        ns TEXT NOT NULL,
        key TEXT NOT NULL,
        flags BIGINT NOT NULL DEFAULT 0,
        value TEXT,
        session TEXT,
        lock_index BIGINT NOT NULL DEFAULT 0,
        create_index BIGINT NOT NULL,
        modify_index BIGINT NOT NULL,
        PRIMARY KEY (ns, key)
      );
      CREATE INDEX catalog_kv_session ON catalog_kv (session);
      CREATE TABLE catalog_kv_lock_delays (
        ns TEXT NOT NULL,
        key TEXT NOT NULL,
        until BIGINT NOT NULL,
        PRIMARY KEY (ns, key)
      );
    `,
  },
  {
    version: 301,
    name: 'catalog: exact uint64 KV flags, sealed token secrets, templated policies',
    // KV flags are unsigned 64-bit (the Go client's locks use values above 2^63): kept as decimal
    // text, since neither BIGINT nor a JavaScript number holds them exactly.
    sql: `
      ALTER TABLE catalog_kv ADD COLUMN flags_u64 TEXT NOT NULL DEFAULT '0';
      UPDATE catalog_kv SET flags_u64 = CAST(flags AS TEXT);
      ALTER TABLE catalog_kv DROP COLUMN flags;
      ALTER TABLE catalog_kv RENAME COLUMN flags_u64 TO flags;
      ALTER TABLE catalog_acl_tokens ADD COLUMN secret_sealed TEXT;
      ALTER TABLE catalog_acl_tokens ADD COLUMN templated_policies TEXT NOT NULL DEFAULT '[]';
      ALTER TABLE catalog_acl_roles ADD COLUMN templated_policies TEXT NOT NULL DEFAULT '[]';
    `,
  },
  {
    version: 302,
    name: 'catalog: a committed index bump notifies the other servers (PostgreSQL)',
    // Any writer (a server, the CLI, a background job) announces the tables it stamped in its own
    // transaction, delivered at commit; SQLite has no such thing (its waiters poll), hence the override.
    sql: 'SELECT 1',
    postgres: `
      CREATE FUNCTION catalog_tables_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('hangar_catalog_tables', NEW.name);
        RETURN NULL;
      END $$;
      CREATE TRIGGER catalog_tables_notify AFTER UPDATE ON catalog_tables
        FOR EACH ROW EXECUTE FUNCTION catalog_tables_notify();
    `,
  },
  {
    version: 303,
    name: 'catalog: every field of services and checks (namespaces, weights, check definitions, TTL deadlines)',
    // SQLite cannot change a primary key in place: the two tables are rebuilt with the namespace in it.
    sql: `
      CREATE TABLE catalog_services_v2 (
        node TEXT NOT NULL REFERENCES catalog_nodes(name) ON DELETE CASCADE,
        ns TEXT NOT NULL DEFAULT 'default',
        id TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT '',
        tags TEXT NOT NULL DEFAULT '[]',
        address TEXT NOT NULL DEFAULT '',
        tagged_addresses TEXT NOT NULL DEFAULT '{}',
        port INTEGER NOT NULL DEFAULT 0,
        socket_path TEXT NOT NULL DEFAULT '',
        meta TEXT NOT NULL DEFAULT '{}',
        weights TEXT NOT NULL DEFAULT '{"Passing":1,"Warning":1}',
        enable_tag_override INTEGER NOT NULL DEFAULT 0,
        extra TEXT NOT NULL DEFAULT '{}',
        create_index BIGINT NOT NULL,
        modify_index BIGINT NOT NULL,
        PRIMARY KEY (node, ns, id)
      );
      INSERT INTO catalog_services_v2 (node, id, name, tags, address, port, meta, create_index, modify_index)
        SELECT node, id, name, tags, address, port, meta, create_index, modify_index FROM catalog_services;
      DROP TABLE catalog_services;
      ALTER TABLE catalog_services_v2 RENAME TO catalog_services;
      CREATE INDEX catalog_services_name ON catalog_services (name);

      CREATE TABLE catalog_checks_v2 (
        node TEXT NOT NULL REFERENCES catalog_nodes(name) ON DELETE CASCADE,
        ns TEXT NOT NULL DEFAULT 'default',
        check_id TEXT NOT NULL,
        name TEXT NOT NULL DEFAULT '',
        status TEXT NOT NULL,
        notes TEXT NOT NULL DEFAULT '',
        output TEXT NOT NULL DEFAULT '',
        service_id TEXT NOT NULL DEFAULT '',
        service_name TEXT NOT NULL DEFAULT '',
        type TEXT NOT NULL DEFAULT '',
        interval TEXT NOT NULL DEFAULT '',
        timeout TEXT NOT NULL DEFAULT '',
        exposed_port INTEGER NOT NULL DEFAULT 0,
        definition TEXT NOT NULL DEFAULT '{}',
        thresholds TEXT NOT NULL DEFAULT '{}',
        ttl_deadline BIGINT,
        create_index BIGINT NOT NULL,
        modify_index BIGINT NOT NULL,
        PRIMARY KEY (node, ns, check_id)
      );
      INSERT INTO catalog_checks_v2 (node, check_id, name, status, notes, output, service_id, service_name, create_index, modify_index)
        SELECT node, check_id, name, status, notes, output, service_id, service_name, create_index, modify_index FROM catalog_checks;
      DROP TABLE catalog_checks;
      ALTER TABLE catalog_checks_v2 RENAME TO catalog_checks;
      CREATE INDEX catalog_checks_service ON catalog_checks (service_name);
      CREATE INDEX catalog_checks_ttl ON catalog_checks (ttl_deadline);
    `,
  },
  {
    version: 304,
    name: 'catalog: the servers, each a node with a stable node ID',
    // One row per server name: its node ID stays across restarts; seen_at is its heartbeat (engine clock).
    sql: `
      CREATE TABLE catalog_servers (
        name TEXT PRIMARY KEY,
        node_id TEXT NOT NULL,
        address TEXT NOT NULL,
        started_at BIGINT NOT NULL,
        seen_at BIGINT NOT NULL
      );
    `,
  },
  {
    version: 305,
    name: 'catalog: when each check turned critical (DeregisterCriticalServiceAfter)',
    // Null while the check is not critical; checks critical before this migration get the time the
    // reaper first sees them (catalog/checker.ts), so none is removed at once by an upgrade.
    sql: 'ALTER TABLE catalog_checks ADD COLUMN critical_since BIGINT;',
  },
];
