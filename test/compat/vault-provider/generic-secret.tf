# vault_generic_secret (resource and data source), from the provider's documentation: on the dev
# server's `secret/` (KV version 2), as in the documentation.
# import: vault_generic_secret.example secret/foo
# known-failure: GET sys/internal/ui/mounts/secret/foo answers 404 (the public service: the mount, type kv, options.version 2), so the provider takes secret/ for KV v1 and PUT secret/foo answers 404 "unsupported path: foo"
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
