# vault_generic_secret (resource and data source), from the provider's documentation: on the dev
# server's `secret/` (KV version 2), as in the documentation.
# import: vault_generic_secret.example secret/foo
resource "vault_generic_secret" "example" {
  path = "secret/foo"

  data_json = <<EOT
{
  "foo":   "bar",
  "pizza": "cheese"
}
EOT
}

data "vault_generic_secret" "example" {
  path = vault_generic_secret.example.path
}

output "pizza" {
  value     = data.vault_generic_secret.example.data["pizza"]
  sensitive = true
}
