# vault_database_secrets_mount, from the provider's documentation: its PostgreSQL connection and
# role against the harness's PostgreSQL (no SQL Server here; plugin_version, rotation_schedule and
# rotation_window dropped: a pinned external plugin version and scheduled root rotation are not what
# a built-in plugin or the community edition have). skip_static_role_import_rotation dropped too: the
# provider sends and reads it only when the server reports an Enterprise version (1.19+ with "+ent"), so
# against the community edition, and Hangar, which reports none, it plans `false -> true` after every
# apply; Hangar stores and returns the field for clients that send it (test/engine/secrets/database.test.ts).
# needs: postgres
# import: vault_database_secrets_mount.db db-mount
# import-ignore: engine_count, postgresql
variable "pg_url_template" {}
variable "pg_username" {}
variable "pg_password" { sensitive = true }

resource "vault_database_secrets_mount" "db" {
  path = "db-mount"

  postgresql {
    name                             = "db2"
    username                         = var.pg_username
    password                         = var.pg_password
    connection_url                   = var.pg_url_template
    verify_connection                = true
    allowed_roles                    = ["dev2"]
    password_policy                  = "default"
  }
}

resource "vault_database_secret_backend_role" "dev2" {
  name    = "dev2"
  backend = vault_database_secrets_mount.db.path
  db_name = vault_database_secrets_mount.db.postgresql[0].name
  creation_statements = [
    "CREATE ROLE \"{{name}}\" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}';",
    "GRANT SELECT ON ALL TABLES IN SCHEMA public TO \"{{name}}\";",
  ]
}
