# vault_rabbitmq_secret_backend_role, from the provider's documentation, against the harness's
# RabbitMQ.
# needs: rabbitmq
# import: vault_rabbitmq_secret_backend_role.role rabbitmq-roles/roles/deploy
variable "rabbitmq_url" {}
variable "rabbitmq_username" {}
variable "rabbitmq_password" { sensitive = true }

resource "vault_rabbitmq_secret_backend" "rabbitmq" {
  path           = "rabbitmq-roles"
  connection_uri = var.rabbitmq_url
  username       = var.rabbitmq_username
  password       = var.rabbitmq_password
}

resource "vault_rabbitmq_secret_backend_role" "role" {
  backend = vault_rabbitmq_secret_backend.rabbitmq.path
  name    = "deploy"

  tags = "tag1,tag2"

  vhost {
    host      = "/"
    configure = ""
    read      = ".*"
    write     = ""
  }

  vhost_topic {
    vhost {
      topic = "amq.topic"
      read  = ".*"
      write = ""
    }

    host = "/"
  }
}
