# vault_database_secret_backend_role, from the provider's documentation, against the harness's
# PostgreSQL.
# needs: postgres
# import: vault_database_secret_backend_role.role db-role/roles/dev
variable "pg_url_template" {}
variable "pg_username" {}
variable "pg_password" { sensitive = true }

resource "vault_mount" "db" {
  path = "db-role"
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

resource "vault_database_secret_backend_role" "role" {
  backend             = vault_mount.db.path
  name                = "dev"
  db_name             = vault_database_secret_backend_connection.postgres.name
  creation_statements = ["CREATE ROLE \"{{name}}\" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}';"]
}
