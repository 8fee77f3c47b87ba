# vault_rabbitmq_secret_backend, from the provider's documentation, against the harness's RabbitMQ
# (at its own path: the dev server mounts `rabbitmq`).
# needs: rabbitmq
# import: vault_rabbitmq_secret_backend.rabbitmq rabbitmq-backend
# import-ignore: description, username, password, verify_connection, disable_remount, connection_uri
variable "rabbitmq_url" {}
variable "rabbitmq_username" {}
variable "rabbitmq_password" { sensitive = true }

resource "vault_rabbitmq_secret_backend" "rabbitmq" {
  path           = "rabbitmq-backend"
  connection_uri = var.rabbitmq_url
  username       = var.rabbitmq_username
  password       = var.rabbitmq_password
}
