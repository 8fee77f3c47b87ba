# vault_policy and the vault_policy_document data source, from the provider's documentation.
# import: vault_policy.example dev-team
# import: vault_policy.from_document example_policy
# import-ignore: allow_overwrite
resource "vault_policy" "example" {
  name            = "dev-team"
  allow_overwrite = false

  policy = <<EOT
path "secret/my_app" {
  capabilities = ["update"]
}
EOT
}

data "vault_policy_document" "example" {
  rule {
    path         = "secret/*"
    capabilities = ["create", "read", "update", "delete", "list"]
    description  = "allow all on secrets"
  }
}

resource "vault_policy" "from_document" {
  name   = "example_policy"
  policy = data.vault_policy_document.example.hcl
}
