# vault_database_secret_backend_static_role, from the provider's documentation (its three roles,
# each on its own existing user), against the harness's PostgreSQL.
# needs: postgres
# import: vault_database_secret_backend_static_role.period_role db-static/static-roles/my-period-role
# import: vault_database_secret_backend_static_role.schedule_role db-static/static-roles/my-schedule-role
variable "pg_url_template" {}
variable "pg_username" {}
variable "pg_password" { sensitive = true }

resource "vault_mount" "db" {
  path = "db-static"
  type = "database"
}

resource "vault_database_secret_backend_connection" "postgres" {
  backend       = vault_mount.db.path
  name          = "postgres"
  allowed_roles = ["*"]

  postgresql {
    connection_url = var.pg_url_template
    username       = var.pg_username
    password       = var.pg_password
  }
}

# configure a static role with period-based rotations
resource "vault_database_secret_backend_static_role" "period_role" {
  backend             = vault_mount.db.path
  name                = "my-period-role"
  db_name             = vault_database_secret_backend_connection.postgres.name
  username            = "example"
  rotation_period     = "3600"
  rotation_statements = ["ALTER USER \"{{name}}\" WITH PASSWORD '{{password}}';"]
}

# configure a static role with schedule-based rotations
resource "vault_database_secret_backend_static_role" "schedule_role" {
  backend             = vault_mount.db.path
  name                = "my-schedule-role"
  db_name             = vault_database_secret_backend_connection.postgres.name
  username            = "example-schedule"
  rotation_schedule   = "0 0 * * SAT"
  rotation_window     = "172800"
  rotation_statements = ["ALTER USER \"{{name}}\" WITH PASSWORD '{{password}}';"]
}

# configure a static role with a password (Vault 1.19+)
resource "vault_database_secret_backend_static_role" "password_role" {
  backend             = vault_mount.db.path
  name                = "my-password-role"
  db_name             = vault_database_secret_backend_connection.postgres.name
  username            = "example-password"
  password_wo         = "my-password"
  password_wo_version = 1
  rotation_period     = "3600"
  rotation_statements = ["ALTER USER \"{{name}}\" WITH PASSWORD '{{password}}';"]
}
