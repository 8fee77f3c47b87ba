# vault_database_secret_backend_connection, from the provider's documentation (its PostgreSQL
# example against the harness's PostgreSQL; rotation_schedule/rotation_window, scheduled root
# rotation of the enterprise edition, dropped).
# needs: postgres
# import: vault_database_secret_backend_connection.postgres db-conn/config/postgres
# import-ignore: verify_connection, postgresql
variable "pg_url_template" {}
variable "pg_username" {}
variable "pg_password" { sensitive = true }

resource "vault_mount" "db" {
  path = "db-conn"
  type = "database"
}

resource "vault_database_secret_backend_connection" "postgres" {
  backend       = vault_mount.db.path
  name          = "postgres"
  allowed_roles = ["dev", "prod"]

  postgresql {
    connection_url = var.pg_url_template
    username       = var.pg_username
    password       = var.pg_password
  }
}
